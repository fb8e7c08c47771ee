#include "calibration/transformer/transformer_validation.hpp"

#include <optional>

#include <fmt/format.h>

#include "models/training/memory.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/output/manifest.hpp"

namespace sp::calibration {

namespace {

std::int64_t count(const config::CsvTable& t, std::size_t row, const char* column) {
  const auto v = t.integer(row, column);
  if (!v || *v < 1 || *v > config::kMaxCount) t.fail(row, column, "needs a whole number from 1 to 10^9");
  return *v;
}

// The run's model as a workload file would give it: Megatron's GPT (LayerNorm, GeLU, biases, the
// output layer tied to the embedding, learned positions, hidden and attention dropout, unfused
// attention, fused LayerNorm, bias-dropout-add and bias-GeLU kernels: Shoeybi et al. 2019,
// arXiv 1909.08053, and the Megatron-LM code of the paper's runs), mixed precision with fp32
// master weights and Adam.
std::string workload_yaml(const config::CsvTable& t, std::size_t row) {
  return fmt::format(
      "name: {name}\nmlperf_benchmark: \"\"\ndescription: {description}\nsample: sequence\n"
      "precision: bf16\n"
      "gradient_bytes_per_parameter: \"4 B\"\n"      // fp32 main gradients (Megatron's mixed precision)
      "gradient_bucket: \"40 MB\"\n"
      // Megatron's Adam step (megatron/optimizer of the paper's code, as llama3_405b_pretrain.yaml):
      // the gradient norm 4 B, apex FusedAdam 28 B, the bf16 copy of the fp32 parameter 6 B, and,
      // without the distributed optimizer, the whole fp32 gradient buffer zeroed for the next
      // step (zero_grad_buffer) 4 B: 42 B a parameter of the rank.
      "optimizer_traffic_per_parameter: \"42 B\"\n"
      // Megatron's element-wise kernels are described as they run (fused), so nothing is left for
      // software_efficiency to fuse: 1; Megatron of 2022 dispatches its kernels eagerly (no CUDA graphs)
      "compute: {{software_efficiency: 1.0, software_efficiency_range: [0.5, 10.0], launch: eager}}\n"
      // Unfused attention: the paper's runs keep and recompute the s x s scores (its section 4: the
      // softmax output, dropout mask and output, 5 a s^2 bytes a layer, are what selective recompute
      // saves; FlashAttention came to Megatron later).
      "transformer: {{layers: {layers}, hidden: {hidden}, heads: {heads}, ffn: {ffn}, activation: gelu, norm: layernorm,"
      " bias: true, tied_embeddings: true, vocabulary: {vocab}, sequence: {seq}, attention: unfused,"
      " position: learned, elementwise: fused, dropout: true}}\n"
      "dataset: {{train_samples: 1000000}}\n"
      "evaluation: {{timed: false, samples: 1, interval: {{epochs: 1}}}}\n"
      "convergence: {{unit: samples, points: [{{global_batch: 1, mean: 1000000, stdev: 0, runs: 1, pruned: true}}]}}\n"
      "memory: {{weight_bytes_per_parameter: \"2 B\", optimizer_bytes_per_trainable_parameter: \"12 B\", reserved: \"4 GiB\"}}\n"
      "runs_per_result: 1\ntypical_global_batch: {{1: 1}}\n",
      // Quoted and escaped: a cell with a quote or backslash is the model's name, not YAML.
      fmt::arg("name", output::yaml_quote(t.cell(row, "model"))),
      fmt::arg("description", output::yaml_quote(t.cell(row, "model") + " (" + t.cell(row, "source") + ")")),
      fmt::arg("layers", count(t, row, "layers")), fmt::arg("hidden", count(t, row, "hidden")),
      fmt::arg("heads", count(t, row, "heads")), fmt::arg("ffn", count(t, row, "ffn")),
      fmt::arg("vocab", count(t, row, "vocabulary")), fmt::arg("seq", count(t, row, "sequence")));
}

models::Recompute recompute_of(const config::CsvTable& t, std::size_t row) {
  const std::string& v = t.cell(row, "recompute");
  if (v == "none") return models::Recompute::none;
  if (v == "selective") return models::Recompute::selective;
  if (v == "full") return models::Recompute::full;
  t.fail(row, "recompute", "unknown recompute '" + v + "' (valid: none, selective, full)");
}

}  // namespace

std::vector<TransformerRun> validate_transformers(const config::CsvTable& t, const models::Platform& p,
                                                  const models::Catalog&) {
  for (const char* c : {"model", "layers", "hidden", "heads", "ffn", "vocabulary", "sequence", "tensor", "pipeline",
                        "virtual_stages", "accelerators", "global_batch", "micro_batch", "recompute",
                        "sequence_parallel", "measured_iteration_s", "source"}) {
    if (!t.has_column(c)) {
      throw InputError({t.file(), 1, 0}, c, "missing column", "the columns are those of calibration/data/transformer/*.csv");
    }
  }
  std::vector<TransformerRun> out;
  for (std::size_t row = 0; row < t.rows(); ++row) {
    TransformerRun r;
    r.model = t.cell(row, "model");
    r.source = t.cell(row, "source");
    const auto measured = t.number(row, "measured_iteration_s");
    if (!measured || !(*measured > 0)) t.fail(row, "measured_iteration_s", "needs a time in seconds above 0");
    // An iteration from a millisecond to a day: beyond either end a unit slipped.
    if (!(*measured >= 1e-3 && *measured <= 86'400)) t.fail(row, "measured_iteration_s", "must be from 0.001 to 86400 s");
    r.measured_s = *measured;
    r.accelerators = static_cast<int>(count(t, row, "accelerators"));
    // The row's dimensions become a workload description; what that refuses is the row's column
    // (transformer.heads -> heads), located at the row, not at the generated text's line.
    std::optional<models::Workload> parsed;
    try {
      parsed = models::parse_workload(config::load_string(workload_yaml(t, row), t.file()));
    } catch (const InputError& e) {
      const std::string key = e.key().rfind("transformer.", 0) == 0 ? e.key().substr(12) : e.key();
      throw InputError(SourceLocation{t.file(), t.line(row), 0}, t.has_column(key) ? key : e.key(), e.message(), e.hint());
    }
    const models::Workload& w = *parsed;
    models::ParallelSpec spec;
    spec.tensor = static_cast<int>(count(t, row, "tensor"));
    spec.pipeline = static_cast<int>(count(t, row, "pipeline"));
    spec.virtual_stages = static_cast<int>(count(t, row, "virtual_stages"));
    spec.micro_batch = static_cast<int>(count(t, row, "micro_batch"));
    spec.recompute = recompute_of(t, row);
    const std::string& sp = t.cell(row, "sequence_parallel");
    if (sp != "true" && sp != "false") t.fail(row, "sequence_parallel", "needs true or false");
    spec.sequence_parallel = sp == "true";
    spec.overlap_tensor_parallel = false;  // Megatron of 2022 waits for its TP collectives
    spec.distributed_optimizer = models::Sharding::none;
    std::string why;
    const auto layout = models::resolve_layout(spec, p.topology, r.accelerators, count(t, row, "global_batch"), why);
    if (!layout) t.fail(row, "accelerators", "no layout: " + why);
    r.layout = layout->describe();
    const models::MemoryEstimate m = models::estimate_memory(w, p.accelerator, *layout);
    r.memory_gb = m.total().value() / 1e9;
    r.states_activations_gb = (m.total() - m.reserved).value() / 1e9;
    if (t.has_column("published_memory_gib") && !t.cell(row, "published_memory_gib").empty()) {
      const auto gib = t.number(row, "published_memory_gib");
      if (!gib || !(*gib > 0)) t.fail(row, "published_memory_gib", "needs GiB above 0, or nothing");
      r.published_memory_gb = *gib * 1.073741824;
    }
    r.fits = m.fits();
    r.step = models::simulate_step(w, p, *layout, r.accelerators);
    r.predicted_s = to_seconds(r.step.step);
    out.push_back(r);
  }
  return out;
}

}  // namespace sp::calibration
