#include "calibration/compute/compute_check.hpp"

#include <algorithm>
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

bool graph_mode(const std::string& mode) {
  return mode == "graph_fwdbwd" || mode == "graph_step" || mode == "graph_step_compute_only";
}
bool eager_mode(const std::string& mode) {
  return mode == "eager_fwdbwd" || mode == "eager_step" || mode == "eager_step_compute_only";
}

struct Modelled {
  double seconds = 0, kernels = 0;
  std::vector<models::KernelRun> runs;  // forward in layer order, backward in reverse, optimizer
};

// One configuration before any software factor: device time, kernels, and the kernels in order.
Modelled model(const Config& c, const models::Workload& w, const models::Accelerator& a, double batch,
               bool with_optimizer) {
  models::Shard s;
  s.samples = c.batch_key[0] == 'T' ? 1 : batch;
  s.tokens_per_sample = c.batch_key[0] == 'T' ? batch : w.tokens_per_sample;
  s.tp = c.tp;
  s.sequence_parallel = false;  // plain PyTorch: norms run on every token on every TP rank
  Modelled m;
  std::int64_t trainable = 0;
  std::vector<std::vector<models::KernelRun>> backward;
  for (const models::LayerGroup& l : w.layers) {
    if (c.layer != nullptr && l.name != c.layer) continue;
    const models::LayerCompute lc = models::layer_compute(l, w, a, s, "bf16");
    const int n = c.layer != nullptr ? 1 : l.repeat;
    m.seconds += n * to_seconds(lc.forward.time + lc.backward.time);
    m.kernels += n * (lc.forward.kernels + lc.backward.kernels);
    trainable += n * l.trainable_parameters;
    for (int i = 0; i < n; ++i) {
      m.runs.insert(m.runs.end(), lc.forward.runs.begin(), lc.forward.runs.end());
      backward.push_back(lc.backward.runs);
    }
  }
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) m.runs.insert(m.runs.end(), it->begin(), it->end());
  if (with_optimizer) {
    const Bytes bytes(kAdamBytesPerParameter * static_cast<double>(trainable) / c.tp);
    const Duration t = models::stream_time(a, bytes, kOptimizerKernels);
    m.seconds += to_seconds(t);
    m.kernels += kOptimizerKernels;
    m.runs.push_back(models::KernelRun{kOptimizerKernels, scale(t, 1.0 / kOptimizerKernels)});
  }
  return m;
}

std::vector<models::KernelRun> scaled(std::vector<models::KernelRun> runs, double factor) {
  for (models::KernelRun& r : runs) r.each = scale(r.each, 1.0 / factor);
  return runs;
}

// The dispatch cost that best predicts `rows` (least squares on log time; golden-section search,
// the sum being unimodal in the dispatch cost): each row's kernels and its measured seconds.
double fit_dispatch(const std::vector<std::pair<std::vector<models::KernelRun>, double>>& rows) {
  const auto loss = [&](double d) {
    double s = 0;
    for (const auto& [runs, measured] : rows) {
      const double l = std::log(to_seconds(models::issued_time(runs, seconds(d))) / measured);
      s += l * l;
    }
    return s;
  };
  double lo = 0, hi = 1e-3;  // a millisecond per kernel is far beyond any dispatcher
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 80; ++i) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    (loss(a) < loss(b) ? hi : lo) = loss(a) < loss(b) ? b : a;
  }
  return 0.5 * (lo + hi);
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
  std::vector<std::vector<models::KernelRun>> runs;            // parallel to out.rows
  for (const config::ConfigNode& row : config::load_json_lines(config::read_text_file(file), file)) {
    const std::string kind = row.at("kind").as_string();
    const Config* c = nullptr;
    for (const Config& k : kConfigs) c = kind == k.kind ? &k : c;
    if (c == nullptr || !row.has("mode")) continue;
    const std::string mode = row.at("mode").as_string();
    // Whole samples or tokens, at most 10^9 as every count.
    const double batch = static_cast<double>(row.at(c->batch_key).as_count());
    if (mode == "profile_fwdbwd") profiled[{kind, batch}] = row.at("kernels").as_positive_number();
    if (!graph_mode(mode) && !eager_mode(mode)) continue;
    CheckRow r;
    r.line = row.location().line;
    r.kind = kind;
    r.mode = mode;
    r.batch = batch;
    r.eager = eager_mode(mode);
    r.measured_s = row.at("ms").as_positive_number() / 1e3;
    // A pass of one GPU: microseconds to minutes (1e300 ms once left the simulated range, exit 1).
    if (r.measured_s > 1e3) row.at("ms").fail("must be at most 1,000,000 ms (a pass of one GPU)");
    Modelled m = model(*c, workloads.at(kind), a, batch, mode.find("fwdbwd") == std::string::npos);
    r.modelled_s = m.seconds;
    r.kernels = m.kernels;
    runs.push_back(std::move(m.runs));
    out.rows.push_back(r);
  }
  double sum = 0;
  int graphs = 0;
  std::map<std::string, std::pair<double, int>> by_kind;
  for (CheckRow& r : out.rows) {
    if (r.mode == "graph_fwdbwd" || r.mode == "eager_fwdbwd") {
      if (auto it = profiled.find({r.kind, r.batch}); it != profiled.end()) r.measured_kernels = it->second;
    }
    if (r.eager) continue;  // the factors describe the device's kernels: graph rows only
    ++graphs;
    const double l = std::log(r.modelled_s / r.measured_s);
    sum += l;
    by_kind[r.kind].first += l;
    ++by_kind[r.kind].second;
  }
  if (graphs == 0) throw InputError(SourceLocation{file, 0, 0}, "", "no graph-timed configuration to check");
  out.common_factor = std::exp(sum / graphs);
  for (const auto& [kind, s] : by_kind) out.factor[kind] = std::exp(s.first / s.second);
  // The dispatch cost from BERT's eager rows, the one script whose kernel inventory a profile
  // checks (1,930 modelled kernels against 1,778 profiled); the other scripts' eager rows are
  // then predicted with it.
  std::vector<std::pair<std::vector<models::KernelRun>, double>> anchors;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    CheckRow& r = out.rows[i];
    if (r.kind != "bert" || !r.eager || !out.factor.count("bert")) continue;
    anchors.emplace_back(scaled(runs[i], out.factor.at("bert")), r.measured_s);
    r.fits_dispatch = true;
  }
  if (!anchors.empty()) out.dispatch_s = fit_dispatch(anchors);
  const auto predict = [&](std::size_t i, double factor) {
    const CheckRow& r = out.rows[i];
    if (!r.eager) return r.modelled_s / factor;
    return to_seconds(models::issued_time(scaled(runs[i], factor), seconds(out.dispatch_s)));
  };
  std::vector<CheckRow> kept;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    CheckRow r = out.rows[i];
    if (r.eager && (out.dispatch_s == 0 || !out.factor.count(r.kind))) continue;  // nothing to predict it with
    r.predicted_s = predict(i, out.factor.at(r.kind));
    r.error = r.predicted_s / r.measured_s - 1;
    r.common_error = predict(i, out.common_factor) / r.measured_s - 1;
    kept.push_back(r);
  }
  out.rows = std::move(kept);
  return out;
}

}  // namespace sp::calibration
