#include "calibration/compute/compute_check.hpp"

#include <cmath>
#include <map>

#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

namespace {

// Fused Adam(W) with fp32 states reads parameter, gradient, m, v and writes parameter, m, v.
constexpr double kAdamBytesPerParameter = 28;
constexpr double kOptimizerKernels = 4;  // multi-tensor launches

struct Config {
  const char* kind;
  const char* workload;
  const char* layer;       // one layer group only, or nullptr for the whole model
  int tp = 1;
  const char* batch_key;   // "b" samples, or "T" tokens of one sequence
};

const Config kConfigs[] = {
    {"bert", "bert", nullptr, 1, "b"},
    {"llama_tp4_layer", "llama2_70b_lora", "decoder_layer", 4, "T"},
    {"retinanet", "retinanet", nullptr, 1, "b"},
};

bool checked_mode(const std::string& mode) {
  return mode == "graph_fwdbwd" || mode == "graph_step" || mode == "graph_step_compute_only";
}

// The modelled time of one configuration before any software factor, and its kernel count.
std::pair<double, double> model(const Config& c, const models::Workload& w, const models::Accelerator& a, double batch,
                                bool with_optimizer) {
  models::Shard s;
  s.samples = c.batch_key[0] == 'T' ? 1 : batch;
  s.tokens_per_sample = c.batch_key[0] == 'T' ? batch : w.tokens_per_sample;
  s.tp = c.tp;
  s.sequence_parallel = false;  // plain PyTorch: norms run on every token on every TP rank
  double seconds = 0, kernels = 0;
  std::int64_t trainable = 0;
  for (const models::LayerGroup& l : w.layers) {
    if (c.layer != nullptr && l.name != c.layer) continue;
    const models::LayerCompute lc = models::layer_compute(l, w, a, s, "bf16");
    const double n = c.layer != nullptr ? 1 : l.repeat;
    seconds += n * to_seconds(lc.forward.time + lc.backward.time);
    kernels += n * (lc.forward.kernels + lc.backward.kernels);
    trainable += (c.layer != nullptr ? 1 : l.repeat) * l.trainable_parameters;
  }
  if (with_optimizer) {
    const Bytes bytes(kAdamBytesPerParameter * static_cast<double>(trainable) / c.tp);
    seconds += to_seconds(models::stream_time(a, bytes, kOptimizerKernels));
    kernels += kOptimizerKernels;
  }
  return {seconds, kernels};
}

}  // namespace

ComputeCheck run_compute_check(const std::string& file, const models::Accelerator& accelerator,
                               const models::Catalog& catalog) {
  ComputeCheck out;
  out.accelerator = accelerator.name;
  models::Accelerator a = accelerator;
  a.efficiency_scale = 1;
  std::map<std::string, models::Workload> workloads;
  for (const Config& c : kConfigs) {
    models::Workload w = *catalog.find_workload(c.workload);
    w.software_efficiency = 1;  // the factor is this check's, fitted below
    workloads.emplace(c.kind, std::move(w));
  }
  std::map<std::pair<std::string, double>, double> profiled;  // (kind, batch) -> kernels
  for (const config::ConfigNode& row : config::load_json_lines(config::read_text_file(file), file)) {
    const std::string kind = row.at("kind").as_string();
    const Config* c = nullptr;
    for (const Config& k : kConfigs) c = kind == k.kind ? &k : c;
    if (c == nullptr || !row.has("mode")) continue;
    const std::string mode = row.at("mode").as_string();
    const double batch = row.at(c->batch_key).as_positive_number();
    if (mode == "profile_fwdbwd") profiled[{kind, batch}] = row.at("kernels").as_positive_number();
    if (!checked_mode(mode)) continue;
    CheckRow r;
    r.line = row.location().line;
    r.kind = kind;
    r.mode = mode;
    r.batch = batch;
    r.measured_s = row.at("ms").as_positive_number() / 1e3;
    std::tie(r.modelled_s, r.kernels) = model(*c, workloads.at(kind), a, batch, mode != "graph_fwdbwd");
    out.rows.push_back(r);
  }
  if (out.rows.empty()) throw InputError(SourceLocation{file, 0, 0}, "", "no graph-timed configuration to check");
  double sum = 0;
  std::map<std::string, std::pair<double, int>> by_kind;
  for (CheckRow& r : out.rows) {
    if (r.mode == "graph_fwdbwd") {
      if (auto it = profiled.find({r.kind, r.batch}); it != profiled.end()) r.measured_kernels = it->second;
    }
    const double l = std::log(r.modelled_s / r.measured_s);
    sum += l;
    by_kind[r.kind].first += l;
    ++by_kind[r.kind].second;
  }
  out.common_factor = std::exp(sum / static_cast<double>(out.rows.size()));
  for (const auto& [kind, s] : by_kind) out.factor[kind] = std::exp(s.first / s.second);
  for (CheckRow& r : out.rows) {
    r.error = r.modelled_s / out.factor.at(r.kind) / r.measured_s - 1;
    r.common_error = r.modelled_s / out.common_factor / r.measured_s - 1;
  }
  return out;
}

}  // namespace sp::calibration
