#include "models/training/memory.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "models/hardware/kernel_costs.hpp"

namespace sp::models {

std::string MemoryEstimate::describe() const {
  const auto gb = [](Bytes b) { return b.value() / 1e9; };
  return fmt::format("needs {:.1f} GB per accelerator (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
                     "activations {:.1f}{}, reserved {:.1f}) of {:.1f} GB",
                     gb(total()), gb(weights), gb(gradients), gb(optimizer), gb(activations),
                     fp8_activation_input ? " with the activation function's input in fp8" : "", gb(reserved),
                     gb(capacity));
}

namespace {

// What a layer keeps per sample and instance, as what TP splits and what each TP rank keeps whole.
struct Kept {
  double split = 0, whole = 0;
  void add(const Bytes& all, const Bytes& whole_part, double times) {
    split += (all - whole_part).value() * times;
    whole += whole_part.value() * times;
  }
};

// `narrowest`: the element bytes of the narrowest GEMM precision the accelerator runs (fp8, or
// what fp8 falls back to there).
MemoryEstimate estimate(const Workload& w, const Accelerator& a, const ParallelLayout& l, Bytes narrowest,
                        bool fp8_activation_input) {
  MemoryEstimate m;
  m.fp8_activation_input = fp8_activation_input;
  const double model_shard = 1.0 / (l.tp * l.pp);
  const double trainable = static_cast<double>(w.trainable_parameters()) * model_shard;
  // FP8 weights (fp8_params) only where the accelerator runs FP8 GEMMs; elsewhere the workload's
  // GEMMs fall back to bf16 (kernel_costs.hpp gemm_dtype), and so do the weights they read.
  const Bytes weight_bytes = std::max(w.memory.weight_bytes_per_parameter, narrowest);
  m.weights = weight_bytes * (static_cast<double>(w.total_parameters()) * model_shard);
  m.gradients = w.gradient_bytes_per_parameter * trainable;
  m.optimizer = w.memory.optimizer_bytes_per_trainable_parameter * (trainable / l.optimizer_shards);
  Kept per_sample, working;
  double working_total = -1;
  for (const LayerGroup& g : w.layers) {
    // Without sequence parallelism every TP rank keeps the sequence region whole (Korthikanti et
    // al. 2023, Table 2: 10 s b h of 34 not divided by t).
    const Bytes whole = g.tp_replicated_activations + (l.sequence_parallel ? Bytes(0) : g.sequence_activations);
    const Bytes all = g.activations - (fp8_activation_input ? g.fp8_activation_saving : Bytes(0));
    // Full recompute keeps only each checkpointed layer's input (the hidden state it was handed,
    // where the file gives one: the sequence region) and, during a layer's backward, that one
    // layer's activations again.
    const bool input_only =
        l.recompute == Recompute::full && g.checkpointed && g.pipeline_boundary.value() > 0 && g.backward_pass;
    const double times = static_cast<double>(g.repeat);
    if (input_only) {
      per_sample.add(g.pipeline_boundary, l.sequence_parallel ? Bytes(0) : g.pipeline_boundary, times);
      if (working_total < all.value()) {  // only a rerun layer rebuilds them
        working_total = all.value();
        working = {};
        working.add(all, whole, 1);
      }
      continue;
    }
    const Bytes kept = l.recompute == Recompute::selective ? all - g.attention_activations : all;
    per_sample.add(kept, whole, times);
  }
  // Interleaved, the first stage runs 2 (p - 1) + (v - 1) p chunk forwards before its first
  // backward, each 1/v of its layers: p (1 + (p - 1) / (p v)) micro-batches' worth (Korthikanti
  // et al. 2023, section 4.2.3, for m >= p).
  const int v = l.virtual_stages;
  const double in_flight = v == 1 ? std::min(l.pp, l.micro_batches)
                                  : std::min(l.micro_batches * v, 2 * (l.pp - 1) + (v - 1) * l.pp + 1) / static_cast<double>(v);
  const auto per_rank = [&l](const Kept& k) { return k.split / l.tp + k.whole; };
  m.activations = Bytes(per_rank(per_sample) * static_cast<double>(l.micro_batch) * in_flight / (l.cp * l.pp));
  m.activations += Bytes(per_rank(working) * static_cast<double>(l.micro_batch) / l.cp);
  m.reserved = w.memory.reserved;
  m.capacity = a.memory_capacity;
  return m;
}

}  // namespace

MemoryEstimate estimate_memory(const Workload& w, const Accelerator& a, const ParallelLayout& l) {
  // TransformerEngine keeps the activation's input in fp8 only on accelerators with FP8 GEMMs.
  const std::string narrowest = gemm_dtype(a, "fp8");
  const Bytes bytes(element_bytes(narrowest));
  const Fp8Store store = narrowest == "fp8" ? w.memory.fp8_activation_input : Fp8Store::never;
  if (store == Fp8Store::always) return estimate(w, a, l, bytes, true);
  MemoryEstimate m = estimate(w, a, l, bytes, false);
  if (store == Fp8Store::where_needed && !m.fits()) m = estimate(w, a, l, bytes, true);
  return m;
}

}  // namespace sp::models
