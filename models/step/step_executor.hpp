// Plays a step's op graph (step_graph.hpp) on the event engine:
//  - an operation starts when every operation it waits for has ended and it is next on its stream
//    (each stream of each stage runs its operations in graph order, as a CUDA stream does);
//  - communication takes its closed-form time (analytic fidelity), or becomes flows on the
//    platform's links (flow fidelity): everything running at once shares each tier's links, and
//    a fat tree's leaf uplinks, max-min fairly, so two collectives on one NIC take the sum of
//    their bytes over it;
//  - compute runs on the SMs that communication leaves it: while collectives crossing tier t run
//    on its stage, each holds that tier's communication_sms (NCCL's channels, which never share
//    an SM with compute kernels), and the compute kernel progresses at (1 - held / SMs) of its
//    rate. Memory-bandwidth contention is not modelled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "models/step/step_graph.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct OpSpan {
  SimTime start, end;
};

struct Execution {
  std::vector<OpSpan> spans;  // per op of the graph
  SimTime end;                // the last op's end
  std::uint64_t events = 0;
};

Execution execute_step(const StepGraph& graph, const Platform& platform, Fidelity fidelity);

/// One job's step graph played in flow fidelity on an engine and network it shares with other
/// jobs (shared_fabric.hpp), step after step: `stage_links` are its pipeline stages' links, whose
/// leaf shares may be links other jobs use too.
class StepPlayer {
 public:
  StepPlayer(const StepGraph& graph, const Platform& platform, Engine& engine, FlowNetwork& net,
             std::vector<NetworkLinks> stage_links);
  ~StepPlayer();
  StepPlayer(const StepPlayer&) = delete;
  StepPlayer& operator=(const StepPlayer&) = delete;
  /// Plays the graph once from now; `done` runs when its last operation has ended.
  void start(std::function<void()> done);
  bool complete() const;
  /// The last play's spans (absolute times) and end.
  Execution result() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The share of its SMs one running collective takes from compute on `platform`.
double interference_share(const Platform& platform, std::size_t tier);

}  // namespace sp::models
