// The pipeline's two pure decisions, functions of sizes alone: which contiguous layers each part
// of the model holds, and in what order a stage runs its micro-batches' forwards and backwards
// (1F1B; Megatron's interleaved schedule with virtual stages). The step graph (step_graph.hpp)
// builds its operations in these orders, and the memory model (memory.hpp) counts each stage's
// layers and micro-batches in flight from them.
#pragma once

#include <vector>

#include "models/compute/compute_model.hpp"

namespace sp::models {

/// Contiguous parts of a model of `costs.size()` layer instances (Megatron's split, balanced by
/// cost): part j starts at the first instance whose cost midpoint passes j / parts of the total,
/// with at least one instance a part. Needs parts <= costs.size().
std::vector<std::vector<int>> split_contiguous(const std::vector<double>& costs, int parts);

/// The layer instances on each of `parts` parts, split on their forward + backward compute
/// (instance_computes): where the step graph runs them and the memory model counts them.
std::vector<std::vector<int>> split_on_compute(const std::vector<const LayerCompute*>& instances, int parts);

/// The micro-batches whose activations stage `stage` of `stages` holds at its peak: the forwards
/// it runs before its first backward, and that one. 1F1B (v = 1): min(stages - stage, m).
/// Interleaved: 2 (stages - stage - 1) + (v - 1) stages + 1 chunk forwards (at most m v), each
/// 1/v of the stage's layers (Korthikanti et al. 2023, section 4.2.3, for the first stage).
double micro_batches_in_flight(int stage, int stages, int virtual_stages, int micro_batches);

struct ScheduleUnit {
  bool forward = true;
  int chunk = 0;  // which of the stage's virtual stages (0 without interleaving)
  int micro_batch = 0;
};

/// Stage `stage`'s work in order. 1F1B (v = 1): (stages - stage - 1) forwards fill the pipeline,
/// then one forward one backward, then the remaining backwards. Interleaved (v > 1, Narayanan et
/// al. SC'21 section 2.2): units of (chunk, micro-batch), micro-batches in groups of `stages`
/// through each chunk in turn (backwards through the chunks in reverse), and
/// 2 (stages - stage - 1) + (v - 1) stages forward units before the first backward.
std::vector<ScheduleUnit> pipeline_order(int stage, int stages, int virtual_stages, int micro_batches);

}  // namespace sp::models
