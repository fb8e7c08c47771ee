// One data-parallel training step, simulated on the event engine for one representative rank
// (all ranks are identical, so one is enough):
//  - forward, then backward layer by layer in reverse order (compute stream);
//  - each gradient bucket's all-reduce is queued on the communication stream when backward has
//    produced it, and runs there in FIFO order (NCCL runs collectives on one stream), so it
//    overlaps with the rest of backward; its algorithm and protocol are the ones NCCL would pick;
//  - the optimizer step starts when backward and every all-reduce are done.
#pragma once

#include <cstdint>

#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct StepResult {
  Duration step;          // forward start to optimizer end
  Duration forward;
  Duration backward;
  Duration optimizer;
  Duration communication;  // sum of all-reduce durations
  Duration exposed_communication;  // step - forward - backward - optimizer
  int buckets = 0;
  std::uint64_t events = 0;  // engine events processed
};

/// `per_accelerator_batch` samples per rank (GBS / N; may be fractional under model parallelism);
/// collectives are timed at `fidelity`.
StepResult simulate_step(const Workload& workload, const Platform& platform, int accelerators,
                         double per_accelerator_batch, Fidelity fidelity = Fidelity::analytic);

}  // namespace sp::models
