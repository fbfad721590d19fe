#include "report/flow_log.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "report/summary.h"

namespace chakrasim::report {
namespace {

Tick completion(const network::FlowRecord& f) { return f.arrival - f.start; }

double gbps(const network::FlowRecord& f) {
  const Tick t = completion(f);
  return t == 0 ? 0.0 : static_cast<double>(f.bytes) * 8.0 / static_cast<double>(t);
}

}  // namespace

void write_flow_csv(const std::string& path, const FlowLog& log) {
  std::string out = "src,dst,bytes,start_ns,arrival_ns,completion_ns,hops,gbps\n";
  for (const network::FlowRecord& f : log.flows()) {
    out += fmt::format("{},{},{},{},{},{},{},{:.3f}\n", f.src, f.dst, f.bytes, f.start, f.arrival, completion(f),
                       f.hops, gbps(f));
  }
  write_file_atomically(path, out, "the flows CSV");
}

void section_flows(std::string& html, const FlowLog& log) {
  const std::vector<network::FlowRecord>& flows = log.flows();
  if (flows.empty()) return;
  std::vector<std::size_t> order(flows.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return completion(flows[a]) > completion(flows[b]); });
  auto at_rank = [&](double fraction) {  // the completion time that `fraction` of flows beat
    const auto k = static_cast<std::size_t>(fraction * static_cast<double>(flows.size() - 1));
    return completion(flows[order[flows.size() - 1 - k]]);
  };
  html += "<h2 id=\"flows\">Flows</h2>\n";
  html += fmt::format("<p>{} flows; completion time (send to last byte) median {}, 99th percentile {}, largest "
                      "{}.</p>\n",
                      flows.size(), format_duration(at_rank(0.5)), format_duration(at_rank(0.99)),
                      format_duration(completion(flows[order.front()])));
  constexpr std::size_t kSlowest = 20;
  html += "<table><tr><th>src</th><th>dst</th><th>bytes</th><th>sent</th><th>completion</th><th>hops</th>"
          "<th>Gb/s</th></tr>\n";
  for (std::size_t k = 0; k < std::min(kSlowest, order.size()); ++k) {
    const network::FlowRecord& f = flows[order[k]];
    html +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td></tr>\n",
                    f.src, f.dst, f.bytes, format_duration(f.start), format_duration(completion(f)), f.hops, gbps(f));
  }
  html += "</table>\n";
  html += fmt::format("<p class=\"note\">The {} slowest flows; every flow is in the CSV that --flows writes.</p>\n",
                      std::min(kSlowest, order.size()));
}

}  // namespace chakrasim::report
