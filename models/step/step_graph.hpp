// One training step as a graph of operations per rank role (a pipeline stage: ranks of the same
// stage run the same program, so one stands for all), built from the workload's layers and the
// layout:
//  - per micro-batch, in 1F1B order on each stage, the forward then (later) the backward of every
//    layer instance the stage holds (stages hold contiguous layers, balanced by compute time);
//  - tensor-parallel all-gathers and reduce-scatters where Megatron issues them (two of each per
//    layer and pass), beside the layer's compute when the implementation overlaps them, around it
//    when it does not; context-parallel K/V exchanges beside the attention compute;
//  - pipeline sends of activations forward and of gradients backward between neighbours;
//  - gradient buckets as the last micro-batch's backward fills them, reduced (all-reduce, or
//    reduce-scatter with the distributed optimizer) over the data-parallel group; the optimizer
//    when the stage's buckets are done; the distributed optimizer's parameter all-gathers at the
//    start of the step, each bucket before the first forward that needs it.
// Each operation names the stream it runs on (compute, TP, CP, DP, pipeline), which executes in
// order as a CUDA stream does, and the operations it waits for. step_executor.hpp plays it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/inline_vector.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

/// One micro-batch's forward on one pipeline stage at this layout: its compute, and what it waits
/// for besides (pipeline transfer, TP communication not overlapped without gradients, the host
/// where the evaluation dispatches eagerly).
struct MicroBatchForward {
  Duration compute;
  Duration waits;
};

enum class StreamKind { compute, tp, cp, dp, pp };
inline constexpr int kStreamKinds = 5;
const char* stream_name(StreamKind s);

/// What an operation is, for timelines and for attributing the step's time.
enum class Phase { forward, backward, optimizer, tp_comm, cp_comm, dp_comm, param_gather, pp_send };
const char* phase_name(Phase p);
inline bool is_compute(Phase p) { return p == Phase::forward || p == Phase::backward || p == Phase::optimizer; }

/// The operations one waits for: nearly always one to three, kept inline.
using OpDeps = InlineVector<std::uint32_t, 4>;

struct GraphOp {
  Phase phase = Phase::forward;
  StreamKind stream = StreamKind::compute;
  int stage = 0;
  int layer = -1;        // layer instance on the stage (names in StepGraph::layers), -1 none
  int micro_batch = -1;
  Duration work;         // compute: at the full rate; communication: alone on the network
  Duration straggle;     // compute: the part of `work` the slowest rank adds (step_model.hpp)
  double memory_share = 0;  // compute: the share of `work` HBM bandwidth bounds (element-wise kernels)
  int comm = -1;         // communication: index into StepGraph::comms
  int peer = -1;         // pipeline send: the stage it goes to
  OpDeps deps;
};

/// A collective or transfer: what the flow fidelity plays on the links.
struct GraphComm {
  CostTerms terms;
  Bytes bytes;
  std::size_t tier = 0;  // the outermost tier it crosses (its interference)
  Group group;           // for the chunk fidelity, which replays it rank by rank
  // How long its own HBM traffic on a rank would take at the accelerator's full bandwidth
  // (collective_memory_time): spread over the time it runs, the share of the bandwidth it takes.
  Duration memory_time;
};

struct StepGraph {
  std::vector<GraphOp> ops;      // in creation order: each stream runs its ops in this order
  std::vector<GraphComm> comms;
  std::vector<std::string> layers;  // layer instance names, by index
  int stages = 1;
  int buckets = 0;                  // gradient buckets per stage
  // One micro-batch's evaluation forward on the slowest stage (by compute plus waits), alone
  // (closed-form communication times at every fidelity)
  MicroBatchForward evaluation_forward;
  Duration compute_per_step;         // the slowest stage's compute per step, alone (straggler base)
  Flops flops_per_step;              // model FLOPs per step on one rank of the slowest stage
};

/// The step of `layout` for `workload` on `platform`; communication times from the closed forms
/// (the executor replaces them by flows at flow fidelity).
StepGraph build_step_graph(const Workload& workload, const Platform& platform, const ParallelLayout& layout);

/// A lower bound of that step from compute alone (communication, stragglers, the optimizer and
/// the host only add): the busiest stage's micro-batches one after another, and the last stage's
/// work between the pipeline's fill (the first micro-batch's forward through parts 0 .. PP-2)
/// and drain (the last one's backward back through them), (m + (PP - 1) / v) x a stage's work
/// per micro-batch where the parts are balanced. Zero for a layout build_step_graph refuses.
Duration step_compute_bound(const Workload& workload, const Platform& platform, const ParallelLayout& layout);

}  // namespace sp::models
