#include "models/training/memory.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sp::models {

std::string MemoryEstimate::describe() const {
  const auto gb = [](Bytes b) { return b.value() / 1e9; };
  return fmt::format("needs {:.1f} GB per accelerator (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
                     "activations {:.1f}, reserved {:.1f}) of {:.1f} GB",
                     gb(total()), gb(weights), gb(gradients), gb(optimizer), gb(activations), gb(reserved),
                     gb(capacity));
}

MemoryEstimate estimate_memory(const Workload& w, const Accelerator& a, const ParallelLayout& l) {
  MemoryEstimate m;
  const double model_shard = 1.0 / (l.tp * l.pp);
  const double trainable = static_cast<double>(w.trainable_parameters()) * model_shard;
  m.weights = w.memory.weight_bytes_per_parameter * (static_cast<double>(w.total_parameters()) * model_shard);
  m.gradients = w.gradient_bytes_per_parameter * trainable;
  m.optimizer = w.memory.optimizer_bytes_per_trainable_parameter * (trainable / l.optimizer_shards);
  Bytes per_sample, working;
  for (const LayerGroup& g : w.layers) {
    // Full recompute keeps only each checkpointed layer's input (the hidden state it was handed,
    // where the file gives one) and, during a layer's backward, that one layer's activations again.
    const bool input_only =
        l.recompute == Recompute::full && g.checkpointed && g.pipeline_boundary.value() > 0 && g.backward_pass;
    const Bytes kept = l.recompute == Recompute::selective ? g.activations - g.attention_activations : g.activations;
    per_sample += (input_only ? g.pipeline_boundary : kept) * static_cast<double>(g.repeat);
    if (input_only && working < g.activations) working = g.activations;  // only a rerun layer rebuilds them
  }
  // Interleaved, the first stage runs 2 (p - 1) + (v - 1) p chunk forwards before its first
  // backward, each 1/v of its layers: p (1 + (p - 1) / (p v)) micro-batches' worth (Korthikanti
  // et al. 2023, section 4.2.3, for m >= p).
  const int v = l.virtual_stages;
  const double in_flight = v == 1 ? std::min(l.pp, l.micro_batches)
                                  : std::min(l.micro_batches * v, 2 * (l.pp - 1) + (v - 1) * l.pp + 1) / static_cast<double>(v);
  m.activations = per_sample * (static_cast<double>(l.micro_batch) * in_flight / (l.tp * l.cp * l.pp));
  m.activations += working * (static_cast<double>(l.micro_batch) / (l.tp * l.cp));
  m.reserved = w.memory.reserved;
  m.capacity = a.memory_capacity;
  return m;
}

}  // namespace sp::models
