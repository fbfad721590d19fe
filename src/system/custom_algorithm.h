// A custom collective algorithm (docs/chakra-format.md §7): each NPU replays its own algorithm ET,
// PREFIX.<position>.et, made of COMM_SEND, COMM_RECV and COMP nodes with data dependencies.
// Every dependency-free node is issued at once, with no resource limits, in ascending id: a send
// completes when its message has arrived, a receive when its message is matched, a COMP after
// duration_micros x 1000 ns (at least 1 ns); other node types complete at once. Message sizes come
// from the algorithm ET, not from the workload's comm_size, and steps pay no endpoint delay.
// Peers in the algorithm ET are positions, mapped to NPUs by the caller's `Io`.
//
// `Io` must offer send(node, dst_position, bytes, tag), receive(node, src_position, bytes, tag),
// compute(node, ns) and finish(); each of the first three reports back through on_node_done.
#pragma once

#include <cstdint>
#include <vector>

#include "chakra/graph.h"

namespace chakrasim::system {

struct CustomState {
  const chakra::Graph* graph = nullptr;
  std::vector<std::uint32_t> waiting;  // per node: parents not yet done
  std::vector<std::uint32_t> ready;    // freed, not yet issued, in the order they were freed
  std::size_t ready_head = 0;
  std::uint32_t done = 0;
  bool draining = false;

  void configure(const chakra::Graph& algorithm) {
    graph = &algorithm;
    waiting.resize(algorithm.size());
    for (std::uint32_t i = 0; i < algorithm.size(); ++i) waiting[i] = algorithm.parent_count(i);
    done = 0;
  }

  template <class Io>
  void start(Io& io) {
    for (std::uint32_t i = 0; i < graph->size(); ++i) {
      if (waiting[i] == 0) ready.push_back(i);
    }
    drain(io);
  }

  template <class Io>
  void on_node_done(Io& io, std::uint32_t node) {
    ++done;
    for (std::uint32_t child : graph->children(node)) {
      if (--waiting[child] == 0) ready.push_back(child);
    }
    drain(io);
  }

  // The step protocol of the native algorithms does not apply.
  template <class Io>
  void on_step_ready(Io&) {}
  template <class Io>
  void on_receive(Io&) {}

 private:
  // Issues freed nodes one by one. A node can complete inside its own issue (a receive whose
  // message is already there): that nested completion only queues its children, and only the
  // outermost call may end the phase, as its last act, because finishing ends this state too.
  template <class Io>
  void drain(Io& io) {
    if (draining) return;
    draining = true;
    while (ready_head < ready.size()) issue(io, ready[ready_head++]);
    draining = false;
    if (done == graph->size()) io.finish();
  }

  template <class Io>
  void issue(Io& io, std::uint32_t node) {
    const chakra::OpAttrs& a = graph->attrs(node);
    switch (graph->type(node)) {
      case chakra::NodeType::kCommSend: io.send(node, a.comm_dst, a.comm_size, a.comm_tag); return;
      case chakra::NodeType::kCommRecv: io.receive(node, a.comm_src, a.comm_size, a.comm_tag); return;
      case chakra::NodeType::kComp: {
        const std::uint64_t micros = graph->duration_micros(node);
        io.compute(node, micros == 0 ? 1 : micros * 1000);
        return;
      }
      default: on_node_done(io, node); return;
    }
  }
};

}  // namespace chakrasim::system
