// The third pass over bad input: every file the product reads, each given seven ways a file goes
// wrong (missing, empty, a directory, a FIFO, /dev/zero, random bytes, cut in half). Every one
// must end with exit 1 and a message naming the file and what was expected: never a hang (FIFO),
// a blow-up (/dev/zero), a crash or a success on garbage.
#include <random>
#include <utility>

#include "errors/case_files.h"
#include "errors/tool_inputs.h"

namespace chakrasim::test::errors {
namespace {

using Args = std::vector<std::string>;

// A file some command reads: `prepare` writes a valid one (and whatever else the command needs)
// into the case's files and returns its path and the command line.
struct Input {
  std::string name;
  std::function<std::pair<fs::path, Args>(CaseFiles&)> prepare;
};

Args run_args(const CaseFiles& s) { return s.args(); }

std::vector<Input> inputs() {
  std::vector<Input> in;
  // ---- chakrasim run --------------------------------------------------------------------------
  in.push_back({"RunTrace", [](CaseFiles& s) { return std::pair{fs::path(s.rank(0)), run_args(s)}; }});
  in.push_back({"RunTraceMiddleRank", [](CaseFiles& s) { return std::pair{fs::path(s.rank(5)), run_args(s)}; }});
  in.push_back({"RunNetwork", [](CaseFiles& s) { return std::pair{fs::path(s.network), run_args(s)}; }});
  in.push_back({"RunSystem", [](CaseFiles& s) { return std::pair{fs::path(s.system), run_args(s)}; }});
  in.push_back({"RunMemory", [](CaseFiles& s) {
                  s.write_memory(R"({"memory-type": "NO_MEMORY_EXPANSION", "remote-mem-latency": 100,
                                     "remote-mem-bw": 10})");
                  return std::pair{fs::path(s.memory), run_args(s)};
                }});
  in.push_back({"RunGroups", [](CaseFiles& s) {
                  s.write_groups(R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})");
                  return std::pair{fs::path(s.groups), run_args(s)};
                }});
  in.push_back({"RunGroupNames", [](CaseFiles& s) {
                  s.write_groups(R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})");
                  const fs::path names = s.dir / "names.json";
                  write_text(names, R"({"1": "TP", "2": "TP"})");
                  s.extra_args = {"--group-names", names.string()};
                  return std::pair{names, run_args(s)};
                }});
  in.push_back({"RunCustomAlgorithm", [](CaseFiles& s) {
                  return std::pair{fs::path(custom_algorithm(s)), run_args(s)};
                }});
  // ---- the tools ------------------------------------------------------------------------------
  in.push_back({"ConvertText", [](CaseFiles& s) {
                  const fs::path w = s.dir / "w.txt";
                  write_text(w, kTextWorkload);
                  return std::pair{w, Args{"chakra", "convert", "text", w.string(), "--npus", "4", "--passes", "1",
                                           "--out", (s.dir / "w").string()}};
                }});
  in.push_back(
      {"ConvertPytorch", [](CaseFiles& s) {
         const fs::path h = s.dir / "host.json";
         write_text(h, host_trace().dump());
         return std::pair{h, Args{"chakra", "convert", "pytorch", h.string(), "--out", (s.dir / "host.et").string()}};
       }});
  auto link = [](CaseFiles& s, bool host) {
    const fs::path h = s.dir / "host.json", d = s.dir / "device.json";
    write_text(h, host_trace().dump());
    write_text(d, device_trace().dump());
    return std::pair{host ? h : d, Args{"chakra", "link", "--host", h.string(), "--device", d.string(), "--out",
                                        (s.dir / "linked.json").string()}};
  };
  in.push_back({"LinkHost", [link](CaseFiles& s) { return link(s, true); }});
  in.push_back({"LinkDevice", [link](CaseFiles& s) { return link(s, false); }});
  in.push_back({"Msccl", [](CaseFiles& s) {
                  const fs::path x = s.dir / "algo.xml";
                  write_text(x, kMscclXml);
                  return std::pair{x, Args{"chakra", "msccl", x.string(), "--coll-size", "1MiB", "--out",
                                           (s.dir / "algo").string()}};
                }});
  in.push_back({"Inspect", [](CaseFiles& s) {
                  return std::pair{fs::path(s.rank(0)), Args{"chakra", "inspect", s.rank(0)}};
                }});
  in.push_back(
      {"Jsonize", [](CaseFiles& s) {
         return std::pair{fs::path(s.rank(0)), Args{"chakra", "jsonize", s.rank(0), (s.dir / "t.json").string()}};
       }});
  in.push_back(
      {"Visualize", [](CaseFiles& s) {
         return std::pair{fs::path(s.rank(0)), Args{"chakra", "visualize", s.rank(0), (s.dir / "t.dot").string()}};
       }});
  in.push_back({"Dejsonize", [](CaseFiles& s) {
                  const fs::path j = s.dir / "t.json";
                  EXPECT_EQ(run_binary({"chakra", "jsonize", s.rank(0), j.string()}).exit_code, 0);
                  return std::pair{j, Args{"chakra", "dejsonize", j.string(), (s.dir / "back.et").string()}};
                }});
  return in;
}

// How a file goes wrong, and what the message must then say besides the file's name.
struct Fault {
  std::string name;
  std::function<void(const fs::path&)> apply;
  std::vector<std::string> needles;
};

std::vector<Fault> faults() {
  return {
      {"Missing", [](const fs::path& p) { fs::remove(p); }, {}},
      {"Empty", [](const fs::path& p) { write_text(p, ""); }, {"expected"}},
      {"Directory",
       [](const fs::path& p) {
         fs::remove(p);
         fs::create_directory(p);
       },
       {"is a directory; expected"}},
      {"Fifo", [](const fs::path& p) { fifo_at(p); }, {"is a FIFO (named pipe); expected"}},
      {"DevZero",
       [](const fs::path& p) {
         fs::remove(p);
         fs::create_symlink("/dev/zero", p);
       },
       {"is a character device; expected"}},
      {"RandomBytes",
       [](const fs::path& p) {
         std::mt19937 random(14);  // fixed: the same bytes every run
         std::string bytes(4096, '\0');
         for (char& b : bytes) b = static_cast<char>(random() & 0xff);
         write_text(p, bytes);
       },
       {"expected"}},
      {"CutInHalf",
       [](const fs::path& p) {
         const std::string bytes = file_bytes(p);
         write_text(p, bytes.substr(0, bytes.size() / 2));
       },
       {"expected"}},
  };
}

struct MatrixCase {
  Input input;
  Fault fault;
};

std::ostream& operator<<(std::ostream& os, const MatrixCase& c) { return os << c.input.name << c.fault.name; }

std::vector<MatrixCase> matrix() {
  std::vector<MatrixCase> out;
  for (const Input& i : inputs()) {
    for (const Fault& f : faults()) out.push_back({i, f});
  }
  return out;
}

class ThirdPass : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(ThirdPass, ExitsOneAndNamesTheFile) {
  const MatrixCase& c = GetParam();
  CaseFiles s("third_pass_" + c.input.name + c.fault.name);
  const auto [path, args] = c.input.prepare(s);
  c.fault.apply(path);
  const CommandResult r = run_binary(args);
  EXPECT_EQ(r.exit_code, 1) << "stderr:\n" << r.err << "stdout:\n" << r.out;
  EXPECT_THAT(r.err, HasSubstr("error: "));
  EXPECT_THAT(r.err, HasSubstr(path.filename().string()));
  for (const std::string& needle : c.fault.needles) EXPECT_THAT(r.err, HasSubstr(needle));
  EXPECT_LT(r.err.size(), 2000u) << "one short message, not a dump";
}

INSTANTIATE_TEST_SUITE_P(Matrix, ThirdPass, ::testing::ValuesIn(matrix()),
                         [](const ::testing::TestParamInfo<MatrixCase>& param_info) {
                           return param_info.param.input.name + param_info.param.fault.name;
                         });

// Each input, unbroken, is accepted: the faults are what the cases above refuse.
TEST(ThirdPassBaseline, EveryInputWorksUnbroken) {
  for (const Input& i : inputs()) {
    SCOPED_TRACE(i.name);
    CaseFiles s("third_pass_baseline_" + i.name);
    const auto [path, args] = i.prepare(s);
    const CommandResult r = run_binary(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

}  // namespace
}  // namespace chakrasim::test::errors
