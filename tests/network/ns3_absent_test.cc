// A build without ns-3 (libns3-dev missing, or CHAKRASIM_NS3=OFF) has no ns3 backend, and asking
// for it says why rather than "unknown".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "network/network.h"

namespace chakrasim::network {
namespace {

TEST(Ns3Absent, AskingForItSaysTheBuildHasNoNs3) {
  try {
    find_backend("ns3");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("network backend \"ns3\" is not available: this chakrasim was built "
                                               "without ns-3"));
  }
}

}  // namespace
}  // namespace chakrasim::network
