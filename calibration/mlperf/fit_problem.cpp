#include "calibration/mlperf/fit_problem.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace sp::calibration {

namespace {

// The scatter of log time between systems the model cannot tell apart (the 8-GPU H100 BERT rows
// of six submitters span 5.4-5.9 min): residuals are in units of it, so that the priors weigh
// against the data as Gaussian priors against Gaussian errors of this size.
constexpr double kObservationSd = 0.05;
// A phase timed in one system's logs scatters more than its total: the first evaluation runs
// 1.1-1.8x the later ones and the runs of one system differ by ~10 % (RetinaNet at 2,528 GPUs:
// 0.45-0.50 s per evaluation, 2.6-3.3 s after the last one).
constexpr double kPhaseSd = 0.15;
// A one-time stall (the evaluation's set-up, BERT's data loaders starting) is not a rate: it
// depends on the system's storage and software more than on anything the model describes, and
// spreads by a factor of about 2 between systems running the same code on the same GPUs (Llama's
// 8-10 s on NVIDIA's, 13 s on Azure's, 17-21 s on Dell's, 29-31 s on Lambda's; BERT's 1.0-2.9 s,
// FlexAI's 9-14 s). Weighed as 0.15, one such system would set the reduced chi-square, and with
// it the uncertainty of every parameter.
constexpr double kSetupSd = 0.5;
double phase_sd(PhaseObservation::Phase p) {
  return p == PhaseObservation::Phase::evaluation_setup ? kSetupSd : kPhaseSd;
}
double logit(double p) { return std::log(p / (1 - p)); }
double logistic(double u) { return 1 / (1 + std::exp(-u)); }

// A quantity that lives in its plausible range [lo, hi] (a workload's software efficiency, its
// host time per step): a logistic on the log scale, so the fit can approach but never leave it.
double bounded(double u, double lo, double hi) { return lo * std::pow(hi / lo, logistic(u)); }
double bounded_parameter(double v, double lo, double hi) { return logit(std::log(v / lo) / std::log(hi / lo)); }
double efficiency_of(double u, const models::Workload& w) {
  return bounded(u, w.software_efficiency_min, w.software_efficiency_max);
}
double efficiency_parameter(const models::Workload& w) {
  return bounded_parameter(w.software_efficiency, w.software_efficiency_min, w.software_efficiency_max);
}
// The host time per step of another software stack's code than the files describe (maxdiffusion
// on JAX, tinygrad): from a single host synchronisation (0.1 ms) to a second of host work a step.
constexpr double kOtherStackHostMin = 1e-4, kOtherStackHostMax = 1.0;
// The clock-boost gain: a logistic over [0, the most a boost can give]. Its prior sits at the
// middle of that range, as wide as the range (no public figure says where in it a boost lands).
double boost_gain_of(double u) { return models::Calibration::kMaxClockBoostGain * logistic(u); }
constexpr double kBoostPriorSd = 2.0;

}  // namespace

Eigen::Index FitProblem::add(Parameter p) {
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& q = parameters_[i];
    if (q.kind == p.kind && q.name == p.name && q.cost == p.cost && q.stack == p.stack) {
      return static_cast<Eigen::Index>(i);
    }
  }
  parameters_.push_back(std::move(p));
  return static_cast<Eigen::Index>(parameters_.size() - 1);
}

FitProblem::FitProblem(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                       const PlatformCatalog& platforms, std::vector<std::string>& skipped) {
  // Each row at the layout it ran: its submitter's recipe, not the one the unfitted model prefers.
  const SystemModelInputs raw{catalog, platforms, models::Calibration{}, 0, 1, models::LayoutChoice::recipe};
  using K = Parameter::Kind;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (!r.time_to_train_min) continue;
    // The same runs filed twice (Dell's, once for MLPerf Power) are one observation, fitted once.
    if (r.repeats_an_earlier_row(rows, i)) {
      skipped.push_back(r.left_out_as_a_repeat());
      continue;
    }
    const SystemPrediction sp = predict_system(r, raw);
    if (sp.status != "ok") {
      skipped.push_back(fmt::format("line {}: {}", r.line, sp.message));
      continue;
    }
    PreparedRow p;
    p.row = r;
    p.workload = *catalog.find_workload(r.benchmark);
    p.workload.convergence = p.workload.convergence.at_round(r.round);
    const models::Accelerator a = *catalog.find_accelerator(r.accelerator);
    p.platform = sp.platform;  // the one predict_system chose (a named cluster's, or its kind's)
    p.gbs = sp.global_batch;
    p.spec = spec_of(sp.estimate.layout);
    p.system = r.system();
    p.kind = a.name;
    p.stack = models::software_stack_of(r.framework, a);
    p.converged_samples = r.converged_samples(p.workload.train_samples).value_or(0.0);

    auto wi = std::find_if(files_.begin(), files_.end(), [&](const auto& f) { return f.name == p.workload.name; });
    if (wi == files_.end()) wi = files_.insert(files_.end(), p.workload);
    const int w = static_cast<int>(wi - files_.begin());
    // Workload parameters' priors: the files' values, a factor e^workload_spread either way.
    const double prior_sd = defaults_.workload_spread;
    p.deps.push_back(add({K::efficiency, p.workload.name, w, efficiency_parameter(p.workload), prior_sd, -1, {}}));
    const models::EvaluationCosts& e = p.workload.evaluation_costs;
    // Each evaluation cost the workload file names is fitted, its value there the prior's centre.
    for (std::size_t k = 0; k < models::kEvaluationCosts.size(); ++k) {
      const Duration v = e.*models::kEvaluationCosts[k].member;
      if (v <= Duration{}) continue;
      p.deps.push_back(add({K::evaluation_cost, p.workload.name, w, std::log(to_seconds(v)), prior_sd,
                            static_cast<int>(k), {}}));
    }
    if (p.workload.host_per_step > Duration{}) {
      // The fixed host time of the code the row ran: the files' (NVIDIA's) within the file's
      // range, or its own stack's within kOtherStack*, with the files' value as the prior either way.
      const std::string on = p.stack == models::Workload::kDescribedStack ? "" : p.stack;
      const double lo = on.empty() ? to_seconds(p.workload.host_per_step_min) : kOtherStackHostMin;
      const double hi = on.empty() ? to_seconds(p.workload.host_per_step_max) : kOtherStackHostMax;
      // The prior as wide in log time as the other fitted costs' (e^workload_spread either way),
      // at its centre: the logistic's slope there converts it.
      const double u = bounded_parameter(to_seconds(p.workload.host_per_step), lo, hi);
      const double slope = std::log(hi / lo) * logistic(u) * (1 - logistic(u));
      Parameter q{K::host_per_step, p.workload.name, w, u, prior_sd / slope, -1, on};
      q.lo = lo;
      q.hi = hi;
      p.deps.push_back(add(q));
    }
    if (r.boosted(p.workload)) p.deps.push_back(add({K::clock_boost, "clock_boost", -1, 0.0, kBoostPriorSd, -1, {}}));
    p.family = a.family + "/" + p.stack;
    // Every level gets a parameter; fit() holds those of its reference at 0.
    const auto level = [&](K kind, const std::string& key, double spread) {
      const Eigen::Index i = add({kind, key, -1, 0.0, spread, -1, {}});
      p.deps.push_back(i);
      p.levels.push_back(i);
    };
    level(K::stack, p.stack, defaults_.stack_spread);
    level(K::family, p.family, defaults_.family_spread);
    level(K::kind, p.kind, defaults_.kind_spread);
    rows_.push_back(std::move(p));
  }
}

Eigen::VectorXd FitProblem::prior() const {
  Eigen::VectorXd x(static_cast<Eigen::Index>(parameters_.size()));
  for (std::size_t i = 0; i < parameters_.size(); ++i) x[static_cast<Eigen::Index>(i)] = parameters_[i].prior;
  return x;
}

models::Workload FitProblem::with(const PreparedRow& r, const Eigen::VectorXd& x, models::Platform& p) const {
  models::Workload w = r.workload;
  double log_scale = 0;
  for (Eigen::Index i : r.deps) {
    const Parameter& q = parameters_[static_cast<std::size_t>(i)];
    switch (q.kind) {
      case Parameter::Kind::efficiency: w.software_efficiency = efficiency_of(x[i], r.workload); break;
      case Parameter::Kind::evaluation_cost:
        w.evaluation_costs.*models::kEvaluationCosts[static_cast<std::size_t>(q.cost)].member = seconds(std::exp(x[i]));
        break;
      case Parameter::Kind::host_per_step: w.host_per_step = seconds(bounded(x[i], q.lo, q.hi)); break;
      case Parameter::Kind::clock_boost: p.accelerator.compute_clock = 1 + boost_gain_of(x[i]); break;
      default: log_scale += x[i];
    }
  }
  p.accelerator.efficiency_scale = std::exp(log_scale);
  return w;
}

double FitProblem::log_error(const PreparedRow& r, const Eigen::VectorXd& x) const {
  models::Platform p = r.platform;
  const models::Workload w = with(r, x, p);
  const models::TrainingEstimate e = models::estimate_training(w, p, r.row.accelerators, r.gbs, r.spec);
  if (!e.ok()) return 1.0;  // cannot happen for prepared rows: memory does not depend on x
  return std::log(to_seconds(e.time_to_train) / 60.0 / *r.row.time_to_train_min);
}

std::vector<double> FitProblem::phase_log_errors(const PreparedRow& r, const Eigen::VectorXd& x) const {
  std::vector<double> out(1 + r.row.phases.size());
  residuals(r, x, out.data());
  out.erase(out.begin());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] *= phase_sd(r.row.phases[k].phase);
  return out;
}

void FitProblem::residuals(const PreparedRow& r, const Eigen::VectorXd& x, double* out) const {
  models::Platform p = r.platform;
  const models::Workload w = with(r, x, p);
  const models::TrainingEstimate e = models::estimate_training(w, p, r.row.accelerators, r.gbs, r.spec);
  const double samples = r.converged_samples > 0 ? r.converged_samples : e.convergence.mean_samples;
  const Duration t = r.converged_samples > 0 ? models::time_to_train_at(e, w, samples) : e.time_to_train;
  out[0] = std::log(to_seconds(t) / 60.0 / *r.row.time_to_train_min) / kObservationSd;
  if (r.row.phases.empty()) return;
  const models::EvaluationCost c = models::evaluation_at(e, w, samples);
  for (std::size_t k = 0; k < r.row.phases.size(); ++k) {
    const PhaseObservation& o = r.row.phases[k];
    out[1 + k] = std::log(modelled_phase(e, c, o.phase) / o.seconds) / phase_sd(o.phase);
  }
}

void FitProblem::choose_reference(const std::vector<std::size_t>& use, Fit& f) const {
  // The kind with the most rows (ties: the first name), the stack most of them ran, its family.
  std::map<std::string, int> per_kind;
  for (std::size_t i : use) ++per_kind[rows_[i].kind];
  const auto kind = std::max_element(per_kind.begin(), per_kind.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (kind == per_kind.end()) return;
  std::map<std::pair<std::string, std::string>, int> per_stack;  // (stack, family) of its rows
  for (std::size_t i : use) {
    if (rows_[i].kind == kind->first) ++per_stack[{rows_[i].stack, rows_[i].family}];
  }
  const auto stack = std::max_element(per_stack.begin(), per_stack.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  f.reference_kind = kind->first;
  f.reference_stack = stack->first.first;
  f.reference_family = stack->first.second;
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    const Parameter& q = parameters_[k];
    const std::string& held = q.kind == Parameter::Kind::stack    ? f.reference_stack
                              : q.kind == Parameter::Kind::family ? f.reference_family
                              : q.kind == Parameter::Kind::kind   ? f.reference_kind
                                                                  : std::string{};
    if (!held.empty() && q.name == held) f.seen[k] = false;
  }
}

FitProblem::Fit FitProblem::fit(const std::vector<std::size_t>& use, Eigen::VectorXd start, int iterations) const {
  const auto np = static_cast<Eigen::Index>(parameters_.size());
  Fit out;
  out.seen.assign(parameters_.size(), false);
  for (std::size_t i : use) {
    for (Eigen::Index k : rows_[i].deps) out.seen[static_cast<std::size_t>(k)] = true;
  }
  choose_reference(use, out);
  const Eigen::VectorXd x0 = prior();
  for (Eigen::Index k = 0; k < np; ++k) {
    if (!out.seen[static_cast<std::size_t>(k)]) start[k] = x0[k];
  }
  // Each row contributes its time and its phases; offsets[i] is where row i's residuals start.
  std::vector<Eigen::Index> offsets(use.size() + 1, 0);
  for (std::size_t i = 0; i < use.size(); ++i) {
    offsets[i + 1] = offsets[i] + 1 + static_cast<Eigen::Index>(rows_[use[i]].row.phases.size());
  }
  const Eigen::Index m = offsets.back();
  const auto residual_vector = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(m + np);
    for (std::size_t i = 0; i < use.size(); ++i) residuals(rows_[use[i]], x, r.data() + offsets[i]);
    for (Eigen::Index k = 0; k < np; ++k) r[m + k] = (x[k] - x0[k]) / parameters_[static_cast<std::size_t>(k)].sd;
    return r;
  };
  // Each row depends on its own few parameters: finite differences over those only.
  const auto jacobian = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r) {
    Eigen::MatrixXd j = Eigen::MatrixXd::Zero(m + np, np);
    constexpr double h = 1e-5;
    std::vector<double> rh;
    for (std::size_t i = 0; i < use.size(); ++i) {
      const PreparedRow& row = rows_[use[i]];
      rh.resize(static_cast<std::size_t>(offsets[i + 1] - offsets[i]));
      for (Eigen::Index k : row.deps) {
        if (!out.seen[static_cast<std::size_t>(k)]) continue;  // the reference's levels stay at 0
        Eigen::VectorXd xh = x;
        xh[k] += h;
        residuals(row, xh, rh.data());
        for (std::size_t q = 0; q < rh.size(); ++q) {
          const Eigen::Index at = offsets[i] + static_cast<Eigen::Index>(q);
          j(at, k) = (rh[q] - r[at]) / h;
        }
      }
    }
    for (Eigen::Index k = 0; k < np; ++k) j(m + k, k) = 1 / parameters_[static_cast<std::size_t>(k)].sd;
    return j;
  };
  // A relative gain of 1e-7 moves the parameters by far less than their uncertainties (1e-8 let
  // the fit crawl for hundreds of iterations along BERT's barely constrained host work).
  const LeastSquaresResult lm = levenberg_marquardt({residual_vector, jacobian}, start, iterations, 1e-7);
  out.x = lm.x;
  out.iterations = lm.iterations;
  out.converged = lm.converged;
  out.cost = lm.residuals.squaredNorm();

  // Covariance (J^T J)^-1 at the minimum, scaled by the reduced chi-square of the data when the
  // rows scatter more than kObservationSd (the model's own error then shows in the parameters).
  const Eigen::MatrixXd j = jacobian(lm.x, lm.residuals);
  const Eigen::MatrixXd info = j.transpose() * j;
  Eigen::Index free = 0;
  for (bool s : out.seen) free += s ? 1 : 0;
  const double chi2 = lm.residuals.head(m).squaredNorm() / static_cast<double>(std::max<Eigen::Index>(1, m - free));
  out.covariance = info.ldlt().solve(Eigen::MatrixXd::Identity(np, np)) * std::max(1.0, chi2);
  return out;
}

models::Calibration FitProblem::calibration(const Fit& f) const {
  models::Calibration c = defaults_;
  if (!f.reference_kind.empty()) {  // a fit on no rows keeps the defaults
    c.reference_stack = f.reference_stack;
    c.reference_family = f.reference_family;
    c.reference_kind = f.reference_kind;
  }
  const auto sd_of_sum = [&](const std::vector<Eigen::Index>& idx) {
    double v = 0;
    for (Eigen::Index a : idx) {
      for (Eigen::Index b : idx) v += f.covariance(a, b);
    }
    return std::sqrt(std::max(0.0, v));
  };
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    const Parameter& q = parameters_[k];
    const auto i = static_cast<Eigen::Index>(k);
    if (q.kind != Parameter::Kind::efficiency || !f.seen[k]) continue;
    const models::Workload& file = files_[static_cast<std::size_t>(q.workload)];
    models::WorkloadCalibration& curve = c.workloads[q.name];
    curve.software_efficiency = efficiency_of(f.x[i], file);
    // d log(efficiency) / du = log(max / min) L (1 - L) for the logistic L.
    const double l = logistic(f.x[i]);
    curve.log_sd = std::log(file.software_efficiency_max / file.software_efficiency_min) * l * (1 - l) *
                   std::sqrt(std::max(0.0, f.covariance(i, i)));
  }
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    const Parameter& q = parameters_[k];
    const auto i = static_cast<Eigen::Index>(k);
    if (!f.seen[k]) continue;
    if (q.kind == Parameter::Kind::evaluation_cost) {
      c.workloads[q.name].evaluation_costs[static_cast<std::size_t>(q.cost)] = seconds(std::exp(f.x[i]));
    }
    if (q.kind == Parameter::Kind::clock_boost) {
      // d gain / du = max L (1 - L) for the logistic L.
      const double l = logistic(f.x[i]);
      c.clock_boost_gain = boost_gain_of(f.x[i]);
      c.clock_boost_sd = models::Calibration::kMaxClockBoostGain * l * (1 - l) * std::sqrt(std::max(0.0, f.covariance(i, i)));
    }
    if (q.kind == Parameter::Kind::host_per_step) {
      models::WorkloadCalibration& curve = c.workloads[q.name];
      (q.stack.empty() ? curve.host_per_step.emplace() : curve.host_per_step_on[q.stack]) =
          seconds(bounded(f.x[i], q.lo, q.hi));
    }
  }
  // A level's uncertainty is that of the sum of the levels down to it (they are correlated: one
  // row on a new stack cannot say which of stack, family or kind is slow).
  for (const PreparedRow& r : rows_) {
    std::vector<Eigen::Index> path;
    for (Eigen::Index i : r.levels) {
      const Parameter& q = parameters_[static_cast<std::size_t>(i)];
      if (!f.seen[static_cast<std::size_t>(i)]) continue;
      path.push_back(i);
      auto& levels = q.kind == Parameter::Kind::stack ? c.stacks : q.kind == Parameter::Kind::family ? c.families : c.kinds;
      levels[q.name] = models::SoftwareLevel{f.x[i], sd_of_sum(path)};
    }
  }
  return c;
}

double robust_log_spread(std::vector<double> abs_log) {
  if (abs_log.empty()) return 0.0;
  const auto mid = abs_log.begin() + static_cast<std::ptrdiff_t>(abs_log.size() / 2);
  std::nth_element(abs_log.begin(), mid, abs_log.end());
  return *mid / 0.6745;
}

FitProblem::Fit FitProblem::fit_from_starts(const std::vector<std::size_t>& use, int iterations) const {
  Fit best = fit(use, prior(), iterations);
  // All the host times move together: mixed starts (one low, another high) are not tried.
  for (double share : {0.1, 0.9}) {
    Eigen::VectorXd start = prior();
    bool moved = false;  // some row of `use` sees a host time (else the start is the priors')
    for (std::size_t k = 0; k < parameters_.size(); ++k) {
      if (parameters_[k].kind != Parameter::Kind::host_per_step || !best.seen[k]) continue;
      start[static_cast<Eigen::Index>(k)] = logit(share);
      moved = true;
    }
    if (!moved) break;
    Fit f = fit(use, start, iterations);
    if (f.cost < best.cost) best = std::move(f);
  }
  return best;
}

FitProblem::Fit FitProblem::fit_fold(const std::vector<std::size_t>& use, const Eigen::VectorXd& also,
                                     int iterations) const {
  Fit best = fit_from_starts(use, iterations);
  if (also.size() == best.x.size() && (also.array() == prior().array()).all()) return best;
  Fit from_also = fit(use, also, iterations);
  return from_also.cost < best.cost ? from_also : best;
}

}  // namespace sp::calibration
