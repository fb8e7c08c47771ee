// One training step, simulated: its op graph per pipeline stage (step_graph.hpp) played on the
// event engine (step_executor.hpp), communication at the chosen fidelity. The rank the graph
// stands for is the slowest of N: every collective, and so the step, waits for it. Each
// accelerator's speed differs from the kind's by a persistent spread between GPUs
// (Platform::gpu_speed_spread) and a step-to-step jitter (compute_jitter), independent normals;
// each step the slowest of N is sigma x E[max of N standard normals] slower (stragglers.hpp),
// sigma = sqrt(spread^2 + jitter^2), so every compute operation of the graph runs that much longer
// (GraphOp::straggle), where collectives and the pipeline can or cannot hide it. In a pipeline
// whose stages compute for different times the slowest stage sets the pace, and a shorter stage's
// slow GPU counts only where it overtakes it (expected_slowest_pace). From the timeline:
//  - the step's time: the last operation's end, after the host's time per step;
//  - where it went, on the stage that ends last, whose compute stream is always either busy or
//    waiting: compute at the full rate (forward, backward, optimizer), its slowdown while
//    communication held SMs (interference), and each wait attributed to what it waited for: a
//    pipeline transfer (the bubble), tensor- or context-parallel communication, data-parallel
//    communication (exposed); these add up to the step;
//  - the critical path: walking back from the last operation through whichever of its inputs
//    (or its stream's previous operation) ended last, its time by phase.
#pragma once

#include <array>
#include <cstdint>

#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/step/step_executor.hpp"
#include "models/step/step_graph.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

inline constexpr int kPhases = 8;

struct StepResult {
  Duration step;              // one training step, stragglers included (expected)
  Duration forward;           // compute of every micro-batch's forward on this stage, at the full rate
  Duration backward;          // and backward
  Duration optimizer;
  Duration interference;      // compute's slowdown while communication held SMs
  Duration bubble;            // compute waiting for pipeline transfers
  Duration exposed_tensor_parallel;  // compute waiting for TP/CP communication
  Duration exposed_communication;    // compute waiting for any communication (TP, CP, DP)
  Duration straggler;         // compute of the slowest rank beyond the kind's (its operations' straggle)
  Duration host;              // the step's host time the accelerator waits for (Workload::host_per_step)
  Duration tensor_parallel;   // TP and CP communication time (busy, overlapped or not)
  Duration communication;     // data-parallel collectives (gradients, parameter gathers), busy
  Duration pipeline_transfer; // pipeline sends, busy
  Duration jittered_compute;  // compute subject to per-rank spread and jitter (per step, slowest stage)
  MicroBatchForward evaluation_forward;  // one micro-batch's evaluation forward (StepGraph)
  std::array<Duration, kPhases> critical;  // the critical path's time, by Phase
  double compute_efficiency = 0;   // model FLOPs / (compute time x peak): MFU of the compute alone
  int buckets = 0;
  std::uint64_t events = 0;
};

/// The graph and its timeline, for a trace file.
struct StepTrace {
  StepGraph graph;
  Execution execution;
  Duration host;  // the host's time per step, before the graph's operations
};

/// Micro-batches per step the graph holds at most; a step of more (gradient accumulation over a huge
/// global batch) is simulated at this many and one more, and extrapolated (exact past the
/// pipeline's fill: each micro-batch adds the same time), so memory does not grow with the batch.
inline constexpr int kMaxSimulatedMicroBatches = 64;

/// How much longer the slowest of N ranks computes than the kind: sigma x E[max of N normals].
double straggler_factor(const Platform& platform, int accelerators);
/// The same for a pipeline whose stages compute `stage_compute` per step: the slowest stage sets
/// the pace, so a stage shorter than the longest absorbs its own slow GPU (stragglers.hpp).
double straggler_factor(const Platform& platform, int accelerators, const std::vector<Duration>& stage_compute);
/// Every compute operation of `graph` made as long as the slowest of N ranks' (GraphOp::straggle).
void add_stragglers(StepGraph& graph, const Platform& platform, int accelerators);

StepResult simulate_step(const Workload& workload, const Platform& platform, const ParallelLayout& layout,
                         int accelerators, Fidelity fidelity = Fidelity::analytic, StepTrace* trace = nullptr);

/// A lower bound of simulate_step's step at any fidelity, without simulating it: the compute
/// bound of the graph (step_compute_bound: each stage's work, the pipeline's fill and drain) at
/// the pace of the slowest of the longest stage's N / PP ranks, which is at most the straggler
/// factor's (equal to it without a pipeline), and the host's time. Communication and the
/// interference it causes only add.
Duration step_lower_bound(const Workload& workload, const Platform& platform, const ParallelLayout& layout,
                          int accelerators);
/// A tighter one, at the cost of building the step's graph: its operations at their own times,
/// the stragglers' included, waiting only for their dependencies and streams (uncontended_end:
/// without communication's interference on compute; without communication at all but at the
/// analytic fidelity, whose collective times the graph holds).
Duration step_graph_lower_bound(const Workload& workload, const Platform& platform, const ParallelLayout& layout,
                                int accelerators, Fidelity fidelity);

/// "backward 55 %; forward 27 %; dp_comm 12 %": the critical path's phases above 1 %, largest first.
std::string describe_critical_path(const StepResult& r);

/// The timeline as Chrome trace JSON (chrome://tracing, Perfetto): a process per pipeline stage, a
/// thread per stream, an event per operation (its straggler time as an argument), and the host's
/// time per step first, times in microseconds.
std::string chrome_trace(const StepTrace& trace);

/// `text` as a JSON string literal: quotes and backslashes escaped, control characters as \uXXXX.
std::string json_string(const std::string& text);

}  // namespace sp::models
