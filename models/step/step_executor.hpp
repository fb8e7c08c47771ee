// Plays a step's op graph (step_graph.hpp) on the event engine:
//  - an operation starts when every operation it waits for has ended and it is next on its stream
//    (each stream of each stage runs its operations in graph order, as a CUDA stream does);
//  - communication takes its closed-form time (analytic fidelity), or becomes flows on the
//    platform's links (flow fidelity): everything running at once shares each tier's links, and
//    a fat tree's leaf uplinks, max-min fairly, so two collectives on one NIC take the sum of
//    their bytes over it;
//  - compute runs on the SMs and the HBM bandwidth that communication leaves it: while
//    collectives crossing tier t run on its stage (a pipeline transfer: on both of its stages),
//    each holds that tier's communication_sms (NCCL's channels, which never share an SM with
//    compute kernels) and a share of the HBM bandwidth (its GraphComm::memory_time over the time
//    it takes alone: NCCL stages what it moves in memory); a compute op's SM-bound part (GEMMs,
//    attention) progresses at (1 - held / SMs), its memory-bound part (the element-wise kernels'
//    streaming, GraphOp::memory_share) as HBM shared in proportion to demand lets it
//    (compute_rate). A bandwidth-bound kernel does not need every SM to saturate HBM, and a GEMM
//    reads little of it: each part loses one resource only, a lower bound on the interference
//    measured (NCCL's maintainer on an A100 in NVIDIA/nccl issue 1428: GEMMs 1.18 -> 2.08 ms
//    beside an all-gather). Communication itself is not slowed by compute's memory traffic.
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

/// When `graph` ends with every operation taking its `work` (communication nothing where
/// `communication` is false) and waiting only for its dependencies and its stream's order: the
/// analytic execution without the interference of communication on compute, which only slows
/// compute down, so a lower bound of execute_step's end at the analytic fidelity (at any, without
/// communication).
Duration uncontended_end(const StepGraph& graph, bool communication);

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

/// The rate, of its rate alone, of a compute op whose `memory_share` m of time streams at
/// `streaming_efficiency` f of the HBM bandwidth (all HBM delivers), while communication holds
/// `sm_share` s of the SMs and wants `memory_load` u of the peak bandwidth (shared in proportion
/// to demand): 1 / ((1 - m) / (1 - s) + m (1 + u / f)), 1 - s at least 0.05.
double compute_rate(double sm_share, double memory_load, double memory_share, double streaming_efficiency);

}  // namespace sp::models
