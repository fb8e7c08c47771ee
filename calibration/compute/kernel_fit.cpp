#include "calibration/compute/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "calibration/fit/levenberg_marquardt.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

namespace {

double logistic(double u) { return 1 / (1 + std::exp(-u)); }
double logit(double p) { return std::log(p / (1 - p)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

constexpr double kStreamingCopy = 64.0 * 1024 * 1024;  // bytes from which a copy streams at full rate

struct Layout {
  std::vector<std::string> dtypes;
  bool fit_latency = false;
  Eigen::Index size() const { return static_cast<Eigen::Index>(2 * dtypes.size()) + (fit_latency ? 1 : 0); }
};

void apply(const Layout& l, const Eigen::VectorXd& x, models::Accelerator& a) {
  for (std::size_t i = 0; i < l.dtypes.size(); ++i) {
    models::GemmRate& r = a.compute.gemm[l.dtypes[i]];
    r.efficiency_max = logistic(x[static_cast<Eigen::Index>(2 * i)]);
    r.k_overhead = std::exp(x[static_cast<Eigen::Index>(2 * i + 1)]);
  }
  if (l.fit_latency) a.compute.kernel_latency = seconds(std::exp(x[l.size() - 1]) * 1e-6);
}

double trend_ratio(const models::Accelerator& a, const GemmSample& g) {
  return to_seconds(models::gemm_time_modelled(a, g.dtype, models::GemmShape{g.m, g.n, g.k, g.batch})) / g.seconds;
}

}  // namespace

std::string too_few_gemm_shapes(const ComputeMeasurements& m, const models::Accelerator& a) {
  // The dtypes training runs at, those the hardware file has a peak for (fp32 is left out).
  std::map<std::string, int> per_dtype;
  for (const GemmSample& g : m.gemms) {
    if (a.peak.count(g.dtype) != 0) ++per_dtype[g.dtype];
  }
  for (const auto& [dtype, count] : per_dtype) {
    if (count < 3) return fmt::format("{} {} GEMM shape(s): the fit needs at least 3 of each dtype", count, dtype);
  }
  return "";
}

KernelFit fit_kernel_costs(const ComputeMeasurements& m, const models::Accelerator& base) {
  KernelFit out;
  out.accelerator = base;
  models::Accelerator& a = out.accelerator;
  a.compute.measured.clear();
  // The table about to be written is this part's own, timed at its own bandwidth, whatever part
  // the base's included table came from (the H200 carries the H100's).
  a.compute.measured_bandwidth = BytesPerSecond(0);
  if (m.units > 0) a.compute.parallel_units = m.units;
  if (!m.kernel_seconds.empty()) a.compute.kernel_latency = seconds(median(m.kernel_seconds));
  std::vector<double> copies;
  for (const CopySample& c : m.copies) {
    if (c.bytes >= kStreamingCopy) copies.push_back(c.bytes / c.seconds / a.memory_bandwidth.value());
  }
  if (!copies.empty()) a.compute.memory_efficiency = std::min(1.0, median(copies));

  Layout layout;
  layout.fit_latency = m.kernel_seconds.empty();
  out.latency_fitted = layout.fit_latency;
  // The dtypes training runs at (those the hardware file has a peak for); fp32 GEMMs are left out.
  std::vector<GemmSample> gemms;
  std::map<std::string, int> per_dtype;
  for (const GemmSample& g : m.gemms) {
    if (a.peak.count(g.dtype) == 0) {
      ++out.skipped[g.dtype];
      continue;
    }
    gemms.push_back(g);
    ++per_dtype[g.dtype];
  }
  if (const std::string why = too_few_gemm_shapes(m, a); !why.empty()) throw ModelError(why);
  for (const auto& entry : per_dtype) layout.dtypes.push_back(entry.first);
  if (layout.dtypes.empty()) throw ModelError("no GEMM measurements to fit");
  Eigen::VectorXd x0(layout.size());
  for (std::size_t i = 0; i < layout.dtypes.size(); ++i) {
    x0[static_cast<Eigen::Index>(2 * i)] = logit(0.75);
    x0[static_cast<Eigen::Index>(2 * i + 1)] = std::log(64.0);
  }
  if (layout.fit_latency) x0[layout.size() - 1] = std::log(2.0);  // microseconds
  const auto residuals = [&](const Eigen::VectorXd& x) {
    models::Accelerator trial = a;
    apply(layout, x, trial);
    Eigen::VectorXd r(static_cast<Eigen::Index>(gemms.size()));
    for (std::size_t i = 0; i < gemms.size(); ++i) r[static_cast<Eigen::Index>(i)] = std::log(trend_ratio(trial, gemms[i]));
    return r;
  };
  const LeastSquaresResult fit = levenberg_marquardt(
      LeastSquaresProblem{residuals, [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r) {
                            return numeric_jacobian(residuals, x, r, 1e-5);
                          }},
      x0, 100);
  out.iterations = fit.iterations;
  apply(layout, fit.x, a);
  for (const GemmSample& g : gemms) {  // the table holds single products (batched ones correct nothing)
    if (g.batch == 1) a.compute.measured[g.dtype].push_back(models::MeasuredGemm{g.m, g.n, g.k, seconds(g.seconds)});
  }
  models::refresh_measured_ratios(a);
  // What the table does for a shape it lacks: each GEMM predicted from the others.
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const GemmSample& g = gemms[i];
    models::Accelerator others = a;
    auto& rows = others.compute.measured[g.dtype];
    for (auto it = rows.begin(); it != rows.end(); ++it) {
      if (it->m == g.m && it->n == g.n && it->k == g.k && to_seconds(it->time) == g.seconds) {
        rows.erase(it);
        break;
      }
    }
    const double held =
        to_seconds(models::gemm_time(others, g.dtype, models::GemmShape{g.m, g.n, g.k, g.batch})) / g.seconds;
    const double in_table =
        to_seconds(models::gemm_time(a, g.dtype, models::GemmShape{g.m, g.n, g.k, g.batch})) / g.seconds;
    out.checks.push_back(GemmCheck{g, trend_ratio(a, g) - 1, held - 1, in_table - 1});
  }
  return out;
}

std::string kernel_costs_yaml(const KernelFit& f, const std::vector<std::pair<std::string, std::string>>& inputs,
                              const std::string& command, const std::string& date) {
  const models::KernelCosts& c = f.accelerator.compute;
  std::string y = "# Written by: " + command + "\n";
  y += "# Include it in " + f.accelerator.name +
       "'s hardware file (or another part's of the same die, SMs and clocks) as: compute: !include <this file>\n";
  y += fmt::format("source: \"measured on {}: scalepoint calibrate compute, {}\"\n", f.accelerator.name, date);
  y += fmt::format("parallel_units: {}\ngemm_tile: [{}, {}]\n", c.parallel_units, c.tile_m, c.tile_n);
  y += fmt::format("kernel_latency: \"{:.4g} us\"{}\n", to_seconds(c.kernel_latency) * 1e6,
                   f.latency_fitted ? "   # fitted: the intercept of the graph-timed GEMMs (no latency probe)" : "");
  y += fmt::format("memory_efficiency: {:.4g}\n", c.memory_efficiency);
  y += "gemm:\n";
  for (const auto& [dtype, r] : c.gemm) {
    y += fmt::format("  {}: {{efficiency_max: {:.4g}, k_overhead: {:.4g}}}\n", dtype, r.efficiency_max, r.k_overhead);
  }
  y += "measured:  # [m, n, k, time of one GEMM]\n";
  for (const auto& [dtype, rows] : c.measured) {
    y += "  " + dtype + ":\n";
    for (const models::MeasuredGemm& g : rows) {
      y += fmt::format("    - [{:.0f}, {:.0f}, {:.0f}, \"{:.5g} us\"]\n", g.m, g.n, g.k, to_seconds(g.time) * 1e6);
    }
  }
  // The bandwidth the table's ratios are taken at: a part of the same die with other memory that
  // includes this file keeps the ratios and runs the trend at its own bandwidth.
  y += fmt::format("measured_memory_bandwidth: \"{:.4g} TB/s\"   # of the part the table was timed on\n",
                   f.accelerator.memory_bandwidth.value() / 1e12);
  y += "provenance:\n  inputs:\n";
  for (const auto& [file, sha] : inputs) y += fmt::format("    - {{file: \"{}\", sha256: \"{}\"}}\n", file, sha);
  return y;
}

}  // namespace sp::calibration
