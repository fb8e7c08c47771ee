#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <array>
#include <cstdlib>
#include <limits>

#include "models/calibration.hpp"
#include "models/training/layout_search.hpp"
#include "sim/core/parallel_for.hpp"
#include "sim/core/sha256.hpp"

namespace sp {

std::int64_t BatchPolicy::global_batch(int n) const {
  switch (kind) {
    case Kind::global: return global;
    case Kind::per_accelerator: return per_accelerator * n;
    case Kind::by_accelerators: return by_accelerators.at(n);
  }
  return 0;
}

namespace {

std::string file_dir(const std::string& file) {
  const std::filesystem::path p(file);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

BatchPolicy parse_batch(const config::ConfigNode& n) {
  n.expect_only({"global", "per_accelerator", "global_by_accelerators", "typical"});
  const int given = n.has("global") + n.has("per_accelerator") + n.has("global_by_accelerators") + n.has("typical");
  if (given != 1) {
    n.fail("give exactly one of global, per_accelerator, global_by_accelerators, typical");
  }
  BatchPolicy b;
  if (auto t = n.find("typical")) {
    if (!t->as_bool()) t->fail("only 'typical: true' means something", "or give another batch policy");
    b.kind = BatchPolicy::Kind::by_accelerators;
    b.typical = true;  // filled in once the workload, layouts and counts are known
  } else if (auto g = n.find("global")) {
    b.kind = BatchPolicy::Kind::global;
    b.global = g->as_count();
  } else if (auto p = n.find("per_accelerator")) {
    b.kind = BatchPolicy::Kind::per_accelerator;
    b.per_accelerator = p->as_count();
  } else {
    b.kind = BatchPolicy::Kind::by_accelerators;
    const config::ConfigNode table = n.at("global_by_accelerators");
    for (const auto& [key, value] : table.entries()) {
      const config::ConfigNode& k = value;  // a key is reported at its value's position
      char* end = nullptr;
      const long count = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || count < 1) {
        k.fail("keys must be accelerator counts (integers >= 1), got '" + key + "'");
      }
      if (!b.by_accelerators.emplace(static_cast<int>(count), value.as_count()).second) {
        k.fail("accelerator count " + key + " appears twice");
      }
    }
  }
  return b;
}

void check_counts(const ScenarioSpec& s, const config::ConfigNode& list, const config::ConfigNode& batch) {
  const auto& items = list.elements();
  const int per_node = s.platform.accelerators_per_node();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int n = s.accelerators[i];
    const config::ConfigNode& at = items[i];
    if (n > per_node && n % per_node != 0) {
      at.fail(std::to_string(n) + " accelerators is not a whole number of " + std::to_string(per_node) +
                  "-accelerator nodes",
              "use a multiple of accelerators_per_node, or a divisor of it for part of one node");
    }
    if (n < per_node && per_node % n != 0) {
      at.fail(std::to_string(n) + " accelerators do not divide a " + std::to_string(per_node) +
              "-accelerator node evenly");
    }
    if (!s.platform.reaches(n)) {
      at.fail(std::to_string(n) + " accelerators span several nodes, but platform '" + s.platform.name +
              "' has no scale-out NICs (scale_out.nics_per_node is 0)");
    }
    if (s.batch.kind == BatchPolicy::Kind::by_accelerators && !s.batch.by_accelerators.count(n)) {
      batch.at("global_by_accelerators")
          .fail("has no global batch for " + std::to_string(n) + " accelerators",
                "add an entry '" + std::to_string(n) + ": <global batch>'");
    }
    // Counts stop at 10^9 everywhere; per_accelerator x N can pass it where neither does.
    if (s.batch.kind == BatchPolicy::Kind::per_accelerator && s.batch.global_batch(n) > config::kMaxCount) {
      batch.at("per_accelerator")
          .fail("gives a global batch of " + std::to_string(s.batch.global_batch(n)) + " at " + std::to_string(n) +
                " accelerators; global batches are limited to " + std::to_string(config::kMaxCount));
    }
  }
}

}  // namespace

ScenarioSpec load_scenario(const std::string& file, const std::vector<config::Override>& overrides,
                           const models::Catalog& catalog) {
  const config::ConfigNode root = config::load_file(file, overrides);
  if (!root.is_map()) root.fail("a scenario must be a mapping of keys such as name, workload, platform");
  root.expect_only({"name", "description", "seed", "workload", "platform", "accelerators", "batch", "fidelity",
                    "parallelism", "samples", "calibration", "launch", "anchor", "reliability", "rcp_round"});
  ScenarioSpec s = scenario_from_node(root, root.at("platform"), file, catalog);
  s.file_sha256 = sha256_hex(config::read_text_file(file));
  s.resolved_yaml = root.dump();
  s.resolved_sha256 = sha256_hex(s.resolved_yaml);
  return s;
}

ScenarioSpec scenario_from_node(const config::ConfigNode& root, const config::ConfigNode& platform,
                                const std::string& file, const models::Catalog& catalog) {
  ScenarioSpec s;
  s.file = file;
  s.name = root.at("name").as_folder_name();
  if (auto d = root.find("description")) s.description = d->as_string();
  if (auto seed = root.find("seed")) {
    const std::int64_t v = seed->as_int();
    if (v < 0) seed->fail("must not be negative");
    s.seed = static_cast<std::uint64_t>(v);
  }
  s.workload = catalog.workload(root.at("workload"));
  // How the training code launches its kernels, where it differs from the workload file's.
  if (auto l = root.find("launch")) s.workload.dispatch_per_kernel = models::parse_launch(*l);
  // The MLPerf round whose reference convergence the run is to meet (its RCPs), where not the
  // workload file's own.
  if (auto r = root.find("rcp_round")) {
    const std::string round = r->as_string();
    if (!models::mlperf_round(round)) r->fail("'" + round + "' is not an MLPerf round", "write MAJOR.MINOR, e.g. \"5.0\"");
    s.workload.convergence = s.workload.convergence.at_round(round);
  }
  s.platform = models::parse_platform(platform, catalog);
  if (auto r = platform.find("reliability")) s.reliability = models::parse_reliability(*r, s.reliability);
  if (auto r = root.find("reliability")) s.reliability = models::parse_reliability(*r, s.reliability);
  // The calibrated efficiency curves and accelerator factors: the committed MLPerf v4.1 fit unless
  // the scenario names another parameter file, or none.
  models::Calibration calibration = models::default_calibration();
  if (auto c = root.find("calibration")) {
    const std::string which = c->as_string();
    if (which == "none") {
      calibration = {};
    } else if (which != "default") {
      const std::filesystem::path params = std::filesystem::path(file_dir(file)) / which;
      if (!config::exists_quietly(params.string())) c->fail("no such file: " + params.string());
      if (!config::regular_file_quietly(params.string())) c->fail("not a regular file: " + params.string());
      const config::ConfigNode file_node = config::load_file(params.string());
      calibration = models::parse_calibration(file_node);
      // An entry for a workload no file describes calibrates nothing: a misspelt name, silently.
      if (auto ws = file_node.find("workloads")) {
        for (const auto& [name, v] : ws->entries()) {
          if (!catalog.find_workload(name)) v.fail("no workload in models/workloads is named '" + name + "'");
        }
      }
    }
  }
  s.workload = calibration.calibrated(std::move(s.workload), s.platform.accelerator.software_stack);
  calibration.apply(s.platform.accelerator);
  s.platform.accelerator.peak_for(s.workload.precision, platform.at("accelerator"));

  const config::ConfigNode list = root.at("accelerators");
  for (const auto& e : list.elements()) {
    const int n = e.as_count();
    if (std::find(s.accelerators.begin(), s.accelerators.end(), n) != s.accelerators.end()) {
      e.fail("accelerator count " + std::to_string(n) + " is listed twice");
    }
    if (!s.accelerators.empty() && n < s.accelerators.back()) {
      e.fail("accelerator counts must be in ascending order");
    }
    s.accelerators.push_back(n);
  }
  if (s.accelerators.empty()) list.fail("needs at least one accelerator count");
  if (auto f = root.find("fidelity")) {
    const auto fid = models::fidelity_from_name(f->as_string());
    if (!fid) f->fail("unknown fidelity '" + f->as_string() + "'", "valid: analytic, flow, chunk");
    s.fidelity = *fid;
  }
  if (auto par = root.find("parallelism")) s.parallelism = models::parse_parallel_specs(*par);
  if (auto k = root.find("samples")) {
    const std::int64_t v = k->as_int();
    if (v < 0 || v > 100000) k->fail("must be between 0 and 100000");
    s.samples = static_cast<int>(v);
  }
  const config::ConfigNode batch = root.at("batch");
  s.batch = parse_batch(batch);
  if (s.batch.typical) {
    for (int n : s.accelerators) s.batch.by_accelerators[n] = models::typical_global_batch(s.workload, n, s.parallel_spec(n));
  }
  check_counts(s, list, batch);
  // Every N must have a layout; a bad one is the input's fault, not a result.
  const auto items = list.elements();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int n = s.accelerators[i];
    std::string why;
    // Resolving is enough here: the search itself (every candidate simulated) is run's work, and
    // loading a file must not cost it (a Llama scenario at an awkward batch took 16 s to load
    // under the sanitizers).
    if (!models::resolve_layout(s.parallel_spec(n), s.platform.topology, n, s.batch.global_batch(n), why) &&
        !models::some_layout_resolves(s.workload, s.platform, n, s.batch.global_batch(n), s.parallel_spec(n),
                                      s.layout_search(n))) {
      items[i].fail("no parallel layout: " + why, "set parallelism (tensor, context, pipeline, micro_batch) or the batch");
    }
  }
  if (auto an = root.find("anchor")) {
    s.anchor = parse_anchor(*an);
    apply_anchor(s, *s.anchor, *an);
  }
  return s;
}

models::ParallelSpec ScenarioSpec::parallel_spec(int n) const {
  models::ParallelSpec p = workload.parallelism.for_accelerators(n);
  const models::ParallelSpec own = parallelism.for_accelerators(n);
  p.merge_from(own);
  p.micro_batch_pinned = own.micro_batch.has_value();
  // Sizes the scenario names are the user's layout, not a recipe to search around.
  if (own.tensor || own.context || own.pipeline) {
    p.fix_sizes({p.tensor.value_or(1), p.context.value_or(1), p.pipeline.value_or(1)});
    p.declared = true;
  }
  return p;
}

models::LayoutSearch ScenarioSpec::layout_search(int n) const {
  const models::ParallelSpec own = parallelism.for_accelerators(n);
  if (own.search) return *own.search;
  if (own.tensor || own.context || own.pipeline) return {};
  return workload.parallelism.for_accelerators(n).search.value_or(models::LayoutSearch{});
}

namespace {
ScalingPoint run_point(const ScenarioSpec& spec, int n, bool timelines) {
  ScalingPoint p;
  // The layout as given, or the fastest its search allows; where the batch does not fit at
  // once and no micro-batch is pinned, gradient accumulation, as submitters do.
  const auto best = models::fastest_layout(spec.workload, spec.platform, n, spec.batch.global_batch(n),
                                           spec.parallel_spec(n), spec.layout_search(n), spec.fidelity);
  p.estimate = best ? *best
                    : models::estimate_training(spec.workload, spec.platform, n, spec.batch.global_batch(n),
                                                spec.parallel_spec(n), spec.fidelity);
  models::add_prediction_interval(p.estimate, spec.workload, spec.platform, spec.samples, spec.seed,
                                  static_cast<std::uint64_t>(n));
  p.energy = models::estimate_energy(p.estimate, spec.platform, spec.power);
  if (p.energy.ok) {
    // The runs' time, not the score's: a run is not scaled up, its energy is spent.
    p.energy_p10 = p.energy.average() * p.estimate.run_p10;
    p.energy_p90 = p.energy.average() * p.estimate.run_p90;
  }
  p.goodput = models::estimate_goodput(spec.reliability, p.estimate, spec.workload, spec.platform, spec.samples,
                                       spec.seed, static_cast<std::uint64_t>(n), timelines);
  if (timelines && p.estimate.ok()) {
    models::StepTrace trace;
    models::simulate_step(spec.workload, spec.platform, p.estimate.layout, n, spec.fidelity, &trace);
    p.timeline = models::chrome_trace(trace);
  }
  return p;
}
}  // namespace

std::vector<ScalingPoint> run_scenario(const ScenarioSpec& spec, bool timelines, bool threads) {
  std::vector<ScalingPoint> out(spec.accelerators.size());
  // Each N is independent and writes only its own slot. A failure is rethrown for the smallest N
  // that failed, as the serial loop would, whichever thread met it first.
  std::vector<std::exception_ptr> failed(out.size());
  const auto one = [&](std::size_t k) {
    try {
      out[k] = run_point(spec, spec.accelerators[k], timelines);
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  if (threads) {
    parallel_for(out.size(), one);
  } else {
    for (std::size_t k = 0; k < out.size(); ++k) one(k);
  }
  for (const auto& f : failed) {
    if (f) std::rethrow_exception(f);
  }
  const auto ref = std::find_if(out.begin(), out.end(), [](const ScalingPoint& p) { return p.estimate.ok(); });
  for (auto& p : out) {
    if (ref == out.end() || !p.estimate.ok()) {
      p.speedup = p.e_prime = p.effective_e_prime = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const double more = static_cast<double>(p.estimate.accelerators) / ref->estimate.accelerators;
    p.speedup = ref->estimate.time_to_train / p.estimate.time_to_train;
    p.e_prime = p.speedup / more;
    // (T_ref / g_ref) / (T_N / g_N) / (N / N_ref): E' times the ratio of goodputs, so that it is E'
    // to the bit where nothing is lost.
    p.effective_e_prime = p.e_prime * (p.goodput.goodput / ref->goodput.goodput);
    const auto terms = [](const models::TrainingEstimate& e) {
      const double compute = to_seconds(e.step.forward + e.step.backward);
      const double step = to_seconds(e.step.step);
      const double per_sample = e.accelerators * step / static_cast<double>(e.global_batch);
      // The samples the score stands for: a run's, scaled as MLPerf's RCP normalisation scales it.
      return std::array<double, 4>{e.convergence.mean_samples * e.rcp_normalisation, e.accelerators * compute / e.global_batch,
                                   step / compute,
                                   1 + to_seconds(e.evaluation.total) * e.accelerators /
                                           (e.convergence.mean_samples * per_sample)};
    };
    const auto a = terms(p.estimate), r = terms(ref->estimate);
    p.loss_convergence = a[0] / r[0];
    p.loss_compute = a[1] / r[1];
    p.loss_step_overhead = a[2] / r[2];
    p.loss_evaluation = a[3] / r[3];
  }
  return out;
}

}  // namespace sp
