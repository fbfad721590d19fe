// `chakrasim nccl-tests`: nccl-tests' command line and table, and its errors.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(NcclTestsCommand, PrintsASweepAsNcclTestsDoes) {
  // K is 1024 as nccl-tests reads it: 1K, 2K, 4K.
  const CommandResult r = run_binary({"nccl-tests", "all_reduce", "-b", "1K", "-e", "4K", "-f", "2", "--gpu", "H100",
                                      "--gpus-per-node", "8", "--nodes", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("all_reduce on 1 node(s) x 8 H100"));
  EXPECT_THAT(r.out, HasSubstr("        1024           256     float     sum      -1"));
  EXPECT_THAT(r.out, HasSubstr("        2048           512     float     sum      -1"));
  EXPECT_THAT(r.out, HasSubstr("        4096          1024     float     sum      -1"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("        8192  ")));
  EXPECT_THAT(r.out, HasSubstr("Ring/LL\n"));
  // NCCL_ALGO / NCCL_PROTO as options; several nodes name their NICs.
  const CommandResult forced = run_binary({"nccl-tests", "all_gather", "-b", "1M", "-e", "1M", "--nodes", "2", "--nic",
                                           "ndr400", "--algo", "Ring", "--proto", "Simple"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.out, HasSubstr("8 x ndr400 NICs per node"));
  EXPECT_THAT(forced.out, HasSubstr("Ring/Simple\n"));
  // nccl-tests' redop and root columns: send/receive runs "sum" with no root, broadcast "none"
  // from root 0.
  const CommandResult sendrecv = run_binary({"nccl-tests", "sendrecv", "-b", "1K", "-e", "1K"});
  EXPECT_THAT(sendrecv.out, HasSubstr("        1024           256     float     sum      -1"));
  const CommandResult broadcast = run_binary({"nccl-tests", "broadcast", "-b", "1K", "-e", "1K"});
  EXPECT_THAT(broadcast.out, HasSubstr("        1024           256     float    none       0"));
}

TEST(NcclTestsCommand, OnMi300xsRcclsMscclSchedulesTakeTheirSizes) {
  // RCCL's all-pairs schedules (msccl.h): LL from 1 KiB, Simple from 512 KiB to 16 MiB; RCCL's
  // own ring below and above. In doubles 1 KiB is too few elements for the schedule's chunks.
  const CommandResult r =
      run_binary({"nccl-tests", "all_reduce", "-b", "512", "-e", "32M", "-f", "2", "--gpu", "MI300X"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(RCCL's MSCCL schedules first)"));
  const auto row = [&](const std::string& size) {
    const std::size_t at = r.out.find("\n" + size);
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_THAT(row("         512"), HasSubstr("Ring/LL"));
  EXPECT_THAT(row("        1024"), HasSubstr("MSCCL/LL"));
  EXPECT_THAT(row("      524288"), HasSubstr("MSCCL/Simple"));
  EXPECT_THAT(row("    16777216"), HasSubstr("MSCCL/Simple"));
  EXPECT_THAT(row("    33554432"), HasSubstr("Ring/Simple"));
  const CommandResult doubles =
      run_binary({"nccl-tests", "all_reduce", "-b", "1K", "-e", "1K", "-d", "double", "--gpu", "MI300X"});
  EXPECT_THAT(doubles.out, HasSubstr("Ring/LL\n"));
  // NCCL_ALGO without MSCCL leaves RCCL its own algorithms.
  const CommandResult ring =
      run_binary({"nccl-tests", "all_reduce", "-b", "1M", "-e", "1M", "--gpu", "MI300X", "--algo", "Ring"});
  EXPECT_THAT(ring.out, ::testing::Not(HasSubstr("MSCCL")));  // nor does the table's head say it
}

TEST(NcclTestsCommand, SystemAndNetworkFilesReplaceThePresets) {
  // A node of 4 GPUs on a 200 GB/s switch, 2 nodes on 25 GB/s NICs; the system file asks for
  // rings with Simple. The ring is bound by the NICs: 4 x 25 x 0.96 = 96 GB/s busbw, less the
  // latency at 1 GiB.
  const auto dir = temp_dir("nccl_tests_files");
  write_bytes(dir / "net.yml", "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\n"
                               "bandwidth: [ 186.264515, 23.283064 ]\nlatency: [ 250, 1500 ]\n");
  write_bytes(dir / "sys.json", R"({"preferred-dataset-splits": 1, "nccl-gpu": "A100", "nccl-algo": "Ring",
    "nccl-proto": "Simple"})");
  const CommandResult r = run_binary({"nccl-tests", "all_reduce", "-b", "1G", "-e", "1G", "--system",
                                      (dir / "sys.json").string(), "--network", (dir / "net.yml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("all_reduce on 2 node(s) x 4 A100, 4 x hdr200 NICs per node"));
  EXPECT_THAT(r.out, HasSubstr("Ring/Simple\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("  9[56]\\.[0-9][0-9]    N/A"));
  const CommandResult missing = run_binary({"nccl-tests", "all_reduce", "--network", (dir / "none.yml").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("none.yml"));
  // The command line's machine and the files' must agree: neither silently wins.
  const CommandResult nodes =
      run_binary({"nccl-tests", "all_reduce", "--nodes", "4", "--network", (dir / "net.yml").string()});
  EXPECT_EQ(nodes.exit_code, 1);
  EXPECT_THAT(nodes.err, HasSubstr("--nodes: 4; " + (dir / "net.yml").string() + "'s other dimensions: 2"));
  write_bytes(dir / "eight.json", R"({"preferred-dataset-splits": 1, "nccl-gpu": "A100", "nccl-gpus-per-node": 8})");
  const CommandResult gpus = run_binary(
      {"nccl-tests", "all_reduce", "--system", (dir / "eight.json").string(), "--network", (dir / "net.yml").string()});
  EXPECT_EQ(gpus.exit_code, 1);
  EXPECT_THAT(gpus.err, HasSubstr("eight.json's nccl-gpus-per-node: 8; " + (dir / "net.yml").string() +
                                  "'s first dimension: 4; expected the same"));
  const CommandResult same = run_binary({"nccl-tests", "all_reduce", "-e", "8", "--nodes", "2", "--gpus-per-node", "4",
                                         "--network", (dir / "net.yml").string()});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  // A key the system file has that nothing reads is said, as `run` says it (a misspelt nccl-gpu
  // would leave the preset's H100 without a word).
  write_bytes(dir / "typo.json", R"({"preferred-dataset-splits": 1, "nccl-gpuu": "B200"})");
  const CommandResult typo =
      run_binary({"nccl-tests", "all_reduce", "-e", "8", "--system", (dir / "typo.json").string()});
  EXPECT_EQ(typo.exit_code, 0) << typo.err;
  EXPECT_THAT(typo.err, HasSubstr("typo.json: unknown key \"nccl-gpuu\" ignored"));
  EXPECT_THAT(typo.err, Not(HasSubstr("local-mem-bw")));  // the system layer's own defaults are not this command's
  // Links next to 0 GB/s leave no algorithm a time: said so, not blamed on --algo.
  write_bytes(dir / "slow.yml", "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\n"
                                "bandwidth: [ 1e-9, 1e-9 ]\nlatency: [ 250, 1500 ]\n");
  const CommandResult slow = run_binary({"nccl-tests", "all_reduce", "--network", (dir / "slow.yml").string()});
  EXPECT_EQ(slow.exit_code, 1);
  EXPECT_THAT(slow.err, HasSubstr("no finite time; check the links' bandwidths"));
}

TEST(NcclTestsCommand, AMachinesOwnCalibrationReplacesTheModelsConstants) {
  // 64 MiB NVLS all-reduce on 8 H100s, without NVLS's fixed cost per chunk: 8 loops of 8 MiB at
  // 297.6 GB/s (28.19 us each), one more to fill, after 25 us: 278.69 us (321.89 with it).
  const std::vector<std::string> nvls = {"nccl-tests", "all_reduce", "-b", "64M", "-e", "64M"};
  EXPECT_THAT(run_binary(nvls).out, HasSubstr("321.89"));
  std::vector<std::string> free_chunks = nvls;
  free_chunks.insert(free_chunks.end(), {"--nvls-chunk-us", "0"});
  const CommandResult flag = run_binary(free_chunks);
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_THAT(flag.out, HasSubstr("278.69"));
  // The same from a system file's key.
  const auto dir = temp_dir("nccl_tests_calibration");
  write_bytes(dir / "sys.json", R"({"preferred-dataset-splits": 1, "nccl-nvls-chunk-us": 0})");
  std::vector<std::string> from_file = nvls;
  from_file.insert(from_file.end(), {"--system", (dir / "sys.json").string()});
  EXPECT_THAT(run_binary(from_file).out, HasSubstr("278.69"));
  // Rings at half of NVLink's 450 GB/s: busbw 225 less the latency's share at 8 GiB.
  const CommandResult ring =
      run_binary({"nccl-tests", "all_reduce", "-b", "8G", "-e", "8G", "--algo", "Ring", "--ring-efficiency", "0.5"});
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_THAT(ring.out, ::testing::ContainsRegex("  22[45]\\.[0-9][0-9]    N/A"));
  // A tree across nodes without its messages' cost is faster.
  const std::vector<std::string> tree = {"nccl-tests", "all_reduce", "-b",     "4M",   "-e",      "4M",
                                         "--nodes",    "4",          "--algo", "Tree", "--proto", "LL128"};
  std::vector<std::string> no_messages = tree;
  no_messages.insert(no_messages.end(), {"--tree-message-us", "0"});
  EXPECT_NE(run_binary(tree).out, run_binary(no_messages).out);
  // A pair across two nodes through one NDR NIC at 0.8 of its 50 GB/s: 40, less the latency's
  // share at 1 GiB (46.0 at the preset's 0.92). --nic-efficiency alone sets the collectives' share,
  // and a send keeps the preset's ratio to it: 0.8 x 0.92 / 0.96, 38.3 GB/s.
  const std::vector<std::string> pair = {"nccl-tests", "sendrecv",        "-b", "1G",      "-e",
                                         "1G",         "--gpus-per-node", "1",  "--nodes", "2"};
  std::vector<std::string> p2p_share = pair;
  p2p_share.insert(p2p_share.end(), {"--nic-p2p-efficiency", "0.8"});
  const CommandResult nic = run_binary(p2p_share);
  ASSERT_EQ(nic.exit_code, 0) << nic.err;
  EXPECT_THAT(nic.out, ::testing::ContainsRegex("  39\\.[89][0-9]    N/A"));
  std::vector<std::string> collectives_share = pair;
  collectives_share.insert(collectives_share.end(), {"--nic-efficiency", "0.8"});
  const CommandResult scaled = run_binary(collectives_share);
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  EXPECT_THAT(scaled.out, ::testing::ContainsRegex("  38\\.[23][0-9]    N/A"));
  p2p_share.back() = "1.2";
  const CommandResult above_one = run_binary(p2p_share);
  EXPECT_EQ(above_one.exit_code, 1);
  EXPECT_THAT(above_one.err, HasSubstr("--nic-p2p-efficiency 1.2: expected a share"));
  const CommandResult share = run_binary({"nccl-tests", "all_reduce", "--ring-efficiency", "1.5"});
  EXPECT_EQ(share.exit_code, 1);
  EXPECT_THAT(share.err, HasSubstr("--ring-efficiency 1.5: expected a share of the link's rate, above 0 and at most "
                                   "1"));
  // A 32 KiB ring LL all-reduce on one LL channel at 0.25 x 36.7 GB/s: 15 us of NCCL's latency,
  // then 57,344 bus bytes at 9.175 GB/s, 6.25 us.
  const CommandResult ll =
      run_binary({"nccl-tests", "all_reduce", "-b", "32K", "-e", "32K", "--ll-channel-efficiency", "0.25"});
  ASSERT_EQ(ll.exit_code, 0) << ll.err;
  EXPECT_THAT(ll.out, HasSubstr("    21.25 "));
  // A 32 MiB send/receive on 4 channels of 42 GB/s: 8.2 us of latency and 199.7 us of data.
  const CommandResult p2p =
      run_binary({"nccl-tests", "sendrecv", "-b", "32M", "-e", "32M", "--p2p-channel-gb-per-s", "42"});
  ASSERT_EQ(p2p.exit_code, 0) << p2p.err;
  EXPECT_THAT(p2p.out, HasSubstr("   207.93  161.37 "));
  // A 16 GiB all-to-all on 8 GPUs at 0.7 of 450 GB/s, less 0.311 / 32 channels a peer: 8.2 us of
  // latency, 25.0 of its first step and 7/8 of 16 GiB at 311.9 GB/s (48190.2): 48223.4 us.
  const CommandResult a2a =
      run_binary({"nccl-tests", "alltoall", "-b", "16G", "-e", "16G", "--all-to-all-efficiency", "0.7"});
  ASSERT_EQ(a2a.exit_code, 0) << a2a.err;
  EXPECT_THAT(a2a.out, HasSubstr("  48223.4 "));
  const CommandResult a2a_share = run_binary({"nccl-tests", "alltoall", "--all-to-all-efficiency", "0"});
  EXPECT_EQ(a2a_share.exit_code, 1);
  EXPECT_THAT(a2a_share.err, HasSubstr("--all-to-all-efficiency 0: expected a share of the link's rate"));
  const CommandResult p2p_rate = run_binary({"nccl-tests", "sendrecv", "--p2p-channel-gb-per-s", "0"});
  EXPECT_EQ(p2p_rate.exit_code, 1);
  EXPECT_THAT(p2p_rate.err, HasSubstr("--p2p-channel-gb-per-s 0: expected a rate in GB/s, above 0"));
  const CommandResult ll_share = run_binary({"nccl-tests", "all_reduce", "--ll-channel-efficiency", "0"});
  EXPECT_EQ(ll_share.exit_code, 1);
  EXPECT_THAT(ll_share.err, HasSubstr("--ll-channel-efficiency 0: expected a share of NCCL's per-channel LL128 "
                                      "ceiling"));
  // NVLS-tree's NVLink side at NVLS's full rate: a 2-node all-reduce of 16 GiB at one node's
  // NVLS algbw (273.9 GB/s: busbw 479 over 8 ranks, 513 over 16, less the pipeline's fill:
  // 512.5), where the default 0.91 leaves it at busbw 469.7, as three 2 x 8 H100 sweeps measured
  // 469-470 (docs/nccl.md).
  const std::vector<std::string> two_nodes = {"nccl-tests", "all_reduce", "-b", "16G", "-e", "16G", "--nodes", "2"};
  std::vector<std::string> full_tree = two_nodes;
  full_tree.insert(full_tree.end(), {"--nvls-tree-efficiency", "1"});
  EXPECT_THAT(run_binary(two_nodes).out, ::testing::ContainsRegex(" 469\\.7[0-9]    N/A"));
  EXPECT_THAT(run_binary(full_tree).out, ::testing::ContainsRegex(" 512\\.5[0-9]    N/A"));
  const CommandResult tree_share = run_binary({"nccl-tests", "all_reduce", "--nvls-tree-efficiency", "1.5"});
  EXPECT_EQ(tree_share.exit_code, 1);
  EXPECT_THAT(tree_share.err, HasSubstr("--nvls-tree-efficiency 1.5: expected a share of NVLS's NVLink rate"));
  // A 16 KiB tree LL all-reduce on 2 nodes without the proxies' reading of LL's lines: 4.92 us
  // (2 x 8 KiB at 0.3 ns a byte) less.
  const std::vector<std::string> tree_ll = {"nccl-tests", "all_reduce", "-b",     "16K",  "-e",      "16K",
                                            "--nodes",    "2",          "--algo", "Tree", "--proto", "LL"};
  std::vector<std::string> no_scan = tree_ll;
  no_scan.insert(no_scan.end(), {"--ll-proxy-scan-ns", "0"});
  const auto time_of = [](const CommandResult& r) {
    const std::size_t row = r.out.find("       16384 ");
    return row == std::string::npos ? -1.0 : std::stod(r.out.substr(r.out.find("-1", row) + 2));
  };
  EXPECT_NEAR(time_of(run_binary(tree_ll)) - time_of(run_binary(no_scan)), 4.92, 0.011);
  const CommandResult scan = run_binary({"nccl-tests", "all_reduce", "--ll-proxy-scan-ns", "-1"});
  EXPECT_EQ(scan.exit_code, 1);
  EXPECT_THAT(scan.err, HasSubstr("--ll-proxy-scan-ns -1: expected ns, 0 or more"));
  const CommandResult cost = run_binary({"nccl-tests", "all_reduce", "--nvls-chunk-us", "-1"});
  EXPECT_EQ(cost.exit_code, 1);
  EXPECT_THAT(cost.err, HasSubstr("--nvls-chunk-us -1: expected us, 0 or more"));
}

TEST(NcclTestsCommand, TypesOperationsAndRootsAsNcclTestsTakesThem) {
  // -d double: 8-byte elements; -o avg leaves NVLS out, so a large all-reduce runs a ring.
  const CommandResult avg =
      run_binary({"nccl-tests", "all_reduce", "-b", "64M", "-e", "64M", "-d", "double", "-o", "avg"});
  ASSERT_EQ(avg.exit_code, 0) << avg.err;
  EXPECT_THAT(avg.out, HasSubstr("    67108864       8388608    double     avg      -1"));
  EXPECT_THAT(avg.out, HasSubstr("Ring/"));
  const CommandResult sum = run_binary({"nccl-tests", "all_reduce", "-b", "64M", "-e", "64M", "-d", "double"});
  EXPECT_THAT(sum.out, HasSubstr("NVLS/Simple\n"));
  // "all": every type, and for each every operation, in nccl-tests' order; before Hopper without
  // the 8-bit floats, as nccl-tests leaves them out.
  const CommandResult all =
      run_binary({"nccl-tests", "all_reduce", "-b", "1K", "-e", "1K", "-d", "all", "-o", "all", "--gpu", "A100"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::string& t = all.out;
  EXPECT_LT(t.find("int8     sum"), t.find("int8    prod"));
  EXPECT_LT(t.find("int8  mulsum"), t.find("uint8     sum"));
  EXPECT_LT(t.find("double  mulsum"), t.find("bfloat16     sum"));
  EXPECT_THAT(t, ::testing::Not(HasSubstr("f8e4m3")));
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 5 + 10 * 6 + 3);  // head, 10 types x 6, foot
  // -r -1: broadcast from each rank in turn; a collective with no root prints -1.
  const CommandResult roots =
      run_binary({"nccl-tests", "broadcast", "-b", "1K", "-e", "1K", "-r", "-1", "--gpus-per-node", "4"});
  ASSERT_EQ(roots.exit_code, 0) << roots.err;
  for (const char* root : {"none       0", "none       1", "none       2", "none       3"}) {
    EXPECT_THAT(roots.out, HasSubstr(root));
  }
  const CommandResult gather = run_binary({"nccl-tests", "all_gather", "-b", "1K", "-e", "1K", "-r", "3"});
  EXPECT_THAT(gather.out, HasSubstr("float    none      -1"));
  // A reduce runs each type, each operation and each root; a send/receive each operation.
  const CommandResult reduce = run_binary({"nccl-tests", "reduce", "-b", "1K", "-e", "2K", "-d", "all", "-o", "all",
                                           "-r", "-1", "--gpus-per-node", "2", "--gpu", "A100"});
  ASSERT_EQ(reduce.exit_code, 0) << reduce.err;
  EXPECT_EQ(std::count(reduce.out.begin(), reduce.out.end(), '\n'), 5 + 10 * 6 * 2 * 2 + 3);
  EXPECT_LT(reduce.out.find("int8     sum       0"), reduce.out.find("int8     sum       1"));
  EXPECT_LT(reduce.out.find("int8     sum       1"), reduce.out.find("int8    prod       0"));
  const CommandResult sendrecv = run_binary({"nccl-tests", "sendrecv", "-b", "1K", "-e", "1K", "-o", "all"});
  ASSERT_EQ(sendrecv.exit_code, 0) << sendrecv.err;
  for (const char* op :
       {"float     sum", "float    prod", "float     max", "float     min", "float     avg", "float  mulsum"}) {
    EXPECT_THAT(sendrecv.out, HasSubstr(op));
  }
  // -r matters to a broadcast and a reduce only, as nccl-tests reads it; -o is read everywhere.
  EXPECT_EQ(run_binary({"nccl-tests", "all_reduce", "-b", "1K", "-e", "1K", "-r", "99"}).exit_code, 0);
  const CommandResult gather_op = run_binary({"nccl-tests", "all_gather", "-o", "bogus"});
  EXPECT_EQ(gather_op.exit_code, 1);
  EXPECT_THAT(gather_op.err, HasSubstr("-o \"bogus\": expected one of sum"));
  // A system file's type and reduction are -d's and -o's.
  const auto dir = temp_dir("nccl_tests_types");
  write_bytes(dir / "sys.json",
              R"({"preferred-dataset-splits": 1, "nccl-datatype": "bfloat16", "nccl-reduce-op": "avg"})");
  const CommandResult from_file =
      run_binary({"nccl-tests", "all_reduce", "-b", "64M", "-e", "64M", "--system", (dir / "sys.json").string()});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_THAT(from_file.out, HasSubstr("bfloat16     avg      -1"));
  EXPECT_THAT(from_file.out, ::testing::Not(HasSubstr("NVLS")));
  // More ranks than any machine: refused before a root is named.
  const CommandResult huge = run_binary({"nccl-tests", "reduce", "--nodes", "536870912"});
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_THAT(huge.err, HasSubstr("more than 1048576 ranks"));
  // What nccl-tests or NCCL would refuse.
  const CommandResult type = run_binary({"nccl-tests", "all_reduce", "-d", "fp16"});
  EXPECT_EQ(type.exit_code, 1);
  EXPECT_THAT(type.err, HasSubstr("-d \"fp16\": expected one of int8, uint8"));
  const CommandResult op = run_binary({"nccl-tests", "all_reduce", "-o", "xor"});
  EXPECT_EQ(op.exit_code, 1);
  EXPECT_THAT(op.err, HasSubstr("-o \"xor\": expected one of sum, prod, max, min, avg, mulsum, or all"));
  const CommandResult root = run_binary({"nccl-tests", "reduce", "-r", "8"});
  EXPECT_EQ(root.exit_code, 1);
  EXPECT_THAT(root.err, HasSubstr("-r 8: expected a root rank from 0 to 7"));
  const CommandResult no_gpu = run_binary({"nccl-tests", "reduce", "--gpus-per-node", "0"});
  EXPECT_EQ(no_gpu.exit_code, 1);
  EXPECT_THAT(no_gpu.err, ::testing::Not(HasSubstr("-r 0")));
  const CommandResult fp8 = run_binary({"nccl-tests", "reduce_scatter", "-d", "f8e4m3", "--gpu", "A100"});
  EXPECT_EQ(fp8.exit_code, 1);
  EXPECT_THAT(fp8.err, HasSubstr("NCCL reduces 8-bit floats from Hopper on"));
  const CommandResult rows =
      run_binary({"nccl-tests", "reduce", "-d", "all", "-o", "all", "-r", "-1", "-b", "1", "-e", "2000", "-i", "1"});
  EXPECT_EQ(rows.exit_code, 1);
  EXPECT_THAT(rows.err, HasSubstr("more than 100000 rows"));
}

TEST(NcclTestsCommand, TakesARealRunsCommandLine) {
  // all_reduce_perf -b 8 -e 8G -f 2 -g 1 with nccl-tests' run controls: the same table as without.
  const std::vector<std::string> plain = {"nccl-tests", "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2"};
  std::vector<std::string> pasted = plain;
  for (const char* arg : {"-g", "1", "-t", "1",  "-n", "50", "-w", "10", "-c", "0", "-p", "1",
                          "-a", "3", "-T", "60", "-G", "0",  "-m", "1",  "-N", "1", "-C", "0"}) {
    pasted.push_back(arg);
  }
  const CommandResult a = run_binary(plain);
  const CommandResult b = run_binary(pasted);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  // What would measure something the model does not follow is refused, saying why.
  const CommandResult graph = run_binary({"nccl-tests", "all_reduce", "-G", "1"});
  EXPECT_EQ(graph.exit_code, 1);
  EXPECT_THAT(graph.err, HasSubstr("-G 1: CUDA graphs take the host's launches away"));
  const CommandResult aggregated = run_binary({"nccl-tests", "all_reduce", "-m", "4"});
  EXPECT_EQ(aggregated.exit_code, 1);
  EXPECT_THAT(aggregated.err, HasSubstr("-m 4: the model times one call at a time"));
  EXPECT_THAT(run_binary({"nccl-tests", "all_reduce", "-N", "2"}).err, HasSubstr("-N 2:"));
  EXPECT_THAT(run_binary({"nccl-tests", "all_reduce", "-C", "1"}).err, HasSubstr("-C 1:"));
}

TEST(NcclTestsCommand, AThreadLaunchingSeveralGpusSetsAFloor) {
  // One thread launching 8 GPUs' calls in turn issues a call every 8 x 4.5 us = 36 us: an 8-byte
  // all-reduce, 12.37 us on the GPUs back to back (one chunk of 8 filled: sparse_ring.h), takes
  // 36, and so does 8 KiB (16.2); 8 MiB (82 us of NVLS) and 8 GiB are the GPUs' time.
  const std::vector<std::string> base = {"nccl-tests", "all_reduce", "-b", "8", "-e", "8G", "-f", "1024"};
  std::vector<std::string> eight = base;
  eight.insert(eight.end(), {"-g", "8"});
  const CommandResult one = run_binary(base);
  const CommandResult r = run_binary(eight);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(one.out, HasSubstr("      -1    12.37"));
  EXPECT_THAT(one.out, ::testing::Not(HasSubstr("the host's")));
  EXPECT_THAT(r.out, HasSubstr("      -1    36.00    0.00    0.00    N/A    36.00"));
  // Its bandwidths are the floor's: 8 KiB in 36 us, 0.23 GB/s, bus 0.40.
  const std::string floored = "    36.00    0.23    0.40    N/A";
  EXPECT_THAT(r.out, HasSubstr("        8192          2048     float     sum      -1" + floored + floored));
  EXPECT_THAT(r.out, HasSubstr("# 2 of the 4 rows take the host's 36 us to launch a call, not the GPUs' time"));
  const auto last_rows = [](const std::string& out) {
    const std::size_t from = out.find("     8388608  ");
    return out.substr(from, out.find("# Out of bounds") - from);
  };
  EXPECT_EQ(last_rows(r.out), last_rows(one.out));
  // A faster host: 8 x 1.5 = 12 us, under the GPUs' 12.37.
  eight.insert(eight.end(), {"--host-launch-us", "1.5"});
  EXPECT_EQ(run_binary(eight).out, one.out);
  // The GPUs a thread drives set it, not the threads: -t 2 -g 4 launches 4 a thread, 18 us.
  const CommandResult threads = run_binary({"nccl-tests", "all_reduce", "-b", "8", "-e", "8", "-t", "2", "-g", "4"});
  EXPECT_THAT(threads.out, HasSubstr("      -1    18.00"));
  // An empty collective launches nothing: an all-gather of 8 bytes over 8 ranks stays at 0. An
  // empty send/receive still launches its send and receive.
  const CommandResult empty = run_binary({"nccl-tests", "all_gather", "-b", "8", "-e", "8", "-g", "8"});
  EXPECT_THAT(empty.out, HasSubstr("      -1     0.00"));
  const CommandResult empty_p2p = run_binary({"nccl-tests", "sendrecv", "-b", "0", "-e", "0", "-g", "8"});
  EXPECT_THAT(empty_p2p.out, HasSubstr("      -1    36.00"));
  // Threads x GPUs a thread drive one node's GPUs at most.
  const CommandResult many = run_binary({"nccl-tests", "all_reduce", "-t", "2", "-g", "8"});
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_THAT(many.err, HasSubstr("-t 2 -g 8: a process drives threads x GPUs a thread of one node's 8 GPUs"));
  EXPECT_EQ(run_binary({"nccl-tests", "all_reduce", "-g", "0"}).exit_code, 1);
  // A product past 2^63 does not wrap into a small one.
  const CommandResult huge = run_binary({"nccl-tests", "all_reduce", "-t", "4294967296", "-g", "4294967296"});
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_THAT(huge.err, HasSubstr("-t 4294967296 -g 4294967296: a process drives"));
  EXPECT_EQ(run_binary({"nccl-tests", "all_reduce", "--host-launch-us", "nan"}).exit_code, 1);
  const CommandResult negative = run_binary({"nccl-tests", "all_reduce", "--host-launch-us", "-1"});
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_THAT(negative.err, HasSubstr("--host-launch-us -1: expected us, 0 or more"));
}

TEST(NcclTestsCommand, ComparesARealRunRowByRow) {
  // A real run's output (one process a GPU, 8 ranks, two sizes): the model beside each row, in
  // this machine's options, and the geometric mean of the errors.
  const auto dir = temp_dir("nccl_tests_compare");
  std::string log = "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048\n";
  for (int rank = 0; rank < 8; ++rank) {
    log += "#  Rank  " + std::to_string(rank) + " Group  0 Pid 1 on h device 0 [0x1b] NVIDIA H100 80GB HBM3\n";
  }
  log += "        1024           256     float     sum      -1    20.00    0.05    0.09      0    20.00    0.05    "
         "0.09      0\n"
         "        2048           512     float     sum      -1    20.50    0.10    0.17      0    20.50    0.10    "
         "0.17      0\n";
  write_bytes(dir / "run.log", log);
  const CommandResult r = run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "run.log").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--compare " + (dir / "run.log").string() + ": all_reduce on 1 node(s) x 8 H100"));
  EXPECT_THAT(r.out, HasSubstr("        2048     float     sum    -1       20.50"));
  EXPECT_THAT(r.out, HasSubstr("out of place over 2 rows, "));
  // The sweep's shape beside the model's: its least time is 20.00 us, at 1 KiB.
  EXPECT_THAT(r.out, HasSubstr("#   latency floor (the least time): 20.00 us at 1.0 KiB / "));
  // The run's own -g: one thread launching 8 GPUs' calls, 36 us a call at least (4.5 us each).
  write_bytes(dir / "threaded.log", "# nThread 1 nGpus 8 minBytes 1024 maxBytes 1024\n"
                                    "        1024           256     float     sum      -1    40.00    0.03    0.04     "
                                    " 0\n");
  const CommandResult threaded = run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "threaded.log").string()});
  ASSERT_EQ(threaded.exit_code, 0) << threaded.err;
  EXPECT_THAT(threaded.out, HasSubstr("        1024     float     sum    -1       40.00      36.00"));
  // The run's ranks against the machine's; an unreadable file; a log of nothing.
  const CommandResult ranks =
      run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "run.log").string(), "--nodes", "2"});
  EXPECT_EQ(ranks.exit_code, 1);
  EXPECT_THAT(ranks.err, HasSubstr("run.log: a run of 8 ranks on 1 host(s), 8 on the busiest (its \"# Rank\" "
                                   "lines); the machine has 2 node(s) x 8 GPUs; expected --nodes 1 --gpus-per-node 8"));
  // The GPU the log names; an explicit -g other than the log's; the rows' options, which the log gives.
  const CommandResult gpu =
      run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "run.log").string(), "--gpu", "B200"});
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_THAT(gpu.err, HasSubstr("a run on NVIDIA H100 80GB HBM3 (its \"# Rank\" lines); the machine's GPU is B200; "
                                 "expected --gpu H100"));
  const CommandResult g =
      run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "threaded.log").string(), "-g", "2"});
  EXPECT_EQ(g.exit_code, 1);
  EXPECT_THAT(g.err, HasSubstr("-g 2: the log"));
  EXPECT_THAT(g.err, HasSubstr("ran with nGpus 8; expected -g left out, or the same"));
  EXPECT_EQ(run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "threaded.log").string(), "-g", "8"}).exit_code,
            0);
  for (const char* row_option : {"-b", "-e", "-f", "-i", "-d", "-o", "-r"}) {
    const CommandResult both =
        run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "run.log").string(), row_option, "1"});
    EXPECT_NE(both.exit_code, 0) << row_option;
    EXPECT_THAT(both.err, HasSubstr("excludes")) << row_option;
  }
  // A row over both neighbours' time, a noise spike: left out of the means with --leave-out-spikes.
  write_bytes(dir / "spiky.log", "        1024           256     float     sum      -1    20.00    0.05    0.09      "
                                 "0\n"
                                 "        2048           512     float     sum      -1    40.00    0.05    0.09      "
                                 "0\n"
                                 "        4096          1024     float     sum      -1    20.50    0.20    0.35      "
                                 "0\n");
  const CommandResult spiky =
      run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "spiky.log").string(), "--leave-out-spikes"});
  ASSERT_EQ(spiky.exit_code, 0) << spiky.err;
  EXPECT_THAT(spiky.out, HasSubstr("(a spike: left out)\n"));
  EXPECT_THAT(spiky.out, HasSubstr("out of place over 2 rows (1 spike left out"));
  const CommandResult kept = run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "spiky.log").string()});
  EXPECT_THAT(kept.out, HasSubstr("out of place over 3 rows\n"));
  const CommandResult alone = run_binary({"nccl-tests", "all_reduce", "--leave-out-spikes"});
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_THAT(alone.err, HasSubstr("--leave-out-spikes requires --compare"));
  const CommandResult missing = run_binary({"nccl-tests", "all_reduce", "--compare", (dir / "none.log").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("none.log"));
  EXPECT_THAT(missing.err, HasSubstr("cannot open the nccl-tests output (--compare)"));
  write_bytes(dir / "empty.log", "");
  const CommandResult empty = run_binary({"nccl-tests", "sendrecv", "--compare", (dir / "empty.log").string()});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("empty.log: no nccl-tests rows of sendrecv"));
}

TEST(NcclTestsCommand, BadInputSaysWhatWasExpected) {
  // Each is refused with exit 1 and a message that says what was expected.
  const auto refused = [](const std::vector<std::string>& args, const std::string& says) {
    const CommandResult r = run_binary(args);
    EXPECT_EQ(r.exit_code, 1) << args.back();
    EXPECT_THAT(r.err, HasSubstr(says));
    return r;
  };
  refused({"nccl-tests", "allreduce2"}, "unknown collective \"allreduce2\"; expected all_reduce");
  refused({"nccl-tests", "all_reduce", "-b", "8X"}, "-b \"8X\" is not a size");
  refused({"nccl-tests", "all_reduce", "--gpu", "V100"}, "unknown GPU \"V100\"");
  refused({"nccl-tests", "all_reduce", "--algo", "Spiral"}, "--algo: unknown algorithm \"Spiral\"");
  refused({"nccl-tests", "all_reduce", "-b", "1G", "-e", "1M"}, "expected -b <= -e");
  // Zero NICs is not "the default": it is refused, not read as one a GPU.
  refused({"nccl-tests", "all_reduce", "--nodes", "2", "--nics-per-node", "0"}, "--nics-per-node is 0; expected 1 or "
                                                                                "more");
  // An efficiency next to 0 passes its range check but leaves no finite time: refused, not inf.
  const CommandResult tiny =
      refused({"nccl-tests", "all_reduce", "--nodes", "2", "--nic-efficiency", "1e-308"}, "takes inf us; expected a "
                                                                                          "finite time");
  EXPECT_THAT(tiny.out, Not(HasSubstr("inf")));
  // K is 1024 bytes with a fraction too; a size that is no whole number of bytes is refused.
  const CommandResult half = run_binary({"nccl-tests", "all_reduce", "-b", "1.5K", "-e", "1.5K", "-d", "int8"});
  EXPECT_EQ(half.exit_code, 0) << half.err;
  EXPECT_THAT(half.out, HasSubstr("\n        1536          1536      int8"));
  refused({"nccl-tests", "all_reduce", "-b", "1.3K"}, "-b \"1.3K\" is 1331.2 bytes; expected a whole number of bytes");
  // NCCL_NVLS_ENABLE takes 0, 1 or 2 and NCCL_PXN_DISABLE's switch 0 or 1; nothing else is read as one.
  refused({"nccl-tests", "all_reduce", "--nvls", "-1"}, "--nvls: -1 not in {0,1,2}");
  refused({"nccl-tests", "alltoall", "--pxn", "2"}, "--pxn: 2 not in {0,1}");
  // From 0 a factor never grows (nccl-tests loops on 0 for ever): refused, not one row and a stop.
  refused({"nccl-tests", "all_reduce", "-b", "0", "-e", "1M"}, "-b 0 with a factor (-f 2) never grows to -e 1048576");
  // A protocol list's example is a protocol.
  refused({"nccl-tests", "all_reduce", "--proto", "allreduce:Simple;LL"}, "needs a collective prefix (e.g. "
                                                                          "\"allreduce:simple\")");
}

}  // namespace
}  // namespace chakrasim::test
