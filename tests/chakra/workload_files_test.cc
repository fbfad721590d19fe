// Covers load_workload (chakra/workload_files.h): one Graph per rank, byte-identical rank files
// sharing one parsed Graph, and the errors for missing or bad rank files.
#include "chakra/workload_files.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::chakra {
namespace {

using ::testing::HasSubstr;

using ::chakrasim::test::error_of;

Trace collective_trace(std::uint64_t bytes) {
  TraceBuilder b;
  b.collective("ar", CommType::kAllReduce, bytes);
  return b.trace();
}

// Writes PREFIX.0.et .. PREFIX.3.et in a fresh directory: ranks 0, 1, 3 identical, rank 2 not.
std::string write_four_ranks(const std::string& name) {
  const std::string prefix = (test::temp_dir(name) / "wl").string();
  write_trace(rank_path(prefix, 0), collective_trace(1024));
  write_trace(rank_path(prefix, 1), collective_trace(1024));
  write_trace(rank_path(prefix, 2), collective_trace(2048));
  write_trace(rank_path(prefix, 3), collective_trace(1024));
  return prefix;
}

TEST(LoadWorkload, IdenticalFilesShareOneGraph) {
  const std::string prefix = write_four_ranks("workload_share");
  const auto graphs = load_workload(prefix, 4);
  ASSERT_EQ(graphs.size(), 4u);
  for (const auto& g : graphs) ASSERT_NE(g, nullptr);
  EXPECT_EQ(graphs[0].get(), graphs[1].get());
  EXPECT_EQ(graphs[0].get(), graphs[3].get());
  EXPECT_NE(graphs[0].get(), graphs[2].get());
  EXPECT_EQ(graphs[0]->attrs(0).comm_size, 1024u);
  EXPECT_EQ(graphs[2]->attrs(0).comm_size, 2048u);
  // A shared graph keeps the name of the first file that produced it.
  EXPECT_EQ(graphs[0]->source(), rank_path(prefix, 0));
  EXPECT_EQ(graphs[2]->source(), rank_path(prefix, 2));
}

TEST(LoadWorkload, FilesAlikeInTheirFirstBytesAreToldApartByTheRest) {
  // Files of one size whose first 64 KiB are the same (a long run of compute nodes) and which
  // differ only in their last node: those alike share a graph, the other does not.
  auto trace = [](std::uint64_t last_bytes) {
    TraceBuilder b;
    for (int i = 0; i < 5000; ++i) b.comp("a compute node with a long name to fill the first bytes", 1);
    b.collective("ar", CommType::kAllReduce, last_bytes);
    return b.trace();
  };
  const std::string prefix = (test::temp_dir("workload_same_head") / "wl").string();
  write_trace(rank_path(prefix, 0), trace(1024));
  write_trace(rank_path(prefix, 1), trace(2048));
  write_trace(rank_path(prefix, 2), trace(1024));
  ASSERT_EQ(std::filesystem::file_size(rank_path(prefix, 0)), std::filesystem::file_size(rank_path(prefix, 1)));
  ASSERT_GT(std::filesystem::file_size(rank_path(prefix, 0)), 64u * 1024);
  const auto graphs = load_workload(prefix, 3);
  EXPECT_EQ(graphs[0].get(), graphs[2].get());
  EXPECT_NE(graphs[0].get(), graphs[1].get());
  EXPECT_EQ(graphs[1]->attrs(5000).comm_size, 2048u);
}

TEST(LoadWorkload, TheLowestRanksErrorIsReportedAsAnOrderedLoopWouldReportIt) {
  // Ranks are read and parsed on all cores, in phases; the error still names the first rank
  // that has one: rank 1's corrupt bytes, not rank 3's missing file; and rank 2's corrupt bytes
  // when rank 1 is well (though rank 2 is a copy of nothing that was parsed first).
  const std::string prefix = write_four_ranks("workload_error_order");
  std::ofstream(rank_path(prefix, 1), std::ios::binary | std::ios::trunc) << std::string("\x05\x01", 2);
  std::filesystem::remove(rank_path(prefix, 3));
  EXPECT_THAT(error_of([&] { load_workload(prefix, 4); }), HasSubstr(rank_path(prefix, 1) + ": byte 0"));
  write_trace(rank_path(prefix, 1), collective_trace(1024));
  std::ofstream(rank_path(prefix, 2), std::ios::binary | std::ios::trunc) << std::string("\x05\x01", 2);
  EXPECT_THAT(error_of([&] { load_workload(prefix, 4); }), HasSubstr(rank_path(prefix, 2) + ": byte 0"));
  write_trace(rank_path(prefix, 2), collective_trace(2048));
  EXPECT_THAT(error_of([&] { load_workload(prefix, 4); }), HasSubstr("cannot open the workload file for rank 3"));
}

// A file for a rank the network does not have means the two disagree: an error naming it.
TEST(LoadWorkload, MoreRankFilesThanNpusIsAnError) {
  const std::string prefix = write_four_ranks("workload_fewer");
  try {
    load_workload(prefix, 2);
    FAIL() << "expected an error";
  } catch (const chakrasim::Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(rank_path(prefix, 2)));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the network has 2 NPUs"));
  }
}

TEST(LoadWorkload, SameContentDifferentIdsAreDifferentGraphs) {
  // Per-rank ids (as the microbenchmark scripts write them) make the files differ.
  const std::string prefix = (test::temp_dir("workload_ids") / "wl").string();
  for (std::size_t r = 0; r < 2; ++r) {
    TraceBuilder b;
    b.set_next_id(r);
    b.collective("ar", CommType::kAllReduce, 1024);
    write_trace(rank_path(prefix, r), b.trace());
  }
  const auto graphs = load_workload(prefix, 2);
  EXPECT_NE(graphs[0].get(), graphs[1].get());
  EXPECT_EQ(graphs[0]->id(0), 0u);
  EXPECT_EQ(graphs[1]->id(0), 1u);
}

TEST(LoadWorkload, RanksThatDifferOnlyInPeersShareTheirStructure) {
  // Four ranks of a pipeline: each computes, sends to the next rank and receives from the one
  // before. Ranks 0-2 differ only in their peers and groups; rank 3 computes longer. The files
  // all differ, so each rank has its own graph, but the first three keep one copy of the nodes,
  // durations and dependencies, and of their equal attribute records.
  const std::string prefix = (test::temp_dir("workload_structure") / "wl").string();
  for (std::int32_t r = 0; r < 4; ++r) {
    TraceBuilder b;
    b.comp("fwd", r == 3 ? 20 : 10);
    b.send("to next", (r + 1) % 4, 7, 1024);
    b.recv("from previous", (r + 3) % 4, 7, 1024);
    b.collective("ar", CommType::kAllReduce, 4096);
    b.at(3).attr(make_string("pg_name", std::to_string(r + 1)));
    write_trace(rank_path(prefix, r), b.trace());
  }
  const auto graphs = load_workload(prefix, 4);
  for (std::size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(graphs[r]->attrs(1).comm_dst, static_cast<std::int64_t>((r + 1) % 4));
    EXPECT_EQ(graphs[r]->string(graphs[r]->attrs(3).pg_name), std::to_string(r + 1));
    EXPECT_EQ(graphs[r]->source(), rank_path(prefix, r));
  }
  EXPECT_NE(graphs[0].get(), graphs[1].get());
  EXPECT_EQ(&graphs[0]->name(0), &graphs[1]->name(0));  // one copy of the structure
  EXPECT_EQ(&graphs[0]->name(0), &graphs[2]->name(0));
  EXPECT_NE(&graphs[0]->name(0), &graphs[3]->name(0));
  EXPECT_EQ(graphs[3]->duration_micros(0), 20u);
  // Of ranks 0-2, the one parsed first keeps its own records; the other two took its structure
  // and their records are in its pool, each distinct one once (which rank is first depends on
  // the loading threads). The all-reduce's record is the same in all three (its group at the
  // same string index, each rank's own string there), so two hold it at one address; the sends'
  // differ in their peer, so none do.
  const std::set<const OpAttrs*> all_reduces = {&graphs[0]->attrs(3), &graphs[1]->attrs(3), &graphs[2]->attrs(3)};
  EXPECT_EQ(all_reduces.size(), 2u);
  const std::set<const OpAttrs*> sends = {&graphs[0]->attrs(1), &graphs[1]->attrs(1), &graphs[2]->attrs(1)};
  EXPECT_EQ(sends.size(), 3u);
  EXPECT_EQ(graphs[2]->string(graphs[2]->attrs(3).pg_name), "3");
}

TEST(LoadWorkload, MissingRankZeroExplainsThePrefix) {
  const std::string prefix = (test::temp_dir("workload_none") / "absent").string();
  const std::string msg = error_of([&] { load_workload(prefix, 4); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 0)));
  EXPECT_THAT(msg, HasSubstr("rank 0 does not exist"));
  EXPECT_THAT(msg, HasSubstr("PREFIX.<rank>.et"));
}

TEST(LoadWorkload, MissingRankTwoNamesThePathAndTheRankRange) {
  const std::string prefix = write_four_ranks("workload_missing2");
  std::filesystem::remove(rank_path(prefix, 2));
  const std::string msg = error_of([&] { load_workload(prefix, 4); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 2)));
  EXPECT_THAT(msg, HasSubstr("rank 2"));
  EXPECT_THAT(msg, HasSubstr("4 NPUs"));
  EXPECT_THAT(msg, HasSubstr("ranks 0 to 3"));
}

TEST(LoadWorkload, MoreRanksThanFilesFailsOnTheFirstMissingRank) {
  const std::string prefix = write_four_ranks("workload_more");
  const std::string msg = error_of([&] { load_workload(prefix, 8); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 4)));
  EXPECT_THAT(msg, HasSubstr("ranks 0 to 7"));
}

TEST(LoadWorkload, RankFileThatIsADirectoryIsAnErrorNamingThePath) {
  // The stream opens a directory but cannot read it: expect chakrasim::Error naming the path,
  // not a std::ios_base::failure escaping from the read.
  const std::string prefix = write_four_ranks("workload_dir");
  std::filesystem::remove(rank_path(prefix, 1));
  std::filesystem::create_directories(rank_path(prefix, 1));
  const std::string msg = error_of([&] { load_workload(prefix, 4); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 1) + ": is a directory; expected the Chakra trace of rank 1"));
}

TEST(LoadWorkload, ParseAndGraphErrorsNameTheRankFile) {
  const std::string prefix = write_four_ranks("workload_bad");
  {
    std::ofstream out(rank_path(prefix, 3), std::ios::binary | std::ios::trunc);
    out << "\x07\x0a\x05";  // truncated metadata
  }
  std::string msg = error_of([&] { load_workload(prefix, 4); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 3) + ": byte 0"));
  EXPECT_THAT(msg, HasSubstr("truncated"));

  TraceBuilder b;
  b.collective("ar", CommType::kAllReduce, 1, {77});
  write_trace(rank_path(prefix, 3), b.trace());
  msg = error_of([&] { load_workload(prefix, 4); });
  EXPECT_THAT(msg, HasSubstr(rank_path(prefix, 3) + ": node 0 (\"ar\") has a data dependency on node 77"));
}

TEST(LoadWorkload, ReferenceMicrobenchmarkLoads) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::string prefix = (ref / "traces" / "microbenchmarks" / "all_to_all" / "16npus_1MB" / "all_to_all").string();
  const auto graphs = load_workload(prefix, 16);
  ASSERT_EQ(graphs.size(), 16u);
  for (std::size_t r = 0; r < 16; ++r) {
    ASSERT_EQ(graphs[r]->size(), 1u);
    EXPECT_EQ(graphs[r]->id(0), r);  // ids continue across ranks, so no sharing here
    EXPECT_EQ(graphs[r]->attrs(0).comm_type, static_cast<std::int64_t>(CommType::kAllToAll));
    EXPECT_EQ(graphs[r]->attrs(0).comm_size, 1048576u);
  }
}

}  // namespace
}  // namespace chakrasim::chakra
