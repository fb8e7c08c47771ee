#include "calibration/predict/system_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "sim/config/loader.hpp"

namespace sp::calibration {

PlatformCatalog::PlatformCatalog(const models::Catalog& catalog) {
  const std::filesystem::path dir = models::data_root() / "scenarios" / "platforms";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml" && e.path().stem() != "nccl_protocols") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) platforms_.push_back(models::parse_platform(config::load_file(f.string()), catalog));
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

std::optional<models::Platform> PlatformCatalog::for_system(const models::Accelerator& a, int per_node) const {
  const models::Platform* same_kind = nullptr;
  for (const models::Platform& p : platforms_) {
    if (p.accelerator.name != a.name) continue;
    if (p.accelerators_per_node() == per_node) return p;
    // Otherwise the platform of this kind whose node is closest in size.
    if (!same_kind || std::abs(p.accelerators_per_node() - per_node) <
                          std::abs(same_kind->accelerators_per_node() - per_node)) {
      same_kind = &p;
    }
  }
  if (!same_kind) return std::nullopt;
  return resize_node(*same_kind, per_node);
}

std::int64_t typical_global_batch(const models::Workload& w, int n, int dp) {
  const auto& t = w.typical_global_batch;
  double gbs;
  auto hi = t.lower_bound(n);
  if (hi == t.end()) {
    gbs = static_cast<double>(std::prev(hi)->second);
  } else if (hi->first == n || hi == t.begin()) {
    gbs = static_cast<double>(hi->second);
  } else {
    const auto lo = std::prev(hi);
    const double f = std::log(static_cast<double>(n) / lo->first) / std::log(static_cast<double>(hi->first) / lo->first);
    gbs = std::exp(std::log(static_cast<double>(lo->second)) +
                   f * (std::log(static_cast<double>(hi->second)) - std::log(static_cast<double>(lo->second))));
  }
  const double per_rank = std::max(1.0, std::round(gbs / dp));
  return static_cast<std::int64_t>(per_rank) * dp;
}

namespace {

// Micro-batch sizes to try: the ones that divide the samples each data-parallel rank gets.
std::vector<int> micro_batches(const models::ParallelSpec& s, int n, std::int64_t gbs) {
  if (s.micro_batch) return {*s.micro_batch};
  const int model = s.tensor.value_or(1) * s.context.value_or(1) * s.pipeline.value_or(1);
  if (n % model != 0 || gbs % (n / model) != 0) return {};
  const std::int64_t per_rank = gbs / (n / model);
  std::vector<int> out;
  for (std::int64_t m = per_rank; m >= 1; --m) {
    if (per_rank % m == 0) out.push_back(static_cast<int>(m));
  }
  return out;
}

// The fastest layout that resolves and fits. First what submitters do when a batch does not fit:
// the same layout with gradient accumulation (smaller micro-batches); failing that, any tensor,
// context and pipeline sizes, keeping the workload's other choices.
std::optional<models::TrainingEstimate> best_layout(const models::Workload& w, const models::Platform& p, int n,
                                                    std::int64_t gbs, const models::ParallelSpec& base) {
  std::optional<models::TrainingEstimate> best;
  const auto consider = [&](models::ParallelSpec s) {
    for (int mb : micro_batches(s, n, gbs)) {
      s.micro_batch = mb;
      std::string why;
      if (!models::resolve_layout(s, p.topology, n, gbs, why)) continue;
      const models::TrainingEstimate e = models::estimate_training(w, p, n, gbs, s);
      if (e.ok() && (!best || e.time_to_train < best->time_to_train)) best = e;
      if (e.ok()) break;  // smaller micro-batches only run slower
    }
  };
  consider(base);
  if (best) return best;
  for (int tp : {1, 2, 4, 8}) {
    for (int cp : {1, 2, 4}) {
      for (int pp : {1, 2, 4, 8}) {
        models::ParallelSpec s = base;
        s.tensor = tp;
        s.context = cp;
        s.pipeline = pp;
        consider(s);
      }
    }
  }
  return best;
}

}  // namespace

SystemPrediction predict_system(const MlperfResult& row, const SystemModelInputs& in) {
  SystemPrediction out;
  const auto fail = [&](std::string status, std::string message) {
    out.status = std::move(status);
    out.message = std::move(message);
    return out;
  };
  std::optional<models::Workload> w = in.catalog.find_workload(row.benchmark);
  if (!w) return fail("error", "unknown benchmark '" + row.benchmark + "'");
  std::optional<models::Accelerator> a = in.catalog.find_accelerator(row.accelerator);
  if (!a) return fail("error", "unknown accelerator '" + row.accelerator + "'");
  if (row.accelerators % row.accelerators_per_node != 0 && row.accelerators > row.accelerators_per_node) {
    return fail("error", fmt::format("{} accelerators are not whole nodes of {}", row.accelerators,
                                     row.accelerators_per_node));
  }
  std::optional<models::Platform> p = in.platforms.for_system(*a, row.accelerators_per_node);
  if (!p) return fail("error", "no platform in scenarios/platforms uses " + a->name);
  if (!a->training_peak(w->precision)) return fail("error", a->name + " has no peak usable for " + w->precision);
  in.calibration.apply(*w);
  in.calibration.apply(p->accelerator);

  const int n = row.accelerators;
  const models::ParallelSpec spec = w->parallelism.for_accelerators(n);
  std::int64_t gbs = 0;
  if (row.global_batch) {
    gbs = *row.global_batch;
  } else {
    const int model = spec.tensor.value_or(1) * spec.context.value_or(1) * spec.pipeline.value_or(1);
    gbs = typical_global_batch(*w, n, n % model == 0 ? n / model : n);
  }
  out.global_batch = gbs;

  std::string why;
  models::TrainingEstimate e;
  if (models::resolve_layout(spec, p->topology, n, gbs, why)) {
    e = models::estimate_training(*w, *p, n, gbs, spec);
  } else {
    e.status = "invalid_layout";
  }
  if (!e.ok()) {
    // The usual layout does not apply here (or does not fit): take the fastest one that does.
    const auto alt = best_layout(*w, *p, n, gbs, spec);
    if (!alt) {
      return fail(e.status == "out_of_memory" ? "out_of_memory" : "error",
                  e.status == "out_of_memory" ? e.message : "no parallel layout fits " + std::to_string(n) +
                                                                " accelerators at global batch " + std::to_string(gbs));
    }
    e = *alt;
  }
  models::add_prediction_interval(e, *w, *p, in.samples, in.seed, static_cast<std::uint64_t>(row.row));
  out.estimate = e;
  return out;
}

}  // namespace sp::calibration
