#include "calibration/mlperf/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "calibration/mlperf/fit_problem.hpp"
#include "calibration/predict/naive_baseline.hpp"
#include "sim/core/parallel_for.hpp"

namespace sp::calibration {

namespace {

constexpr int kInnerFolds = 5;

struct Context {
  const models::Catalog& catalog;
  const PlatformCatalog& platforms;
  const FitProblem& problem;
  HoldOut by;
  std::vector<std::string> skipped;

  const std::string& group_of(const PreparedRow& r) const { return by == HoldOut::system ? r.system : r.kind; }

  std::vector<std::string> groups(const std::vector<std::size_t>& use) const {
    std::set<std::string> g;
    for (std::size_t i : use) g.insert(group_of(problem.rows()[i]));
    return {g.begin(), g.end()};
  }
};

// Model errors from held-out log errors of `use` (parallel to `log_errors`): per workload, and
// per scale range over all workloads (far from the small systems most rows come from, the
// held-out errors are larger than any workload's typical one).
void set_model_errors(models::Calibration& c, const FitProblem& pb, const std::vector<std::size_t>& use,
                      const std::vector<double>& log_errors) {
  std::map<std::string, std::vector<double>> by_workload;
  std::map<int, std::vector<double>> by_scale;
  std::vector<double> pooled;
  for (std::size_t k = 0; k < use.size(); ++k) {
    const PreparedRow& r = pb.rows()[use[k]];
    // Every group gets an entry, even one whose errors are all NaN (it takes the pooled spread).
    std::vector<double>& workload = by_workload[r.workload.name];
    std::vector<double>& scale = by_scale[models::scale_ranges().lower_bound(r.row.accelerators)->first];
    if (std::isnan(log_errors[k])) continue;  // a kind its fit had not seen (kind_known)
    for (std::vector<double>* v : {&workload, &scale, &pooled}) v->push_back(std::abs(log_errors[k]));
  }
  // A group without a single row of a seen kind takes the spread of all of them rather than 0.
  const double all = robust_log_spread(pooled);
  const auto spread = [&](std::vector<double> e) { return e.empty() ? all : robust_log_spread(std::move(e)); };
  for (auto& [name, e] : by_workload) c.workloads[name].model_error = spread(std::move(e));
  c.scale_error.clear();
  for (auto& [bound, e] : by_scale) c.scale_error[bound] = spread(std::move(e));
}

// Whether a fit on `train` has seen `kind`. The model error is that of a system whose kind the fit
// knows; a held-out row of an unseen kind errs by its software levels' spread as well, which its
// interval adds separately (Calibration::software), so its error would count that spread twice.
bool kind_known(const FitProblem& pb, const std::vector<std::size_t>& train, const std::string& kind) {
  return std::any_of(train.begin(), train.end(), [&](std::size_t i) { return pb.rows()[i].kind == kind; });
}

// Held-out log errors of the rows `use` by k-fold cross-validation over their systems (system s
// in fold s mod k, systems in name order): what sets the model error of a fit on `use` without
// looking at anything else. Systems, not kinds, whatever the outer hold-out: the model error is
// that of a system whose kind the fit knows; what an unseen kind adds is its levels' spread. A
// row whose kind the fold's fit has not seen gets NaN (set_model_errors leaves it out).
std::vector<double> inner_errors(const Context& cx, const std::vector<std::size_t>& use, const Eigen::VectorXd& start) {
  const Context by_system{cx.catalog, cx.platforms, cx.problem, HoldOut::system, {}};
  const std::vector<std::string> systems = by_system.groups(use);
  const int folds = std::min<int>(kInnerFolds, static_cast<int>(systems.size()));
  std::vector<double> out(use.size(), 0.0);
  for (int f = 0; f < folds; ++f) {
    std::vector<std::size_t> train, test;
    for (std::size_t k = 0; k < use.size(); ++k) {
      const auto g = std::lower_bound(systems.begin(), systems.end(), by_system.group_of(cx.problem.rows()[use[k]]));
      if ((g - systems.begin()) % folds == f) {
        test.push_back(k);
      } else {
        train.push_back(use[k]);
      }
    }
    const FitProblem::Fit fit = cx.problem.fit(train, start, 25);
    for (std::size_t k : test) {
      const PreparedRow& r = cx.problem.rows()[use[k]];
      out[k] = kind_known(cx.problem, train, r.kind) ? cx.problem.log_error(r, fit.x) : std::nan("");
    }
  }
  return out;
}

ValidationRow predict_row(const Context& cx, const PreparedRow& r, const models::Calibration& c, int samples,
                          std::uint64_t seed) {
  ValidationRow v{r.row, predict_system(r.row, SystemModelInputs{cx.catalog, cx.platforms, c, samples, seed}), 0, false};
  compare_with_published(v);
  return v;
}

struct HeldOut {
  std::vector<std::size_t> rows;
  std::vector<ValidationRow> predictions;
  FitProblem::Fit fit;
  std::vector<std::size_t> train;  // the rows the fit used
};

// Refit without `group`, set its model errors from cross-validation inside the rest, predict it.
HeldOut hold_out(const Context& cx, const std::string& group, const Eigen::VectorXd& start, int samples,
                 std::uint64_t seed) {
  HeldOut out;
  std::vector<std::size_t>& train = out.train;
  for (std::size_t i = 0; i < cx.problem.rows().size(); ++i) {
    (cx.group_of(cx.problem.rows()[i]) == group ? out.rows : train).push_back(i);
  }
  out.fit = cx.problem.fit_fold(train, start, 25);  // from the priors and from `start`, the lower cost
  models::Calibration c = cx.problem.calibration(out.fit);
  set_model_errors(c, cx.problem, train, inner_errors(cx, train, out.fit.x));
  for (std::size_t i : out.rows) out.predictions.push_back(predict_row(cx, cx.problem.rows()[i], c, samples, seed));
  return out;
}

// Every group held out in turn, the groups spread over the cores (each fold is independent and
// lands at its rows' places: the result does not depend on the thread count); rows in the
// problem's order.
std::vector<ValidationRow> cross_validate(const Context& cx, const Eigen::VectorXd& start, const CalibrateOptions& o,
                                          std::vector<double>* log_errors) {
  std::vector<std::size_t> all(cx.problem.rows().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<ValidationRow> rows(all.size());
  std::vector<double> errors(all.size(), 0.0);
  const std::vector<std::string> groups = cx.groups(all);
  std::mutex progress;
  std::size_t done = 0;
  parallel_for(groups.size(), [&](std::size_t k) {
    const HeldOut h = hold_out(cx, groups[k], start, o.samples, o.seed);
    const std::lock_guard<std::mutex> lock(progress);
    for (std::size_t j = 0; j < h.rows.size(); ++j) {
      rows[h.rows[j]] = h.predictions[j];
      const PreparedRow& r = cx.problem.rows()[h.rows[j]];
      errors[h.rows[j]] = kind_known(cx.problem, h.train, r.kind) ? cx.problem.log_error(r, h.fit.x) : std::nan("");
    }
    if (o.progress) o.progress(fmt::format("left out {} ({} of {})", groups[k], ++done, groups.size()));
  });
  if (log_errors) *log_errors = std::move(errors);
  return rows;
}

ValidationReport report(std::vector<ValidationRow> rows, const std::vector<std::string>& skipped, HoldOut by) {
  add_naive_baselines(rows, by == HoldOut::kind ? BaselineExclusion::kind : BaselineExclusion::system);
  return summarise(std::move(rows), skipped);
}

}  // namespace

ValidationReport predict_left_out(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                                  const PlatformCatalog& platforms, HoldOut by, const std::string& group,
                                  int samples, std::uint64_t seed) {
  std::vector<std::string> skipped;
  const FitProblem pb(rows, catalog, platforms, skipped);
  const Context cx{catalog, platforms, pb, by, skipped};
  // Its rows are all of the one group left out: no row is left to give them a naive baseline.
  return report(hold_out(cx, group, pb.prior(), samples, seed).predictions, skipped, by);
}

FitResult calibrate_mlperf(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                           const PlatformCatalog& platforms, const CalibrateOptions& o) {
  std::vector<std::string> skipped;
  const FitProblem pb(rows, catalog, platforms, skipped);
  std::vector<std::size_t> all(pb.rows().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const FitProblem::Fit full = pb.fit_from_starts(all, 60);

  FitResult out;
  out.iterations = full.iterations;
  out.converged = full.converged;
  out.rows_used = pb.rows().size();
  out.calibration = pb.calibration(full);
  // Workload parameters as "bert.software_efficiency", software levels as "kind: H200-SXM5-141GB";
  // the reference's levels are not parameters of the fit.
  std::vector<double> values, sds;
  for (std::size_t k = 0; k < pb.parameters().size(); ++k) {
    if (!full.seen[k]) continue;
    const auto i = static_cast<Eigen::Index>(k);
    values.push_back(full.x[i]);
    sds.push_back(std::sqrt(std::max(0.0, full.covariance(i, i))));
    const Parameter& q = pb.parameters()[k];
    switch (q.kind) {
      case Parameter::Kind::efficiency: out.parameter_names.push_back(q.name + ".software_efficiency"); break;
      case Parameter::Kind::evaluation_cost:
        out.parameter_names.push_back(q.name + "." +
                                      models::kEvaluationCosts[static_cast<std::size_t>(q.cost)].calibration_key);
        break;
      case Parameter::Kind::host_per_step:
        out.parameter_names.push_back(q.name + ".host_per_step" + (q.stack.empty() ? "" : "_on." + q.stack));
        break;
      case Parameter::Kind::clock_boost: out.parameter_names.push_back("clock_boost.gain"); break;
      case Parameter::Kind::stack: out.parameter_names.push_back("stack: " + q.name); break;
      case Parameter::Kind::family: out.parameter_names.push_back("family: " + q.name); break;
      case Parameter::Kind::kind: out.parameter_names.push_back("kind: " + q.name); break;
    }
  }
  out.parameters = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
  out.sds = Eigen::Map<const Eigen::VectorXd>(sds.data(), static_cast<Eigen::Index>(sds.size()));

  // The committed model error: the spread of the leave-one-system-out errors (of the in-sample
  // ones without it, an optimistic figure).
  std::vector<double> log_errors(all.size());
  const Context by_system{catalog, platforms, pb, HoldOut::system, skipped};
  if (o.leave_system_out) {
    out.leave_system_out = report(cross_validate(by_system, full.x, o, &log_errors), skipped, HoldOut::system);
  } else {
    for (std::size_t i : all) log_errors[i] = pb.log_error(pb.rows()[i], full.x);
  }
  set_model_errors(out.calibration, pb, all, log_errors);
  if (o.leave_kind_out) {
    const Context by_kind{catalog, platforms, pb, HoldOut::kind, skipped};
    out.leave_kind_out = report(cross_validate(by_kind, full.x, o, nullptr), skipped, HoldOut::kind);
  }
  std::vector<ValidationRow> in_sample;
  for (const PreparedRow& r : pb.rows()) in_sample.push_back(predict_row(by_system, r, out.calibration, o.samples, o.seed));
  out.in_sample = report(std::move(in_sample), skipped, HoldOut::system);
  return out;
}

}  // namespace sp::calibration
