// Memory feasibility: what one accelerator holds for a layout, against its capacity. Weights and
// gradients are split by tensor and pipeline parallelism; optimizer states also by the data- and
// context-parallel group with the distributed optimizer (ZeRO-1); activations of the micro-batches
// in flight (1F1B keeps up to p of them on the first stage) by context parallelism and by tensor
// parallelism, except the sequence region without sequence parallelism and what every TP rank
// keeps whole (LayerGroup::sequence_activations, tp_replicated_activations). FP8 storage only on
// accelerators with FP8 GEMMs.
#pragma once

#include <string>

#include "models/hardware/accelerator.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct MemoryEstimate {
  Bytes weights, gradients, optimizer, activations, reserved;
  Bytes capacity;
  bool fp8_activation_input = false;  // the activation function's input kept in fp8 (MemoryRule)

  Bytes total() const { return weights + gradients + optimizer + activations + reserved; }
  bool fits() const { return !(capacity < total()); }
  /// "needs 412.3 GB per accelerator (weights 17.2, gradients ..., reserved 6.4) of 80.0 GB"
  std::string describe() const;
};

MemoryEstimate estimate_memory(const Workload& w, const Accelerator& a, const ParallelLayout& layout);

}  // namespace sp::models
