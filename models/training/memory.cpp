#include "models/training/memory.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/compute/compute_model.hpp"
#include "models/hardware/kernel_costs.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace sp::models {

std::string MemoryEstimate::describe() const {
  const auto gb = [](Bytes b) { return b.value() / 1e9; };
  return fmt::format("needs {:.1f} GB per accelerator{} (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
                     "activations {:.1f}{}, reserved {:.1f}) of {:.1f} GB",
                     gb(total()), stages > 1 ? fmt::format(" on pipeline stage {} of {}", stage + 1, stages) : "",
                     gb(weights), gb(gradients), gb(optimizer), gb(activations),
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

// The layer instances (a group once per repeat) on each pipeline stage: the parts the step graph
// splits the model into (split_on_compute on the same compute), part j on stage j mod PP.
std::vector<std::vector<const LayerGroup*>> stage_layers(const Workload& w, const Accelerator& a, const ParallelLayout& l) {
  std::vector<const LayerGroup*> instances;
  for (const LayerGroup& g : w.layers) instances.insert(instances.end(), static_cast<std::size_t>(g.repeat), &g);
  std::vector<std::vector<const LayerGroup*>> stages(static_cast<std::size_t>(l.pp));
  const int parts = l.pp * l.virtual_stages;
  if (parts == 1) {
    stages[0] = instances;
    return stages;
  }
  std::vector<std::vector<int>> split;
  if (static_cast<int>(instances.size()) >= parts) {
    const std::vector<LayerCompute> computes = instance_computes(w, a, l);
    std::vector<const LayerCompute*> pointers;
    for (const LayerCompute& c : computes) pointers.push_back(&c);
    split = split_on_compute(pointers, parts);
  } else {  // fewer layers than parts (the step graph refuses it): one a part, the rest empty
    split.resize(static_cast<std::size_t>(parts));
    for (std::size_t k = 0; k < instances.size(); ++k) split[k] = {static_cast<int>(k)};
  }
  for (std::size_t j = 0; j < split.size(); ++j) {
    for (int k : split[j]) stages[j % stages.size()].push_back(instances[static_cast<std::size_t>(k)]);
  }
  return stages;
}

// What stage `stage` holds, its layers `layers`. `narrowest`: the element bytes of the narrowest
// GEMM precision the accelerator runs (fp8, or what fp8 falls back to there).
MemoryEstimate estimate_stage(const Workload& w, const Accelerator& a, const ParallelLayout& l, int stage,
                              const std::vector<const LayerGroup*>& layers, Bytes narrowest, bool fp8_activation_input) {
  MemoryEstimate m;
  m.fp8_activation_input = fp8_activation_input;
  m.stage = stage;
  m.stages = l.pp;
  double parameters = 0, trainable = 0;
  for (const LayerGroup* g : layers) {
    parameters += static_cast<double>(g->parameters) / l.tp;
    trainable += static_cast<double>(g->trainable_parameters) / l.tp;
  }
  // FP8 weights (fp8_params) only where the accelerator runs FP8 GEMMs; elsewhere the workload's
  // GEMMs fall back to bf16 (kernel_costs.hpp gemm_dtype), and so do the weights they read.
  const Bytes weight_bytes = std::max(w.memory.weight_bytes_per_parameter, narrowest);
  m.weights = weight_bytes * parameters;
  m.gradients = w.gradient_bytes_per_parameter * trainable;
  m.optimizer = w.memory.optimizer_bytes_per_trainable_parameter * (trainable / l.optimizer_shards);
  Kept per_sample, working;
  double working_total = -1;
  for (const LayerGroup* g : layers) {
    // Without sequence parallelism every TP rank keeps the sequence region whole (Korthikanti et
    // al. 2023, Table 2: 10 s b h of 34 not divided by t).
    const Bytes whole = g->tp_replicated_activations + (l.sequence_parallel ? Bytes(0) : g->sequence_activations);
    const Bytes all = g->activations - (fp8_activation_input ? g->fp8_activation_saving : Bytes(0));
    // Full recompute keeps only each checkpointed layer's input (the hidden state it was handed,
    // where the file gives one: the sequence region) and, during a layer's backward, that one
    // layer's activations again.
    const bool input_only =
        l.recompute == Recompute::full && g->checkpointed && g->pipeline_boundary.value() > 0 && g->backward_pass;
    if (input_only) {
      per_sample.add(g->pipeline_boundary, l.sequence_parallel ? Bytes(0) : g->pipeline_boundary, 1);
      if (working_total < all.value()) {  // only a rerun layer rebuilds them
        working_total = all.value();
        working = {};
        working.add(all, whole, 1);
      }
      continue;
    }
    const Bytes kept = l.recompute == Recompute::selective ? all - g->attention_activations : all;
    per_sample.add(kept, whole, 1);
  }
  const double in_flight = micro_batches_in_flight(stage, l.pp, l.virtual_stages, l.micro_batches);
  const auto per_rank = [&l](const Kept& k) { return k.split / l.tp + k.whole; };
  m.activations = Bytes(per_rank(per_sample) * static_cast<double>(l.micro_batch) * in_flight / l.cp);
  m.activations += Bytes(per_rank(working) * static_cast<double>(l.micro_batch) / l.cp);
  m.reserved = w.memory.reserved;
  m.capacity = a.memory_capacity;
  return m;
}

// The stage that holds the most.
MemoryEstimate estimate(const Workload& w, const Accelerator& a, const ParallelLayout& l,
                        const std::vector<std::vector<const LayerGroup*>>& stages, Bytes narrowest,
                        bool fp8_activation_input) {
  MemoryEstimate most;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    MemoryEstimate m = estimate_stage(w, a, l, static_cast<int>(s), stages[s], narrowest, fp8_activation_input);
    if (s == 0 || most.total() < m.total()) most = m;
  }
  return most;
}

}  // namespace

MemoryEstimate estimate_memory(const Workload& w, const Accelerator& a, const ParallelLayout& l) {
  // TransformerEngine keeps the activation's input in fp8 only on accelerators with FP8 GEMMs.
  const std::string narrowest = gemm_dtype(a, "fp8");
  const Bytes bytes(element_bytes(narrowest));
  const Fp8Store store = narrowest == "fp8" ? w.memory.fp8_activation_input : Fp8Store::never;
  const auto stages = stage_layers(w, a, l);
  if (store == Fp8Store::always) return estimate(w, a, l, stages, bytes, true);
  MemoryEstimate m = estimate(w, a, l, stages, bytes, false);
  if (store == Fp8Store::where_needed && !m.fits()) m = estimate(w, a, l, stages, bytes, true);
  return m;
}

}  // namespace sp::models
