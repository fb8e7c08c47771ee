// One training step, simulated on the event engine for one representative rank of each role
// (ranks in the same role behave identically, so one stands for all):
//  - per micro-batch and pipeline stage, every layer instance runs forward and backward on a
//    roofline (FLOPs at peak x efficiency against bytes at memory bandwidth), the efficiency set
//    by the per-accelerator share of the micro-batch; tensor-parallel all-gathers and
//    reduce-scatters and context-parallel exchanges run beside it (hidden when overlapped);
//  - pipeline parallelism runs 1F1B: (m + p - 1) micro-batch slots, (p - 1) of them the bubble;
//  - gradients of the last micro-batch are bucketed in backward order; each bucket's all-reduce
//    (or reduce-scatter, with the distributed optimizer) over the data-parallel x context-parallel
//    group is queued on one communication stream when backward has produced it;
//  - the optimizer updates the rank's share of the trainable parameters; with the distributed
//    optimizer the updated parameters are all-gathered while the next forward starts;
//  - the step waits for the slowest rank: sigma x compute x E[max of N normals] (stragglers).
#pragma once

#include <cstdint>

#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "models/training/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct StepResult {
  Duration step;              // one training step, stragglers included (expected)
  Duration forward;           // compute of every micro-batch's forward on this stage
  Duration backward;          // and backward
  Duration tensor_parallel;   // TP and CP communication time (overlapped or not)
  Duration bubble;            // pipeline fill and drain
  Duration optimizer;
  Duration communication;     // data-parallel collectives (gradients, parameter gathers)
  Duration exposed_communication;  // what compute did not hide: step - compute - bubble - optimizer - stragglers
  Duration straggler;         // expected wait for the slowest rank
  Duration jittered_compute;  // compute subject to per-rank jitter (per step)
  Duration forward_per_micro_batch;  // one micro-batch's forward on one stage
  double compute_efficiency = 0;   // model FLOPs / (compute time x peak): MFU of the compute alone
  int buckets = 0;
  std::uint64_t events = 0;
};

StepResult simulate_step(const Workload& workload, const Platform& platform, const ParallelLayout& layout,
                         int accelerators, Fidelity fidelity = Fidelity::analytic);

}  // namespace sp::models
