#include "calibration/mlperf/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "calibration/fit/levenberg_marquardt.hpp"

namespace sp::calibration {

namespace {

constexpr const char* kReference = "H100-SXM5-80GB";
constexpr double kPriorSd = 2.0;  // in the transformed space: a factor e^2 ~ 7 either way
// The scatter of log time between systems the model cannot tell apart (the 8-GPU H100 BERT
// rows of six submitters span 5.4-5.9 min): residuals are in units of it, so that the prior
// weighs against the data as a Gaussian prior against Gaussian errors of this size.
constexpr double kObservationSd = 0.05;

double logit(double p) { return std::log(p / (1 - p)); }
double logistic(double u) { return 1 / (1 + std::exp(-u)); }

// A workload's software efficiency lives in its plausible range [lo, hi]: a logistic on the log
// scale, so the fit can approach but never leave it.
double efficiency_of(double u, const models::Workload& w) {
  return w.software_efficiency_min *
         std::pow(w.software_efficiency_max / w.software_efficiency_min, logistic(u));
}
double efficiency_parameter(const models::Workload& w) {
  return logit(std::log(w.software_efficiency / w.software_efficiency_min) /
               std::log(w.software_efficiency_max / w.software_efficiency_min));
}

// A row resolved once: its workload, platform, batch and layout do not depend on the parameters.
struct Prepared {
  MlperfResult row;
  models::Workload workload;
  models::Platform platform;
  std::int64_t gbs = 0;
  models::ParallelSpec spec;
  std::string system;   // leave-one-system-out group
  int curve = -1;       // index of the workload's parameter
  int scale = -1;       // index of the accelerator's parameter, -1 for the reference
};

models::ParallelSpec spec_of(const models::ParallelLayout& l) {
  models::ParallelSpec s;
  s.tensor = l.tp;
  s.context = l.cp;
  s.pipeline = l.pp;
  s.micro_batch = l.micro_batch;
  s.distributed_optimizer = l.sharding;
  s.overlap_tensor_parallel = l.overlap_tensor_parallel;
  return s;
}

struct Problem {
  std::vector<Prepared> rows;
  std::vector<std::string> workloads;     // curve order
  std::vector<std::string> accelerators;  // scale order
  std::vector<models::Workload> files;    // the workloads as their files give them, curve order
  Eigen::VectorXd prior;                  // the file values, transformed

  Eigen::Index size() const { return static_cast<Eigen::Index>(workloads.size() + accelerators.size()); }
  Eigen::Index scale_index(int a) const { return static_cast<Eigen::Index>(workloads.size()) + a; }

  // log(predicted / published) of one row at x, in units of kObservationSd.
  double residual(const Prepared& r, const Eigen::VectorXd& x) const {
    models::Workload w = r.workload;
    w.software_efficiency = efficiency_of(x[r.curve], r.workload);
    models::Platform p = r.platform;
    p.accelerator.efficiency_scale = r.scale >= 0 ? std::exp(x[scale_index(r.scale)]) : 1.0;
    const models::TrainingEstimate e = models::estimate_training(w, p, r.row.accelerators, r.gbs, r.spec);
    if (!e.ok()) return 1.0;  // cannot happen for prepared rows: memory does not depend on x
    return std::log(to_seconds(e.time_to_train) / 60.0 / *r.row.time_to_train_min) / kObservationSd;
  }

  // Residuals of the rows in `use` (all when empty), then the prior terms.
  Eigen::VectorXd residuals(const Eigen::VectorXd& x, const std::vector<std::size_t>& use) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(use.size()) + size());
    for (std::size_t i = 0; i < use.size(); ++i) out[static_cast<Eigen::Index>(i)] = residual(rows[use[i]], x);
    for (Eigen::Index k = 0; k < size(); ++k) out[static_cast<Eigen::Index>(use.size()) + k] = (x[k] - prior[k]) / kPriorSd;
    return out;
  }

  // Each row depends on its workload's parameter and its accelerator's scale only.
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& x, const Eigen::VectorXd& r, const std::vector<std::size_t>& use) const {
    Eigen::MatrixXd j = Eigen::MatrixXd::Zero(r.size(), size());
    constexpr double h = 1e-5;
    for (std::size_t i = 0; i < use.size(); ++i) {
      const Prepared& row = rows[use[i]];
      std::vector<Eigen::Index> deps = {row.curve};
      if (row.scale >= 0) deps.push_back(scale_index(row.scale));
      for (Eigen::Index k : deps) {
        Eigen::VectorXd xh = x;
        xh[k] += h;
        j(static_cast<Eigen::Index>(i), k) = (residual(row, xh) - r[static_cast<Eigen::Index>(i)]) / h;
      }
    }
    for (Eigen::Index k = 0; k < size(); ++k) j(static_cast<Eigen::Index>(use.size()) + k, k) = 1 / kPriorSd;
    return j;
  }

  LeastSquaresResult fit(const std::vector<std::size_t>& use, const Eigen::VectorXd& start, int iterations) const {
    LeastSquaresProblem p{[&](const Eigen::VectorXd& x) { return residuals(x, use); },
                          [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r) { return jacobian(x, r, use); }};
    return levenberg_marquardt(p, start, iterations);
  }

  models::Calibration calibration(const Eigen::VectorXd& x) const {
    models::Calibration c;
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      c.workloads[workloads[w]] = models::WorkloadCurve{efficiency_of(x[static_cast<Eigen::Index>(w)], files[w])};
    }
    for (std::size_t a = 0; a < accelerators.size(); ++a) {
      c.accelerator_scale[accelerators[a]] = std::exp(x[scale_index(static_cast<int>(a))]);
    }
    return c;
  }
};

// The row predicted with parameters x: the expected time, and when samples > 0 the [p10, p90]
// band with the workload's model error.
ValidationRow evaluate(const Problem& pb, const Prepared& r, const Eigen::VectorXd& x, double model_error = 0,
                       int samples = 0, std::uint64_t seed = 1) {
  ValidationRow v;
  v.row = r.row;
  v.prediction.global_batch = r.gbs;
  models::Workload w = r.workload;
  w.software_efficiency = efficiency_of(x[r.curve], r.workload);
  w.model_error = model_error;
  models::Platform p = r.platform;
  p.accelerator.efficiency_scale = r.scale >= 0 ? std::exp(x[pb.scale_index(r.scale)]) : 1.0;
  v.prediction.estimate = models::estimate_training(w, p, r.row.accelerators, r.gbs, r.spec);
  if (samples > 0) {
    models::add_prediction_interval(v.prediction.estimate, w, p, samples, seed, static_cast<std::uint64_t>(r.row.row));
  }
  compare_with_published(v);
  return v;
}

// The robust spread of log errors: median |log(1 + error)| / 0.6745, the normal-consistent MAD,
// so that one system on an unseen software stack (tinybox, -76 %) does not widen every interval
// of its workload; such outliers stay visible as rows outside [p10, p90] in the coverage.
double robust_log_spread(std::vector<double> abs_log) {
  if (abs_log.empty()) return 0.0;
  const auto mid = abs_log.begin() + static_cast<std::ptrdiff_t>(abs_log.size() / 2);
  std::nth_element(abs_log.begin(), mid, abs_log.end());
  return *mid / 0.6745;
}

}  // namespace

FitResult calibrate_mlperf(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                           const PlatformCatalog& platforms, const CalibrateOptions& o) {
  Problem pb;
  std::vector<std::string> skipped;
  const SystemModelInputs raw{catalog, platforms, models::Calibration{}, 0, 1};
  for (const MlperfResult& r : rows) {
    if (!r.time_to_train_min) continue;
    const SystemPrediction sp = predict_system(r, raw);
    if (sp.status != "ok") {
      skipped.push_back(fmt::format("line {}: {}", r.line, sp.message));
      continue;
    }
    Prepared p;
    p.row = r;
    p.workload = *catalog.find_workload(r.benchmark);
    p.platform = *platforms.for_system(*catalog.find_accelerator(r.accelerator), r.accelerators_per_node);
    p.gbs = sp.global_batch;
    p.spec = spec_of(sp.estimate.layout);
    p.system = r.submitter + " / " + r.system_name;
    auto wi = std::find(pb.workloads.begin(), pb.workloads.end(), p.workload.name);
    if (wi == pb.workloads.end()) {
      wi = pb.workloads.insert(pb.workloads.end(), p.workload.name);
      pb.files.push_back(p.workload);
    }
    p.curve = static_cast<int>(wi - pb.workloads.begin());
    if (p.platform.accelerator.name != kReference) {
      auto ai = std::find(pb.accelerators.begin(), pb.accelerators.end(), p.platform.accelerator.name);
      if (ai == pb.accelerators.end()) ai = pb.accelerators.insert(pb.accelerators.end(), p.platform.accelerator.name);
      p.scale = static_cast<int>(ai - pb.accelerators.begin());
    }
    pb.rows.push_back(std::move(p));
  }
  // Start from, and lean on, the values in the files.
  pb.prior = Eigen::VectorXd::Zero(pb.size());
  for (std::size_t w = 0; w < pb.workloads.size(); ++w) {
    pb.prior[static_cast<Eigen::Index>(w)] = efficiency_parameter(pb.files[w]);
  }

  std::vector<std::size_t> all(pb.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const LeastSquaresResult full = pb.fit(all, pb.prior, 60);

  FitResult out;
  out.parameters = full.x;
  out.iterations = full.iterations;
  out.converged = full.converged;
  out.rows_used = pb.rows.size();
  out.calibration = pb.calibration(full.x);
  for (const std::string& w : pb.workloads) out.parameter_names.push_back(w + ".software_efficiency");
  for (const std::string& a : pb.accelerators) out.parameter_names.push_back(a + ".efficiency_scale");

  // Per row, the parameters that predict it: the full fit in sample; with `loo`, the fit
  // without the row's system.
  std::vector<Eigen::VectorXd> held_out_x;
  if (o.leave_one_out) {
    std::map<std::string, Eigen::VectorXd> by_system;
    for (const Prepared& r : pb.rows) by_system.emplace(r.system, Eigen::VectorXd());
    for (auto& [system, x] : by_system) {
      std::vector<std::size_t> keep;
      for (std::size_t i = 0; i < pb.rows.size(); ++i) {
        if (pb.rows[i].system != system) keep.push_back(i);
      }
      x = pb.fit(keep, full.x, 25).x;
    }
    for (const Prepared& r : pb.rows) held_out_x.push_back(by_system.at(r.system));
  }
  // The model's own error per workload: the spread of its held-out log errors (of its in-sample
  // ones without `loo`, an optimistic figure).
  for (std::size_t w = 0; w < pb.workloads.size(); ++w) {
    std::vector<double> abs_log;
    for (std::size_t i = 0; i < pb.rows.size(); ++i) {
      if (pb.rows[i].curve != static_cast<int>(w)) continue;
      const ValidationRow v = evaluate(pb, pb.rows[i], o.leave_one_out ? held_out_x[i] : full.x);
      abs_log.push_back(std::abs(std::log1p(v.error)));
    }
    out.calibration.workloads[pb.workloads[w]].model_error = robust_log_spread(std::move(abs_log));
  }
  // And per scale range, over all workloads: far from the small systems most rows come from, the
  // held-out errors are larger than any workload's typical one.
  for (const auto& [bound, name] : models::scale_ranges()) {
    std::vector<double> abs_log;
    for (std::size_t i = 0; i < pb.rows.size(); ++i) {
      const int n = pb.rows[i].row.accelerators;
      const auto range = models::scale_ranges().lower_bound(n);
      if (range->first != bound) continue;
      const ValidationRow v = evaluate(pb, pb.rows[i], o.leave_one_out ? held_out_x[i] : full.x);
      abs_log.push_back(std::abs(std::log1p(v.error)));
    }
    if (!abs_log.empty()) out.calibration.scale_error[bound] = robust_log_spread(std::move(abs_log));
  }
  const auto report = [&](const auto& x_of) {
    std::vector<ValidationRow> rows;
    for (std::size_t i = 0; i < pb.rows.size(); ++i) {
      const Prepared& r = pb.rows[i];
      models::Workload w = r.workload;
      out.calibration.apply(w);
      rows.push_back(evaluate(pb, r, x_of(i), w.model_error_at(r.row.accelerators), o.samples, o.seed));
    }
    return summarise(std::move(rows), skipped);
  };
  out.in_sample = report([&](std::size_t) -> const Eigen::VectorXd& { return full.x; });
  if (o.leave_one_out) {
    out.leave_one_out = report([&](std::size_t i) -> const Eigen::VectorXd& { return held_out_x[i]; });
    // Rows whose accelerator kind some other system also ran: what the model does on hardware
    // it was fitted on, apart from software stacks seen once (tinygrad, the B200 preview).
    std::map<std::string, std::set<std::string>> systems_of;
    for (const Prepared& r : pb.rows) systems_of[r.platform.accelerator.name].insert(r.system);
    std::vector<ValidationRow> seen;
    for (std::size_t i = 0; i < pb.rows.size(); ++i) {
      if (systems_of[pb.rows[i].platform.accelerator.name].size() > 1) seen.push_back(out.leave_one_out.rows[i]);
    }
    ErrorSummary s = summarise(std::move(seen), {}).summaries.back();
    s.group = "hardware seen elsewhere";
    out.leave_one_out.summaries.push_back(s);
  }
  return out;
}

std::string calibration_yaml(const FitResult& f, const std::string& data_file, const std::string& sha,
                             const std::string& command, const std::string& fitted_on) {
  std::string y;
  y += "# scalepoint calibration against MLPerf Training results: regenerate with\n";
  y += "#   " + command + "\n";
  y += "# Parameters (calibration/mlperf/calibrate.hpp says which and why so few).\n";
  y += "provenance:\n";
  y += fmt::format("  data: \"{}\"\n  data_sha256: \"{}\"\n  fitted_on: \"{}\"\n", data_file, sha, fitted_on);
  y += fmt::format("  rows: {}\n  iterations: {}\n  converged: {}\n", f.rows_used, f.iterations, f.converged);
  y += "workloads:\n";
  for (const auto& [name, c] : f.calibration.workloads) {
    y += fmt::format("  {}: {{software_efficiency: {:.6g}, model_error: {:.6g}}}\n", name, c.software_efficiency,
                     c.model_error);
  }
  y += "model_error_by_scale:  # over all workloads, by range of N\n";
  for (const auto& [bound, name] : models::scale_ranges()) {
    if (auto it = f.calibration.scale_error.find(bound); it != f.calibration.scale_error.end()) {
      y += fmt::format("  \"{}\": {:.6g}\n", name, it->second);
    }
  }
  y += "accelerators:\n";
  for (const auto& [name, s] : f.calibration.accelerator_scale) y += fmt::format("  {}: {{efficiency_scale: {:.6g}}}\n", name, s);
  const auto summary = [&](const char* key, const ValidationReport& rep) {
    if (rep.summaries.empty()) return;
    y += std::string(key) + ":  # absolute percentage errors (%) and the share inside [p10, p90]\n";
    for (const ErrorSummary& s : rep.summaries) {
      y += fmt::format("  \"{}\": {{rows: {}, median: {:.2f}, p90: {:.2f}, max: {:.2f}, in_p10_p90: {:.2f}}}\n",
                       s.group, s.rows, s.median_ape, s.p90_ape, s.max_ape, s.coverage);
    }
  };
  summary("in_sample", f.in_sample);
  summary("leave_one_system_out", f.leave_one_out);
  y += "residuals:  # predicted / published - 1, in sample and with the row's system left out\n";
  for (std::size_t i = 0; i < f.in_sample.rows.size(); ++i) {
    const ValidationRow& r = f.in_sample.rows[i];
    y += fmt::format("  - {{line: {}, benchmark: {}, accelerators: {}, error: {:.4f}", r.row.line, r.row.benchmark,
                     r.row.accelerators, r.error);
    if (i < f.leave_one_out.rows.size()) y += fmt::format(", held_out_error: {:.4f}", f.leave_one_out.rows[i].error);
    y += "}\n";
  }
  return y;
}

}  // namespace sp::calibration
