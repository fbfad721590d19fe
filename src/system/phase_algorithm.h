// The state a stream keeps for the phase it runs: one of the built-in algorithms' state machines
// (held by value in a variant, so a step costs no virtual call), or a plugged-in algorithm
// behind a virtual interface (PluggedAlgorithm), which is how an algorithm is added without
// touching the system layer: one header with the class, one row of system/algorithms.h.
//
// Every algorithm talks to the system layer through an `Io` with
//   bundle(bool reduce, bytes)  pay the endpoint delay E (and the reduction P if reduce), then
//                               the system calls on_step_ready
//   send(dst, bytes)            hand a message to the network
//   receive(src, bytes)         post a receive; on_receive runs when it is matched
//   finish()                    the phase is over; nothing may touch the state after it
// and offers start(io), on_step_ready(io) and on_receive(io).
#pragma once

#include <cstdint>
#include <memory>
#include <variant>

#include "chakra/graph.h"
#include "core/types.h"
#include "system/collective_plan.h"
#include "system/custom_algorithm.h"
#include "system/direct.h"
#include "system/double_binary_tree.h"
#include "system/halving_doubling.h"
#include "system/ring.h"
#include "system/ring_layout.h"

namespace chakrasim::system {

// What an algorithm is told when a stream enters a phase it runs.
struct PhaseSetup {
  const PhasePlan* phase = nullptr;
  RingLayout ring;                                  // this NPU's place in the phase's ring
  bool clockwise = true;                            // the direction of the stream's queue
  bool min_root_tree = false;                       // doubleBinaryTree: this chunk's tree
  const chakra::Graph* custom_algorithm = nullptr;  // custom: this NPU's algorithm ET
};

// The Io of a plugged-in algorithm.
class PhaseIo {
 public:
  virtual ~PhaseIo() = default;
  virtual void bundle(bool reduce, std::uint64_t bytes) = 0;
  virtual void send(NpuId dst, std::uint64_t bytes) = 0;
  virtual void receive(NpuId src, std::uint64_t bytes) = 0;
  virtual void finish() = 0;
};

// An algorithm added through a row of system/algorithms.h rather than the variant below.
class PluggedAlgorithm {
 public:
  virtual ~PluggedAlgorithm() = default;
  virtual void start(PhaseIo& io) = 0;
  virtual void on_step_ready(PhaseIo& io) = 0;
  virtual void on_receive(PhaseIo& io) = 0;
};

// Holds a plugged-in algorithm in the variant and lends it the system's Io.
class PluggedState {
 public:
  PluggedState() = default;
  explicit PluggedState(std::unique_ptr<PluggedAlgorithm> algorithm) : algorithm_(std::move(algorithm)) {}

  template <class Io>
  void start(Io& io) {
    Adapter<Io> a{io};
    algorithm_->start(a);
  }
  template <class Io>
  void on_step_ready(Io& io) {
    Adapter<Io> a{io};
    algorithm_->on_step_ready(a);
  }
  template <class Io>
  void on_receive(Io& io) {
    Adapter<Io> a{io};
    algorithm_->on_receive(a);
  }

 private:
  template <class Io>
  struct Adapter final : PhaseIo {
    explicit Adapter(Io& inner) : io(inner) {}
    void bundle(bool reduce, std::uint64_t bytes) override { io.bundle(reduce, bytes); }
    void send(NpuId dst, std::uint64_t bytes) override { io.send(dst, bytes); }
    void receive(NpuId src, std::uint64_t bytes) override { io.receive(src, bytes); }
    void finish() override { io.finish(); }
    Io& io;
  };
  std::unique_ptr<PluggedAlgorithm> algorithm_;
};

using PhaseAlgorithm =
    std::variant<RingState, DirectState, HalvingDoublingState, DoubleBinaryTreeState, CustomState, PluggedState>;

}  // namespace chakrasim::system
