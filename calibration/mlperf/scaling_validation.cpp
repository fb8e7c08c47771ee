#include "calibration/mlperf/scaling_validation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "calibration/mlperf/fit_problem.hpp"
#include "calibration/predict/throughput_curve.hpp"
#include "models/training/convergence.hpp"
#include "models/training/time_to_train.hpp"
#include "sim/core/parallel_for.hpp"
#include "sim/core/first_seen.hpp"
#include "sim/core/quantile.hpp"

namespace sp::calibration {

namespace {

bool one_node(const MlperfResult& r) { return r.accelerators <= r.accelerators_per_node; }

// The median of `c` by published time: the lower of the two middle ones, then the earlier line.
int median_row(const std::vector<MlperfResult>& rows, std::vector<int> c) {
  std::sort(c.begin(), c.end(), [&](int a, int b) {
    const auto& x = rows[static_cast<std::size_t>(a)];
    const auto& y = rows[static_cast<std::size_t>(b)];
    return std::tie(*x.time_to_train_min, x.line) < std::tie(*y.time_to_train_min, y.line);
  });
  return c.empty() ? -1 : c[(c.size() - 1) / 2];
}

// What the score stands for at this batch: E[max(mean of the runs, RCP mean)] samples.
double scored_samples(models::Workload w, std::int64_t gbs, const std::string& round) {
  w.convergence = w.convergence.at_round(round);
  return models::scored_convergence(w, gbs, w.runs_per_result).scored;
}

}  // namespace

std::optional<double> peer_minutes(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds,
                                   std::size_t target) {
  const MlperfResult& t = rows[target];
  if (kinds[target].empty() || !t.global_batch) return std::nullopt;
  std::vector<int> peers;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (r.submitter == t.submitter || kinds[i] != kinds[target] || r.benchmark != t.benchmark ||
        r.accelerators != t.accelerators || r.global_batch != t.global_batch || !r.time_to_train_min ||
        models::mlperf_round(r.round) != models::mlperf_round(t.round) || r.repeats_an_earlier_row(rows, i)) {
      continue;
    }
    peers.push_back(static_cast<int>(i));
  }
  if (peers.empty()) return std::nullopt;
  return *rows[static_cast<std::size_t>(median_row(rows, peers))].time_to_train_min;
}

PeerSpread peer_spread(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds, bool on_one_node) {
  std::vector<double> errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (one_node(rows[i]) != on_one_node || !rows[i].time_to_train_min || rows[i].repeats_an_earlier_row(rows, i)) continue;
    if (const std::optional<double> p = peer_minutes(rows, kinds, i)) errors.push_back(100 * std::abs(*p / *rows[i].time_to_train_min - 1));
  }
  PeerSpread s;
  s.rows = static_cast<int>(errors.size());
  s.median = quantile(errors, 0.5);
  s.p90 = quantile(errors, 0.9);
  return s;
}

std::vector<std::string> software_releases(const std::string& framework) {
  // A release is YY.MM with a month 01-12, standing alone: not inside "3.10.2", "v24.09",
  // "2024.09" or "24.09a"; a full stop after it ends a sentence ("Release 24.09.").
  std::set<std::string> found;
  const auto at = [&](std::size_t i) { return i < framework.size() ? framework[i] : '\0'; };
  const auto digit = [&](std::size_t i) { return at(i) >= '0' && at(i) <= '9'; };
  const auto alnum = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(at(i))) != 0; };
  for (std::size_t i = 0; i + 5 <= framework.size(); ++i) {
    if (!(digit(i) && digit(i + 1) && at(i + 2) == '.' && digit(i + 3) && digit(i + 4))) continue;
    if (i > 0 && (alnum(i - 1) || at(i - 1) == '.')) continue;
    if (alnum(i + 5) || (at(i + 5) == '.' && digit(i + 6))) continue;
    const int month = (at(i + 3) - '0') * 10 + (at(i + 4) - '0');
    if (month >= 1 && month <= 12) found.insert(framework.substr(i, 5));
  }
  return {found.begin(), found.end()};
}

std::string software_match(const MlperfResult& row, const MlperfResult& anchor) {
  const std::vector<std::string> a = software_releases(row.framework), b = software_releases(anchor.framework);
  if (a.empty() || b.empty()) return "release not stated";
  std::vector<std::string> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  return shared.empty() ? "another release" : "same release";
}

const ScalingSummary& ScalingReport::summary(const std::string& group) const {
  for (const auto& s : summaries) {
    if (s.group == group) return s;
  }
  throw std::out_of_range("no scaling summary for " + group);
}

int choose_anchor(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds, std::size_t target,
                  std::string& rule) {
  const MlperfResult& t = rows[target];
  const std::string& kind = kinds[target];
  // Preference tiers, best first: same submitter and node size, same submitter, same node size, any.
  std::array<std::vector<int>, 4> tiers;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (i == target || kind.empty() || kinds[i] != kind || r.benchmark != t.benchmark || !r.time_to_train_min) continue;
    if (!one_node(r)) continue;
    const bool submitter = r.submitter == t.submitter, size = r.accelerators_per_node == t.accelerators_per_node;
    tiers[submitter && size ? 0 : submitter ? 1 : size ? 2 : 3].push_back(static_cast<int>(i));
  }
  static constexpr std::array<const char*, 4> kRules = {"same submitter, one node", "same submitter, one node of another size",
                                                        "one node of another submitter", "one node of another submitter and size"};
  for (std::size_t k = 0; k < tiers.size(); ++k) {
    if (tiers[k].empty()) continue;
    rule = kRules[k];
    return median_row(rows, tiers[k]);
  }
  // No one-node row of the kind: the same submitter's smallest system on fewer nodes (TPU slices).
  int best = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (i == target || kinds[i] != kind || kind.empty() || r.benchmark != t.benchmark || !r.time_to_train_min) continue;
    if (r.submitter != t.submitter || r.nodes >= t.nodes) continue;
    const MlperfResult* b = best < 0 ? nullptr : &rows[static_cast<std::size_t>(best)];
    if (!b || std::tie(r.accelerators, r.line) < std::tie(b->accelerators, b->line)) best = static_cast<int>(i);
  }
  rule = best < 0 ? "" : "same submitter, fewer nodes";
  return best;
}

std::vector<ScalingSummary> summarise_scaling(const std::vector<ScalingRow>& rows) {
  std::vector<std::string> groups = first_seen(rows, [](const ScalingRow& r) { return r.row.benchmark; });
  std::sort(groups.begin(), groups.end());
  // By the anchor too: a system's own smaller configuration (the question users bring: their own
  // measured node) apart from another submitter's node of the kind, whose software differs.
  // And by its software release: only the same release cancels the software level.
  groups.insert(groups.end(), {"N=9-64", "N>64", "anchor: same submitter", "anchor: another submitter",
                               "anchor: same release", "anchor: another release", "anchor: release not stated", "all"});
  std::vector<ScalingSummary> out;
  for (const std::string& g : groups) {
    std::vector<double> model, curve, perfect, logged, convergence, stepped, stepped_model, peer, peer_model;
    for (const ScalingRow& r : rows) {
      const int n = r.row.accelerators;
      const bool own = r.anchor_rule.rfind("same submitter", 0) == 0;
      const bool in = g == "all" || g == r.row.benchmark || (g == "N=9-64" && n > 8 && n <= 64) || (g == "N>64" && n > 64) ||
                      (g == "anchor: same submitter" && own) || (g == "anchor: another submitter" && !own) ||
                      g == "anchor: " + r.software;
      if (!in) continue;
      model.push_back(100 * std::abs(r.error()));
      curve.push_back(100 * std::abs(r.curve_error()));
      perfect.push_back(100 * std::abs(r.perfect_error()));
      if (const double e = r.error_at_logged_convergence(); !std::isnan(e)) {
        logged.push_back(100 * std::abs(e));
        convergence.push_back(100 * std::abs(r.convergence_error()));
      }
      if (const double e = r.step_error(); !std::isnan(e)) {
        stepped.push_back(100 * std::abs(e));
        stepped_model.push_back(100 * std::abs(r.error()));
      }
      if (const double e = r.peer_error(); !std::isnan(e)) {
        peer.push_back(100 * std::abs(e));
        peer_model.push_back(100 * std::abs(r.error()));
      }
    }
    if (model.empty()) continue;
    ScalingSummary s;
    s.group = g;
    s.rows = static_cast<int>(model.size());
    s.median = quantile(model, 0.5);
    s.p90 = quantile(model, 0.9);
    s.max = *std::max_element(model.begin(), model.end());
    s.curve_median = quantile(curve, 0.5);
    s.curve_p90 = quantile(curve, 0.9);
    s.perfect_median = quantile(perfect, 0.5);
    s.perfect_p90 = quantile(perfect, 0.9);
    s.logged_rows = static_cast<int>(logged.size());
    s.logged_median = quantile(logged, 0.5);
    s.logged_p90 = quantile(logged, 0.9);
    s.convergence_median = quantile(convergence, 0.5);
    s.convergence_p90 = quantile(convergence, 0.9);
    s.step_rows = static_cast<int>(stepped.size());
    s.step_median = quantile(stepped, 0.5);
    s.step_p90 = quantile(stepped, 0.9);
    s.step_model_median = quantile(stepped_model, 0.5);
    s.step_model_p90 = quantile(stepped_model, 0.9);
    s.peer_rows = static_cast<int>(peer.size());
    s.peer_median = quantile(peer, 0.5);
    s.peer_p90 = quantile(peer, 0.9);
    s.peer_model_median = quantile(peer_model, 0.5);
    s.peer_model_p90 = quantile(peer_model, 0.9);
    out.push_back(s);
  }
  return out;
}

namespace {
std::optional<double> logged_step(const MlperfResult& r) {
  for (const PhaseObservation& o : r.phases) {
    if (o.phase == PhaseObservation::Phase::training_step) return o.seconds;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> step_anchored_minutes(const MlperfResult& target, const SystemPrediction& pt, const MlperfResult& anchor,
                                            const SystemPrediction& pa) {
  const std::optional<double> step = logged_step(anchor);
  if (!step || !pt.workload || !pa.workload) return std::nullopt;
  const auto at = [](const MlperfResult& r, const SystemPrediction& p, double factor) {
    return models::estimate_at_level(*p.workload, p.platform, r.accelerators, p.global_batch, spec_of(p.estimate.layout), factor);
  };
  const models::LevelSolution level = models::solve_software_level(
      [&](double f) { return at(anchor, pa, f).step.step; }, seconds(*step), models::kSoftwareLevelMin, models::kSoftwareLevelMax);
  if (!level.met(models::kSoftwareLevelMin, models::kSoftwareLevelMax)) return std::nullopt;
  const models::TrainingEstimate e = at(target, pt, level.factor);
  if (!e.ok()) return std::nullopt;
  return to_seconds(e.time_to_train) / 60;
}

ScalingReport validate_scaling(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                               const PlatformCatalog& platforms, const std::function<void(const std::string&)>& progress) {
  ScalingReport rep;
  std::vector<std::string> kinds(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (auto a = catalog.find_accelerator(rows[i].accelerator)) kinds[i] = a->name;
  }
  // The targets and their anchors, grouped by the system a fold leaves out.
  struct Target {
    std::size_t row, anchor;
    std::string rule;  // how the anchor was chosen
  };
  std::map<std::string, std::vector<Target>> by_system;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (one_node(r) || !r.time_to_train_min) continue;
    if (r.repeats_an_earlier_row(rows, i)) {
      rep.skipped.push_back(r.left_out_as_a_repeat());
      continue;
    }
    std::string rule;
    const int a = choose_anchor(rows, kinds, i, rule);
    if (a < 0) {
      rep.skipped.push_back(fmt::format("line {}: {} {} {}: no measured row of {} on fewer nodes to start from", r.line,
                                        r.benchmark, r.submitter, r.system_name, kinds[i].empty() ? r.accelerator : kinds[i]));
      continue;
    }
    by_system[r.system()].push_back({i, static_cast<std::size_t>(a), rule});
  }
  rep.one_node_peers = peer_spread(rows, kinds, true);
  std::vector<std::string> fit_skipped;
  const FitProblem pb(rows, catalog, platforms, fit_skipped);
  // The fit on every row: a second start for each fold's (the fit has local minima; below).
  std::vector<std::size_t> every(pb.rows().size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  const Eigen::VectorXd full = pb.fit_from_starts(every, 60).x;
  std::vector<std::string> systems;
  for (const auto& [s, targets] : by_system) systems.push_back(s);

  // Each fold lands at its own slot: the result does not depend on the thread count.
  std::vector<std::vector<ScalingRow>> folds(systems.size());
  std::vector<std::vector<std::string>> fold_skipped(systems.size());
  std::mutex lock;
  std::size_t done = 0;
  parallel_for(systems.size(), [&](std::size_t k) {
    const std::string& system = systems[k];
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < pb.rows().size(); ++i) {
      if (pb.rows()[i].system != system) train.push_back(i);
    }
    // The fold's own optimum, from the priors and from the fit on every row (FitProblem::fit_fold).
    const models::Calibration c = pb.calibration(pb.fit_fold(train, full, 25));
    const SystemModelInputs in{catalog, platforms, c, 0, 1};
    // The curve of each benchmark, fitted on the fold's rows of it (every kind).
    std::map<std::string, ThroughputCurve> curves;
    for (const Target& tg : by_system.at(system)) {
      const MlperfResult& target = rows[tg.row];
      const MlperfResult& anchor = rows[tg.anchor];
      const SystemPrediction pt = predict_system(target, in), pa = predict_system(anchor, in);
      if (pt.status != "ok" || pa.status != "ok") {
        fold_skipped[k].push_back(fmt::format("line {}: {} {} {}: {}", target.line, target.benchmark, target.submitter,
                                              target.system_name, pt.status != "ok" ? pt.message : "its anchor: " + pa.message));
        continue;
      }
      const models::Workload w = *catalog.find_workload(target.benchmark);
      if (!curves.count(target.benchmark)) {
        std::vector<CurvePoint> points;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const MlperfResult& r = rows[i];
          // The rows the fold's model fit uses: a filing repeated from the same logs counts once.
          if (r.benchmark != target.benchmark || r.system() == system || !r.time_to_train_min || !r.global_batch ||
              r.repeats_an_earlier_row(rows, i)) {
            continue;
          }
          points.push_back({kinds[i], scored_samples(w, *r.global_batch, r.round), static_cast<double>(*r.global_batch),
                            static_cast<double>(r.accelerators), *r.time_to_train_min});
        }
        curves.emplace(target.benchmark, fit_throughput_curve(points));
      }
      const ThroughputCurve& curve = curves.at(target.benchmark);
      const auto point = [&](const MlperfResult& r, const SystemPrediction& p) {
        return CurvePoint{p.kind, scored_samples(w, p.global_batch, r.round), static_cast<double>(p.global_batch),
                          static_cast<double>(r.accelerators), *r.time_to_train_min};
      };
      const CurvePoint ct = point(target, pt), ca = point(anchor, pa);
      ScalingRow s;
      s.row = target;
      s.anchor = anchor;
      s.anchor_rule = tg.rule;
      s.software = software_match(target, anchor);
      s.kind = pt.kind;
      s.layout = pt.estimate.layout.describe();
      s.anchor_layout = pa.estimate.layout.describe();
      s.model_min = to_seconds(pt.estimate.time_to_train) / 60;
      s.model_anchor_min = to_seconds(pa.estimate.time_to_train) / 60;
      s.predicted_min = *anchor.time_to_train_min * s.model_min / s.model_anchor_min;
      if (pt.at_logged_convergence) s.model_logged_min = to_seconds(*pt.at_logged_convergence) / 60;
      if (pa.at_logged_convergence) s.model_anchor_logged_min = to_seconds(*pa.at_logged_convergence) / 60;
      s.step_anchored_min = step_anchored_minutes(target, pt, anchor, pa);
      s.peer_min = peer_minutes(rows, kinds, tg.row);
      s.curve_min = curve.anchored(ct, ca);
      s.perfect_min = *anchor.time_to_train_min * (ct.samples_to_converge / ca.samples_to_converge) *
                      (ca.accelerators / ct.accelerators);
      folds[k].push_back(std::move(s));
    }
    const std::lock_guard<std::mutex> g(lock);
    if (progress) progress(fmt::format("left out {} ({} of {})", system, ++done, systems.size()));
  });
  for (std::size_t k = 0; k < systems.size(); ++k) {
    for (ScalingRow& s : folds[k]) rep.rows.push_back(std::move(s));
    rep.skipped.insert(rep.skipped.end(), fold_skipped[k].begin(), fold_skipped[k].end());
  }
  // In the file's order, whatever the folds' order.
  std::sort(rep.rows.begin(), rep.rows.end(), [](const ScalingRow& a, const ScalingRow& b) { return a.row.line < b.row.line; });
  rep.summaries = summarise_scaling(rep.rows);
  return rep;
}

}  // namespace sp::calibration
