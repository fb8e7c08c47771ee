#include "calibration/predict/system_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "models/training/layout_search.hpp"
#include "models/training/time_to_train.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/rng.hpp"

namespace sp::calibration {

PlatformCatalog::PlatformCatalog(const models::Catalog& catalog) : catalog_(catalog) {
  for (const std::string& name : models::shipped_platforms()) {
    platforms_.push_back(models::parse_platform(config::load_file(models::shipped_platform_file(name).string()), catalog));
    names_.push_back(name);
  }
}

std::optional<models::Platform> PlatformCatalog::named(const std::string& name, const models::Accelerator& a, int per_node,
                                                       std::string& why) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) {
    why = "unknown platform '" + name + "' (scalepoint list platforms)";
    return std::nullopt;
  }
  const models::Platform& p = platforms_[static_cast<std::size_t>(it - names_.begin())];
  if (p.accelerator.name != a.name) {
    why = "platform '" + name + "' has " + p.accelerator.name + ", the row " + a.name;
    return std::nullopt;
  }
  return resize_node(p, per_node);
}

models::Platform resize_node(models::Platform p, int per_node) {
  auto& tiers = p.topology.tiers;
  const int old = p.topology.accelerators_per_node;
  p.topology.accelerators_per_node = per_node;
  if (per_node == old) return p;
  const bool host = tiers.size() == 3;
  if (tiers[0].size == old) {
    tiers[0].size = per_node;  // the node is the scale-up domain
  } else if (host) {
    if (per_node <= tiers[0].size) {
      tiers[0].size = per_node;
      tiers.erase(tiers.begin() + 1);  // one scale-up domain per node: no host tier
      for (auto& proto : p.protocols) {
        if (proto.available) proto.step.erase(proto.step.begin() + 1);
      }
    } else {
      tiers[1].size = per_node / tiers[0].size;
    }
  }
  return p;
}

models::Platform generic_platform(const models::Accelerator& a, int per_node, const models::Catalog& catalog) {
  const std::filesystem::path protocols = models::shipped_platform_file("nccl_protocols");
  const std::string kind = a.scale_up_topology == "torus3d" ? "torus" : a.scale_up_topology;
  const bool switched = kind == "switch";
  // Estimates: NCCL's ring sustains ~82 % of NVLink and ~94 % of an IB NIC on DGX H100 (its
  // platform file); collectives hold 16 SMs with 8 NICs, 2 on PCIe (NVIDIA/nccl#689).
  std::string y = fmt::format("name: \"{} node (generic)\"\naccelerator: \"{}\"\naccelerators_per_node: {}\n", a.name, a.name,
                              per_node);
  y += fmt::format("scale_up: {{kind: {}, size: {}, efficiency: 0.82, communication_sms: {}}}\n", kind, per_node,
                   switched ? 16 : 2);
  y += fmt::format("scale_out: {{kind: fat_tree, efficiency: 0.94, communication_sms: {}}}\n",
                   std::min(16, 2 * std::max(1, a.typical_nics)));
  y += "protocols: " + config::load_file(protocols.string()).dump_flow() + "\n";
  y += "algorithms: [ring, tree]\ncompute_jitter: 0.01\n";
  return models::parse_platform(config::load_string(y, "generic platform for " + a.name), catalog);
}

models::Platform PlatformCatalog::for_system(const models::Accelerator& a, int per_node) const {
  const models::Platform* same_kind = nullptr;
  for (const models::Platform& p : platforms_) {
    if (p.accelerator.name != a.name || !p.site.empty()) continue;
    if (p.accelerators_per_node() == per_node) return p;
    // Otherwise the platform of this kind whose node is closest in size.
    if (!same_kind || std::abs(p.accelerators_per_node() - per_node) <
                          std::abs(same_kind->accelerators_per_node() - per_node)) {
      same_kind = &p;
    }
  }
  if (!same_kind) return generic_platform(a, per_node, catalog_);
  return resize_node(*same_kind, per_node);
}

double modelled_phase(const models::TrainingEstimate& e, const models::EvaluationCost& c,
                      PhaseObservation::Phase phase) {
  using Phase = PhaseObservation::Phase;
  const Duration d = phase == Phase::evaluation              ? c.each
                     : phase == Phase::after_last_evaluation ? c.scoring
                     : phase == Phase::evaluation_setup      ? c.first
                                                             : e.step.step;
  // A phase the model has no share of (no asynchronous scoring) weighs as a 1 ms one.
  return std::max(1e-3, to_seconds(d));
}

namespace {
enum class Factor { workload_efficiency, accelerator_efficiency, host_per_step };

// |d log(time to train) / d log(factor)| at the chosen layout: how much of the time a fitted
// quantity moves (the workload's efficiency covers element-wise work only, the accelerator's all
// compute, the host time its share of the step; none covers communication or convergence), so
// that its uncertainty widens the interval by that much. `t0` is the estimate at (w, p, spec).
double sensitivity(const models::Workload& w, const models::Platform& p, int n, std::int64_t gbs,
                   const models::ParallelSpec& spec, const models::TrainingEstimate& t0, Factor f) {
  constexpr double kStep = 0.01;
  models::Workload wd = w;
  models::Platform pd = p;
  switch (f) {
    case Factor::workload_efficiency: wd.software_efficiency *= std::exp(kStep); break;
    case Factor::accelerator_efficiency: pd.accelerator.efficiency_scale *= std::exp(kStep); break;
    case Factor::host_per_step: wd.host_per_step = scale(wd.host_per_step, std::exp(kStep)); break;
  }
  const auto t1 = models::estimate_training(wd, pd, n, gbs, spec);
  if (!t0.ok() || !t1.ok()) return 1.0;
  return std::abs(std::log(to_seconds(t1.time_to_train) / to_seconds(t0.time_to_train))) / kStep;
}
}  // namespace

// The part of a row's prediction that only its configuration decides (everything predict_system
// reads of a row but its convergence, phases and row number): the workload calibrated for its
// stack with its parameters' spread, the platform, and the layout the search picked.
struct ConfiguredSystem {
  SystemPrediction out;
  std::shared_ptr<const models::Workload> workload;
};

namespace {

ConfiguredSystem configure(const MlperfResult& row, const SystemModelInputs& in) {
  ConfiguredSystem c;
  SystemPrediction& out = c.out;
  const auto fail = [&](std::string status, std::string message) {
    out.status = std::move(status);
    out.message = std::move(message);
    return c;
  };
  std::optional<models::Workload> w = in.catalog.find_workload(row.benchmark);
  if (!w) return fail("error", "unknown benchmark '" + row.benchmark + "'");
  w->convergence = w->convergence.at_round(row.round);
  std::optional<models::Accelerator> a = in.catalog.find_accelerator(row.accelerator);
  if (!a) {
    std::vector<std::string> kinds;
    for (const models::Accelerator& k : in.catalog.accelerators()) kinds.push_back(k.name);
    return fail("error", models::unknown_accelerator_message(row.accelerator, kinds));
  }
  if (row.accelerators % row.accelerators_per_node != 0 && row.accelerators > row.accelerators_per_node) {
    return fail("error", fmt::format("{} accelerators are not whole nodes of {}", row.accelerators,
                                     row.accelerators_per_node));
  }
  std::optional<models::Platform> p;
  if (row.platform.empty()) {
    p = in.platforms.for_system(*a, row.accelerators_per_node);
  } else {
    std::string why;
    p = in.platforms.named(row.platform, *a, row.accelerators_per_node, why);
    if (!p) return fail("error", why);
  }
  if (const auto cpu = models::host_cpu_of_processor(row.host_processor)) p->host_cpu = *cpu;
  if (!a->training_peak(w->precision)) return fail("error", a->name + " has no peak usable for " + w->precision);
  out.peak_flops = a->training_peak(w->precision)->value();
  // The software the row ran (its framework column) decides which calibrated levels and host
  // time apply; the uncertainty of the fitted parameters it rests on widens its interval.
  const std::string stack = models::software_stack_of(row.framework, *a);
  w = in.calibration.calibrated(std::move(*w), stack);
  const models::SoftwareEfficiency software = in.calibration.apply(p->accelerator, stack);
  if (row.boosted(*w)) p->accelerator.compute_clock = 1 + in.calibration.clock_boost_gain;
  double curve_sd = 0;
  if (auto it = in.calibration.workloads.find(w->name); it != in.calibration.workloads.end()) curve_sd = it->second.log_sd;
  out.kind = a->name;
  out.software_source = software.source;

  const int n = row.accelerators;
  models::ParallelSpec spec = w->parallelism.for_accelerators(n);
  if (row.tensor_parallel || row.context_parallel || row.pipeline_parallel) {
    // The layout the system declares, the unnamed degrees 1: neither searched nor replaced by the
    // workload's recipe for smaller parts.
    spec.fix_sizes({row.tensor_parallel.value_or(1), row.context_parallel.value_or(1), row.pipeline_parallel.value_or(1)});
    spec.declared = true;
  }
  std::int64_t gbs = 0;
  if (row.global_batch) {
    gbs = *row.global_batch;
  } else {
    gbs = typical_global_batch(*w, n, spec);
  }
  out.global_batch = gbs;

  // The declared layout, or the fastest the workload and the machine allow with the recipe kept
  // within the model's resolution; a declared one that does not fit gives way to the fastest
  // that does (the system did run).
  const auto e = models::fastest_layout(*w, *p, n, gbs, spec, spec.search.value_or(models::LayoutSearch{}), models::Fidelity::analytic,
                                        models::LayoutFallback::any, in.layouts);
  if (!e) {
    // Why the recipe does not resolve (the search's sizes are powers of two, so an odd factor of N
    // stays with the data-parallel ranks the batch must split over: 72 GB200s at batch 8).
    std::string why;
    models::resolve_layout(spec, p->topology, n, gbs, why);
    int odd = n;
    while (odd % 2 == 0) odd /= 2;
    if (odd > 1 && gbs % odd != 0) {
      why += fmt::format("{}and no layout can: TP, CP and PP are powers of two, so every layout keeps {}'s odd factor {} "
                         "in its data-parallel ranks", why.empty() ? "" : "; ", n, odd);
    }
    return fail("error", fmt::format("no parallel layout fits {} accelerators at global batch {}{}", n, gbs,
                                     why.empty() ? "" : ": " + why));
  }
  if (!e->ok()) return fail(e->status, e->message);
  if (row.tensor_parallel || row.context_parallel || row.pipeline_parallel) {
    const int tp = row.tensor_parallel.value_or(1), cp = row.context_parallel.value_or(1), pp = row.pipeline_parallel.value_or(1);
    if (e->layout.tp != tp || e->layout.cp != cp || e->layout.pp != pp) {
      // Predicted all the same (a submitter would find a layout that runs), but not as declared:
      // say whether the sizes cannot run at all (TP3 on 8 GPUs, TP16 of 8 key-value groups) or
      // run out of memory.
      std::string why = models::unsupported_split(*w, tp, cp, pp);
      if (why.empty()) models::resolve_layout(spec, p->topology, n, gbs, why);
      out.message = why.empty()
                        ? fmt::format("the declared TP{} CP{} PP{} does not fit; predicted with the fastest layout that does", tp, cp, pp)
                        : fmt::format("the declared TP{} CP{} PP{} cannot run ({}); predicted with the fastest layout that does",
                                      tp, cp, pp, why);
    }
  }
  out.estimate = *e;
  out.platform = *p;
  const double host_sd = in.calibration.unseen_host_spread(*w, stack);
  if (in.samples > 0 && (curve_sd > 0 || software.log_sd > 0 || host_sd > 0)) {
    const models::ParallelSpec chosen = spec_of(e->layout);
    const models::TrainingEstimate base = models::estimate_training(*w, *p, n, gbs, chosen);  // once for every factor
    const auto moved = [&](Factor f, double sd) {
      return sd > 0 ? sd * sensitivity(*w, *p, n, gbs, chosen, base, f) : 0.0;
    };
    w->parameter_spread = std::hypot(std::hypot(moved(Factor::workload_efficiency, curve_sd),
                                                moved(Factor::accelerator_efficiency, software.log_sd)),
                                     moved(Factor::host_per_step, host_sd));
  }
  c.workload = std::make_shared<const models::Workload>(std::move(*w));
  return c;
}

// Everything configure() reads of a row.
std::string configuration_key(const MlperfResult& r) {
  const auto degree = [](const std::optional<int>& d) { return d ? std::to_string(*d) : "-"; };
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.round, r.benchmark, r.accelerator,
                     r.accelerators_per_node, r.accelerators, r.platform, r.host_processor, r.framework,
                     r.global_batch ? std::to_string(*r.global_batch) : "-", degree(r.tensor_parallel),
                     degree(r.context_parallel), degree(r.pipeline_parallel));
}

}  // namespace

SystemPrediction predict_system(const MlperfResult& row, const SystemModelInputs& in, PredictionCache* cache) {
  ConfiguredSystem c;
  if (cache) {
    const std::string key = configuration_key(row);
    std::optional<ConfiguredSystem> hit;
    {
      const std::lock_guard<std::mutex> g(cache->lock_);
      if (auto it = cache->entries_.find(key); it != cache->entries_.end()) hit = *it->second;
    }
    if (hit) {
      c = std::move(*hit);
    } else {
      c = configure(row, in);  // outside the lock: another thread may configure the same key, alike
      const std::lock_guard<std::mutex> g(cache->lock_);
      cache->entries_.emplace(key, std::make_shared<const ConfiguredSystem>(c));
    }
  } else {
    c = configure(row, in);
  }
  SystemPrediction out = std::move(c.out);
  if (out.status != "ok") return out;
  out.workload = c.workload;
  const models::Workload& w = *c.workload;
  const models::TrainingEstimate& e = out.estimate;
  const std::optional<double> converged = row.converged_samples(w.train_samples);
  if (converged) out.at_logged_convergence = models::time_to_train_at(e, w, *converged);
  if (!row.phases.empty()) {
    const models::EvaluationCost cost = models::evaluation_at(e, w, converged.value_or(e.convergence.mean_samples));
    for (const PhaseObservation& o : row.phases) out.phase_seconds.push_back(modelled_phase(e, cost, o.phase));
  }
  // The Monte Carlo stream of a row is named by what the row is (benchmark, system, size, batch,
  // round), not where it stands in its file: the same row draws the same interval whatever the
  // order of the rows around it.
  const std::uint64_t stream = fnv1a64(fmt::format("{}|{}|{}|{}|{}", row.benchmark, row.system(), row.accelerators,
                                                   row.global_batch.value_or(0), row.round));
  models::add_prediction_interval(out.estimate, w, out.platform, in.samples, in.seed, stream);
  return out;
}

}  // namespace sp::calibration
