// Memory feasibility: what one accelerator holds for a layout, against its capacity, on the
// pipeline stage that holds the most. Each stage holds the layers the step graph places on it
// (split_on_compute: the first stage the embedding, the last the output layer and its loss, each
// with its own share of the layers) and the activations of the micro-batches it has in flight
// (1F1B: p - s on stage s, micro_batches_in_flight). Weights and gradients are split by tensor
// parallelism; optimizer states also by the data- and context-parallel group with the distributed
// optimizer (ZeRO-1); activations by context parallelism and by tensor parallelism, except the
// sequence region without sequence parallelism and what every TP rank keeps whole
// (LayerGroup::sequence_activations, tp_replicated_activations). FP8 storage only on accelerators
// with FP8 GEMMs.
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
  int stage = 0, stages = 1;          // the pipeline stage these are of (the one that holds the most)

  Bytes total() const { return weights + gradients + optimizer + activations + reserved; }
  bool fits() const { return !(capacity < total()); }
  /// "needs 412.3 GB per accelerator on pipeline stage 1 of 16 (weights 17.2, gradients ...,
  /// reserved 6.4) of 80.0 GB"
  std::string describe() const;
};

MemoryEstimate estimate_memory(const Workload& w, const Accelerator& a, const ParallelLayout& layout);

}  // namespace sp::models
