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

// The reduction's bandwidth is an option: at 0.25 GB/s the rrc step's 250 B take
// 3 x floor(250 / 0.25) = 3000 ns = 3 us (at the reference's 50 GB/s: 3 x 5 ns, written as 0 us).
TEST(MscclConverter, ReductionBandwidthIsAnOption) {
  EXPECT_EQ(tools::convert_msccl(kAlgo, "t.xml", {"allreduce", 1000}).at(0).nodes[2].duration_micros(), 0u);
  EXPECT_EQ(tools::convert_msccl(kAlgo, "t.xml", {"allreduce", 1000, 0.25}).at(0).nodes[2].duration_micros(), 3u);
}

// What an algorithm ET was converted for is read back from it: kAlgo has 4 chunks, and its first
// message (cnt 2) of 500 B makes chunks of 250 B, 1000 B in all. An all-gather's chunk is the
// whole size. An ET without the embedded XML does not say.
TEST(MscclConverter, ConvertedSizeIsReadBack) {
  const auto ar = tools::msccl_converted_for(tools::convert_msccl(kAlgo, "t.xml", {"allreduce", 1000}).at(0), 0);
  ASSERT_TRUE(ar.has_value());
  EXPECT_EQ(ar->chunks, 4u);
  EXPECT_EQ(ar->chunk_bytes, 250u);
  EXPECT_EQ(ar->collective_bytes(), 1000u);
  const auto ag = tools::msccl_converted_for(tools::convert_msccl(kAlgo, "t.xml", {"allgather", 4096}).at(0), 0);
  ASSERT_TRUE(ag.has_value());
  EXPECT_EQ(ag->chunk_bytes, 4096u);
  EXPECT_EQ(ag->collective_bytes(), 4096u);
  EXPECT_FALSE(tools::msccl_converted_for(chakra::Trace{}, 0).has_value());
}

// Two GPUs swap a chunk: gpu 0 sends then receives, gpu 1 receives then sends.
constexpr const char* kSwap =
    R"(<algo name="swap" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0"><tb id="0" send="1" recv="1" chan="0">
    <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    <step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
  </tb></gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0"><tb id="0" send="0" recv="0" chan="0">
    <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
  </tb></gpu>
</algo>)";

// An algorithm converted for 64 MiB applied to a 1 MiB all-reduce runs the 64 MiB messages (the
// reference's behaviour, kept); run warns, naming both sizes and the command that fixes it, and
// is silent when the sizes agree.
TEST(MscclConverter, RunWarnsWhenTheWorkloadSizeDiffers) {
  const auto dir = temp_dir("msccl_size_warning");
  write_bytes(dir / "swap.xml", kSwap);
  const std::string algo = (dir / "algo").string();
  const CommandResult c = run_binary({"chakra", "msccl", (dir / "swap.xml").string(), "--coll-size", "64MiB",
                                      "--collective", "all-reduce", "--out", algo});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  write_bytes(dir / "system.json", R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": 1, "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "collective-optimization": "baseline", "local-mem-bw": 50,
    "all-reduce-implementation-custom": [")" +
                                       algo + R"("]})");
  write_bytes(dir / "network.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
    const std::string prefix = (dir / ("ar" + std::to_string(bytes))).string();
    for (int r = 0; r < 2; ++r) {
      chakra::write_trace(chakra::rank_path(prefix, r), single_collective(chakra::CommType::kAllReduce, bytes));
    }
    const CommandResult r = run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(),
                                        "--network", (dir / "network.yml").string(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (bytes == (std::uint64_t{64} << 20)) {
      EXPECT_EQ(r.err.find("converted for"), std::string::npos) << r.err;
      continue;
    }
    EXPECT_THAT(r.err, HasSubstr("the custom all-reduce was converted for 64.0 MiB (67108864 B), but NPU 0's "
                                 "all-reduce node 0"));
    EXPECT_THAT(r.err, HasSubstr("has comm_size 1.0 MiB (1048576 B)"));
    EXPECT_THAT(r.err, HasSubstr("--collective allreduce --coll-size 1048576 --out " + algo));
  }
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
