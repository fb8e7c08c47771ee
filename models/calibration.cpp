#include "models/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "sim/config/loader.hpp"

namespace sp::models {

namespace {
std::size_t cost_index(std::string_view key) {
  for (std::size_t k = 0; k < kEvaluationCosts.size(); ++k) {
    if (key == kEvaluationCosts[k].calibration_key) return k;
  }
  throw std::invalid_argument("no evaluation cost named " + std::string(key));
}
}  // namespace

std::optional<Duration>& WorkloadCalibration::cost(std::string_view key) { return evaluation_costs[cost_index(key)]; }
const std::optional<Duration>& WorkloadCalibration::cost(std::string_view key) const {
  return evaluation_costs[cost_index(key)];
}

Workload Calibration::calibrated(Workload w, const std::string& stack) const {
  ImplementationCosts& costs = w;  // what calibration may change, and nothing else
  PredictionSpread& spread = w;
  if (auto it = workloads.find(w.name); it != workloads.end()) {
    const WorkloadCalibration& c = it->second;
    costs.software_efficiency = c.software_efficiency;
    spread.model_error = c.model_error;
    for (std::size_t k = 0; k < kEvaluationCosts.size(); ++k) {
      if (const auto& v = c.evaluation_costs[k]) costs.evaluation_costs.*kEvaluationCosts[k].member = *v;
    }
    if (c.host_per_step) costs.host_per_step = *c.host_per_step;
    if (auto on = c.host_per_step_on.find(stack); on != c.host_per_step_on.end()) costs.host_per_step = on->second;
  }
  if (!scale_error.empty()) spread.model_error_by_scale = scale_error;
  return w;
}

double Calibration::unseen_host_spread(const Workload& w, const std::string& stack) const {
  if (w.host_per_step <= Duration{} || stack.empty() || stack == Workload::kDescribedStack) return 0.0;
  const auto it = workloads.find(w.name);
  if (it == workloads.end() || !it->second.host_per_step) return 0.0;  // not calibrated: no claim made
  return it->second.host_per_step_on.count(stack) ? 0.0 : workload_spread;
}

SoftwareEfficiency Calibration::software(const Accelerator& a, const std::string& stack_name) const {
  const std::string stack = stack_name.empty() ? a.software_stack : stack_name;
  const std::string family = a.family + "/" + stack;
  double log_scale = 0, fitted_var = 0, unseen_var = 0;
  // Each level: the reference (0), fitted (its value; its sd is that of the sum down to it, so the
  // deepest fitted level's replaces the others'), or unseen (its prior spread adds).
  const auto level = [&](const std::map<std::string, SoftwareLevel>& fitted, const std::string& key,
                         const std::string& reference, double spread) {
    if (key == reference) return true;
    if (auto it = fitted.find(key); it != fitted.end()) {
      log_scale += it->second.log_scale;
      fitted_var = it->second.sd * it->second.sd;
      return true;
    }
    unseen_var += spread * spread;
    return false;
  };
  const bool stack_seen = level(stacks, stack, reference_stack, stack_spread);
  const bool family_seen = level(families, family, reference_family, family_spread);
  const bool kind_seen = level(kinds, a.name, reference_kind, kind_spread);
  SoftwareEfficiency e;
  e.source = kind_seen     ? "fitted: " + a.name
             : family_seen ? "family: " + family
             : stack_seen  ? "stack: " + stack
                           : "prior: unseen stack " + stack;
  e.scale = std::exp(log_scale);
  e.log_sd = std::sqrt(fitted_var + unseen_var);
  return e;
}

SoftwareEfficiency Calibration::apply(Accelerator& a, const std::string& stack) const {
  const SoftwareEfficiency e = software(a, stack);
  a.efficiency_scale = e.scale;
  return e;
}

const std::map<int, std::string>& scale_ranges() {
  static const std::map<int, std::string> ranges = {
      {8, "N<=8"}, {64, "N=9-64"}, {std::numeric_limits<int>::max(), "N>64"}};
  return ranges;
}

std::string software_stack_of(const std::string& framework, const Accelerator& a) {
  std::string f;
  for (unsigned char c : framework) f += static_cast<char>(std::tolower(c));
  const auto has = [&](const char* word) { return f.find(word) != std::string::npos; };
  if (has("tinygrad")) return "tinygrad";
  if (has("jax") || has("maxdiffusion") || has("maxtext") || has("paxml")) return "jax";
  if (has("rocm")) return "rocm";
  if (has("synapse") || has("habana")) return "synapse";
  return a.software_stack;
}

namespace {
// A spread or a level on the log scale: e^5 is a factor of 148, beyond any software or model error
// a calibration can mean (a unit slip or a hand edit, whose intervals would leave the simulated
// range: "model_error: 1e300" once ended in a time of NaN seconds).
constexpr double kMaxLogScale = 5;
double log_spread(const config::ConfigNode& n) {
  const double v = n.as_number();
  if (!(v >= 0 && v <= kMaxLogScale)) n.fail(fmt::format("must be a spread on the log scale from 0 to {}", kMaxLogScale));
  return v;
}
std::map<std::string, SoftwareLevel> parse_levels(const config::ConfigNode& n) {
  std::map<std::string, SoftwareLevel> out;
  for (const auto& [name, v] : n.entries()) {
    v.expect_only({"log_scale", "sd"});
    const double sd = log_spread(v.at("sd"));
    const double level = v.at("log_scale").as_number();
    if (!(std::abs(level) <= kMaxLogScale)) v.at("log_scale").fail(fmt::format("must be a log-scale from -{0} to {0}", kMaxLogScale));
    out[name] = SoftwareLevel{level, sd};
  }
  return out;
}
}  // namespace

Calibration parse_calibration(const config::ConfigNode& n) {
  // The summaries calibrate mlperf writes beside the parameters are for readers; anything else
  // is a misspelt key or another file, which would otherwise calibrate nothing, silently.
  n.expect_only({"provenance", "workloads", "model_error_by_scale", "software", "clock_boost", "in_sample",
                 "leave_one_system_out", "leave_one_kind_out", "residuals"});
  if (!n.has("workloads") && !n.has("software")) {
    n.fail("has neither workloads nor software: not a calibration file", "calibration/params/mlperf_v4.1.yaml is one");
  }
  Calibration c;
  if (auto by = n.find("model_error_by_scale")) {
    by->expect_only({"N<=8", "N=9-64", "N>64"});
    for (const auto& [bound, name] : scale_ranges()) {
      if (auto v = by->find(name)) c.scale_error[bound] = log_spread(*v);
    }
  }
  if (auto ws = n.find("workloads")) {
    for (const auto& [name, v] : ws->entries()) {
      std::vector<std::string> keys{"software_efficiency", "log_sd", "model_error", "host_per_step", "host_per_step_on"};
      for (const EvaluationCostField& f : kEvaluationCosts) keys.emplace_back(f.calibration_key);
      v.expect_only(keys);
      WorkloadCalibration w;
      w.software_efficiency = v.at("software_efficiency").as_positive_number();
      // Fusion divides element-wise work: from a hundredth left to a hundred times as much
      // (a workload file's own range is narrower, and its fit stays inside it).
      if (!(w.software_efficiency >= 0.01 && w.software_efficiency <= 100)) {
        v.at("software_efficiency").fail("must be between 0.01 and 100");
      }
      if (auto x = v.find("log_sd")) w.log_sd = log_spread(*x);
      if (auto x = v.find("model_error")) w.model_error = log_spread(*x);
      for (std::size_t k = 0; k < kEvaluationCosts.size(); ++k) {
        if (auto x = v.find(kEvaluationCosts[k].calibration_key)) w.evaluation_costs[k] = x->as_nonnegative_duration();
      }
      if (auto x = v.find("host_per_step")) w.host_per_step = x->as_nonnegative_duration();
      if (auto x = v.find("host_per_step_on")) {
        for (const auto& [stack, d] : x->entries()) w.host_per_step_on[stack] = d.as_nonnegative_duration();
      }
      c.workloads[name] = w;
    }
  }
  if (auto b = n.find("clock_boost")) {
    b->expect_only({"gain", "sd"});
    c.clock_boost_gain = b->at("gain").as_number();
    if (!(c.clock_boost_gain >= 0 && c.clock_boost_gain <= Calibration::kMaxClockBoostGain)) {
      b->at("gain").fail(fmt::format("must be between 0 and {} (a relative clock gain)", Calibration::kMaxClockBoostGain));
    }
    if (auto x = b->find("sd")) c.clock_boost_sd = log_spread(*x);
  }
  if (auto sw = n.find("software")) {
    sw->expect_only({"reference", "spreads", "stacks", "families", "kinds"});
    if (auto r = sw->find("reference")) {
      r->expect_only({"stack", "family", "kind"});
      c.reference_stack = r->at("stack").as_string();
      c.reference_family = r->at("family").as_string();
      c.reference_kind = r->at("kind").as_string();
    }
    if (auto s = sw->find("spreads")) {
      s->expect_only({"kind", "family", "stack"});
      // Priors' widths, which the fit divides by: above 0.
      const auto prior_width = [](const config::ConfigNode& x) {
        const double v = log_spread(x);
        if (!(v > 0)) x.fail("must be greater than 0 (the width of a prior)");
        return v;
      };
      c.kind_spread = prior_width(s->at("kind"));
      c.family_spread = prior_width(s->at("family"));
      c.stack_spread = prior_width(s->at("stack"));
    }
    if (auto x = sw->find("stacks")) c.stacks = parse_levels(*x);
    if (auto x = sw->find("families")) c.families = parse_levels(*x);
    if (auto x = sw->find("kinds")) c.kinds = parse_levels(*x);
  }
  return c;
}

Calibration default_calibration() {
  // Read once per process: every scenario of a sweep asks for it.
  static const Calibration cached = [] {
    const std::filesystem::path file = data_root() / "calibration" / "params" / "mlperf_v4.1.yaml";
    return std::filesystem::exists(file) ? parse_calibration(config::load_file(file.string())) : Calibration{};
  }();
  return cached;
}

}  // namespace sp::models
