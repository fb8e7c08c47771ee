// The parameter file `scalepoint calibrate mlperf` writes and models::parse_calibration reads.
#include <cmath>

#include <fmt/format.h>

#include "calibration/mlperf/calibrate.hpp"

namespace sp::calibration {

namespace {

std::string levels(const std::map<std::string, models::SoftwareLevel>& l) {
  std::string y;
  for (const auto& [name, v] : l) {
    y += fmt::format("    \"{}\": {{log_scale: {:.6g}, sd: {:.6g}}}  # x{:.3f}\n", name, v.log_scale, v.sd,
                     std::exp(v.log_scale));
  }
  return y;
}

std::string summary(const char* key, const char* what, const ValidationReport& rep) {
  if (rep.summaries.empty()) return {};
  std::string y = fmt::format("{}:  # {}: absolute percentage errors (%), share inside [p10, p90]\n", key, what);
  for (const ErrorSummary& s : rep.summaries) {
    y += fmt::format("  \"{}\": {{rows: {}, median: {:.2f}, p90: {:.2f}, max: {:.2f}, in_p10_p90: {:.2f}", s.group,
                     s.rows, s.median_ape, s.p90_ape, s.max_ape, s.coverage);
    if (!std::isnan(s.median_ape_at_logged)) {
      y += fmt::format(", at_logged_convergence: {{median: {:.2f}, p90: {:.2f}}}, convergence_only: {{median: {:.2f}, "
                       "p90: {:.2f}}}",
                       s.median_ape_at_logged, s.p90_ape_at_logged, s.median_ape_convergence_only,
                       s.p90_ape_convergence_only);
    }
    if (!std::isnan(s.median_ape_baseline)) {
      y += fmt::format(", naive_baseline: {{median: {:.2f}, p90: {:.2f}}}", s.median_ape_baseline, s.p90_ape_baseline);
    }
    y += "}\n";
  }
  return y;
}

}  // namespace

std::string calibration_yaml(const FitResult& f, const std::string& data_file, const std::string& sha,
                             const std::string& command, const std::string& fitted_on,
                             const std::string& phases_file, const std::string& phases_sha) {
  const models::Calibration& c = f.calibration;
  std::string y;
  y += "# scalepoint calibration against MLPerf Training results: regenerate with\n";
  y += "#   " + command + "\n";
  y += "# Parameters: calibration/mlperf/fit_problem.hpp says which and why so few.\n";
  y += "provenance:\n";
  y += fmt::format("  data: \"{}\"\n  data_sha256: \"{}\"\n", data_file, sha);
  if (!phases_file.empty()) y += fmt::format("  phases: \"{}\"\n  phases_sha256: \"{}\"\n", phases_file, phases_sha);
  y += fmt::format("  fitted_on: \"{}\"\n", fitted_on);
  y += fmt::format("  rows: {}\n  parameters: {}\n  iterations: {}\n  converged: {}\n", f.rows_used,
                   f.parameter_names.size(), f.iterations, f.converged);
  y += "workloads:  # log_sd: the fit's uncertainty of log(software_efficiency); model_error: held-out spread\n";
  for (const auto& [name, w] : c.workloads) {
    y += fmt::format("  {}: {{software_efficiency: {:.6g}, log_sd: {:.6g}, model_error: {:.6g}", name,
                     w.software_efficiency, w.log_sd, w.model_error);
    for (std::size_t k = 0; k < models::kEvaluationCosts.size(); ++k) {
      if (const auto& v = w.evaluation_costs[k]) {
        y += fmt::format(", {}: \"{:.6g} s\"", models::kEvaluationCosts[k].calibration_key, to_seconds(*v));
      }
    }
    if (w.host_per_step) y += fmt::format(", host_per_step: \"{:.6g} s\"", to_seconds(*w.host_per_step));
    if (!w.host_per_step_on.empty()) {
      std::string on;
      for (const auto& [stack, d] : w.host_per_step_on) {
        on += fmt::format("{}{}: \"{:.6g} s\"", on.empty() ? "" : ", ", stack, to_seconds(d));
      }
      y += ", host_per_step_on: {" + on + "}";
    }
    y += "}\n";
  }
  y += "model_error_by_scale:  # over all workloads, by range of N\n";
  for (const auto& [bound, name] : models::scale_ranges()) {
    if (auto it = c.scale_error.find(bound); it != c.scale_error.end()) {
      y += fmt::format("  \"{}\": {:.6g}\n", name, it->second);
    }
  }
  y += fmt::format("clock_boost: {{gain: {:.6g}, sd: {:.6g}}}  # compute-bound kernels of a run that boosts its SM clock "
                   "(nvidia-smi boost-slider --vboost) go 1 + gain times as fast\n",
                   c.clock_boost_gain, c.clock_boost_sd);
  y += "software:  # log-scales relative to the reference; sd: of the sum from the stack down to the level\n";
  y += fmt::format("  reference: {{stack: {}, family: \"{}\", kind: {}}}\n", c.reference_stack, c.reference_family,
                   c.reference_kind);
  y += fmt::format("  spreads: {{kind: {}, family: {}, stack: {}}}  # priors, and what an unseen level adds\n",
                   c.kind_spread, c.family_spread, c.stack_spread);
  y += "  stacks:\n" + levels(c.stacks);
  y += "  families:\n" + levels(c.families);
  y += "  kinds:\n" + levels(c.kinds);
  y += summary("in_sample", "fitted on every row", f.in_sample);
  y += summary("leave_one_system_out", "each system predicted by a fit without it", f.leave_system_out);
  y += summary("leave_one_kind_out", "each accelerator kind predicted by a fit without it", f.leave_kind_out);
  y += "residuals:  # predicted / published - 1: in sample, each system left out, each kind left out\n";
  for (std::size_t i = 0; i < f.in_sample.rows.size(); ++i) {
    const ValidationRow& r = f.in_sample.rows[i];
    y += fmt::format("  - {{line: {}, benchmark: {}, accelerators: {}, error: {:.4f}", r.row.line, r.row.benchmark,
                     r.row.accelerators, r.error);
    if (i < f.leave_system_out.rows.size()) y += fmt::format(", system_out: {:.4f}", f.leave_system_out.rows[i].error);
    if (i < f.leave_kind_out.rows.size()) y += fmt::format(", kind_out: {:.4f}", f.leave_kind_out.rows[i].error);
    y += "}\n";
  }
  return y;
}

}  // namespace sp::calibration
