// What the host costs per kernel it dispatches eagerly: a property of the host and its
// framework, read by workload files (`launch: eager`) and the compute model (compute/launch.hpp).
#pragma once

#include "sim/core/time.hpp"

namespace sp::models {

/// Host time per kernel of plain PyTorch eager (autocast, autograd, the dispatcher, the launch):
/// measured, `scalepoint compute-check` fitted on BERT-large's 18 eager passes on an H100 host
/// (calibration/data/gpu/h100/workloads.jsonl, PyTorch 2.11), held out on the Llama layer's.
inline Duration eager_dispatch() { return nanoseconds(36700); }

}  // namespace sp::models
