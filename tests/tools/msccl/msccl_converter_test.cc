// The MSCCL-IR -> Chakra converter: byte-identical to the reference converter's output on the
// real custom ring all-reduce, and the dependency rules on small hand-written algorithms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/graph.h"
#include "core/error.h"
#include "support/test_support.h"
#include "tools/msccl/msccl_converter.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

TEST(MscclConverter, ReferenceRingAllReduceIsByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = ref / "traces" / "custom_collectives" / "custom_ring_allreduce_8npus_1MB";
  const auto traces =
      tools::convert_msccl(file_bytes(dir / "custom_allreduce.xml"), "custom_allreduce.xml", {"allreduce", 1 << 20});
  ASSERT_EQ(traces.size(), 8u);
  for (const auto& [gpu, trace] : traces) {
    EXPECT_EQ(chakra::serialize_trace(trace), file_bytes(dir / ("custom_allreduce." + std::to_string(gpu) + ".et")))
        << "rank " << gpu;
  }
}

// A two-block algorithm with every step type. Block 0: send, rrc, nop (waiting on block 1's
// step 0), send. Block 1: recv. Ids: tb0 s0 -> 0, s1 -> 1 (recv) + 2 (comp), s2 (nop) -> 3 (no
// node), s3 -> 4; tb1 s0 -> 5. Chunk = 1000 / 4 = 250 B, x cnt.
constexpr const char* kAlgo =
    R"(<algo name="t" proto="Simple" nchannels="1" nchunksperloop="4" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="4" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="3">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="nop" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
      <step s="3" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)";

TEST(MscclConverter, StepsDependenciesAndSizes) {
  const auto traces = tools::convert_msccl(kAlgo, "t.xml", {"allreduce", 1000});
  ASSERT_EQ(traces.size(), 1u);
  const chakra::Trace& t = traces.at(0);
  ASSERT_EQ(t.nodes.size(), 5u);
  EXPECT_EQ(t.metadata.version(), "");
  ASSERT_EQ(t.metadata.attr_size(), 3);
  EXPECT_EQ(t.metadata.attr(2).string_val(), "allreduce");
  // send (id 0, 500 B)
  EXPECT_EQ(t.nodes[0].id(), 0u);
  EXPECT_EQ(t.nodes[0].name(), "COMM_SEND_NODE_tb0_step0");
  EXPECT_EQ(t.nodes[0].attr(1).int64_val(), 500);
  EXPECT_EQ(t.nodes[0].attr(3).int32_val(), 3);  // tag = channel
  // rrc: recv 1 after the send, comp 2 after the recv: 3 x floor(250 / 50) / 1000 = 0 us
  EXPECT_EQ(t.nodes[1].id(), 1u);
  EXPECT_THAT(t.nodes[1].data_deps(), ::testing::ElementsAre(0u));
  EXPECT_EQ(t.nodes[2].id(), 2u);
  EXPECT_EQ(t.nodes[2].name(), "COMP_NODE_tb0_step1");
  EXPECT_THAT(t.nodes[2].data_deps(), ::testing::ElementsAre(1u));
  // s3 skips the nop: it inherits the nop's dependency on tb1 step 0 (id 5), then the rrc's comp.
  EXPECT_EQ(t.nodes[3].id(), 4u);
  EXPECT_THAT(t.nodes[3].data_deps(), ::testing::ElementsAre(5u, 2u));
  EXPECT_EQ(t.nodes[4].id(), 5u);
  EXPECT_EQ(t.nodes[4].name(), "COMM_RECV_NODE_tb1_step0");
  EXPECT_NO_THROW(chakra::Graph::build(t, "t"));
}

TEST(MscclConverter, Errors) {
  EXPECT_THAT([] { tools::convert_msccl("<algo><gpu", "bad.xml", {"allreduce", 8}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("bad.xml: byte")));
  EXPECT_THAT([] { tools::convert_msccl(kAlgo, "t.xml", {"allmagic", 8}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("\"allmagic\" is not a collective")));
  std::string unknown = kAlgo;
  unknown.replace(unknown.find("type=\"nop\""), 10, "type=\"cpy\"");
  EXPECT_THAT([&] { tools::convert_msccl(unknown, "t.xml", {"allreduce", 8}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("step type \"cpy\" is not supported")));
}

TEST(MscclConverter, CommandLine) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("msccl_cli");
  const auto xml = ref / "traces" / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce.xml";
  const CommandResult r = run_binary({"chakra", "msccl", xml.string(), "--coll-size", "1048576", "--collective",
                                      "allreduce", "--out", (dir / "algo").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_bytes(dir / "algo.3.et"), file_bytes(xml.parent_path() / "custom_allreduce.3.et"));
}

}  // namespace
}  // namespace chakrasim::test
