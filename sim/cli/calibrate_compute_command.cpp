// `scalepoint calibrate compute`: an accelerator's kernel costs fitted to its measurements
// (calibration/compute/kernel_fit.hpp), written as the `compute` fragment of its hardware file,
// with a table of every measured GEMM against the fit (and, with --report, gemm_fit.csv and a
// plot of measured against modelled time).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "calibration/compute/kernel_fit.hpp"
#include "models/catalog.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {

void write_report(const std::filesystem::path& dir, const calibration::KernelFit& fit) {
  output::StagedFiles files(dir);
  std::string csv = "label,dtype,m,n,k,gflop,measured_us,trend_us,trend_error,held_out_us,held_out_error\n";
  std::string data;
  for (const auto& c : fit.checks) {
    const auto& g = c.sample;
    const double us = g.seconds * 1e6;
    csv += fmt::format("{},{},{:.0f},{:.0f},{:.0f},{:.4f},{:.4f},{:.4f},{:.5f},{:.4f},{:.5f}\n", g.label, g.dtype, g.m, g.n,
                       g.k, 2 * g.m * g.n * g.k / 1e9, us, us * (1 + c.trend_error), c.trend_error,
                       us * (1 + c.held_out_error), c.held_out_error);
    data += fmt::format("{} {} {} {}\n", us, us * (1 + c.trend_error), us * (1 + c.held_out_error), g.dtype == "fp8" ? 2 : 1);
  }
  files.write("gemm_fit.csv", csv);
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 760,640 font 'sans,11'\nset output '{}'\n$d << EOD\n{}EOD\n"
      "set logscale xy\nset grid\nset key top left\nset xlabel 'measured time of one GEMM (us)'\n"
      "set ylabel 'modelled (us)'\nset title '{}: GEMMs, measured against the kernel model'\n"
      "plot x title 'equal' lc rgb '#888888', x*1.1 notitle dt 2 lc rgb '#bbbbbb', x/1.1 notitle dt 2 lc rgb '#bbbbbb', "
      "$d using 1:2 title 'trend' pt 6 lc rgb '#1f77b4', "
      "$d using 1:3 title 'trend + table, shape held out' pt 7 ps 0.7 lc rgb '#d62728'\n",
      files.stage("gemm_fit.png").string(), data, fit.accelerator.name);
  if (!output::run_gnuplot(script, dir)) files.drop("gemm_fit.png");
  files.commit();
}

}  // namespace

int calibrate_compute_command(const CalibrateComputeOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  calibration::ComputeMeasurements m;
  std::vector<std::pair<std::string, std::string>> inputs;  // each read once: parsed and hashed
  for (const std::string& file : o.inputs) {
    const std::string text = config::read_text_file(file);
    inputs.emplace_back(file, sha256_hex(text));
    calibration::read_compute_measurements(text, file, m);
  }
  const std::string name = o.accelerator.empty() ? m.device : o.accelerator;
  const auto accel = catalog.find_accelerator(name);
  if (!accel) {
    throw InputError(SourceLocation{o.accelerator.empty() ? o.inputs.front() : "--accelerator", 0, 0}, "",
                     "no hardware file in models/hardware names '" + name + "'",
                     "pass --accelerator with a catalog name or alias (scalepoint list accelerators)");
  }
  const calibration::KernelFit fit = calibration::fit_kernel_costs(m, *accel);
  const models::KernelCosts& c = fit.accelerator.compute;
  std::printf("%s: %d units, tile %dx%d, kernel latency %.3f us%s, memory efficiency %.3f\n", accel->name.c_str(),
              c.parallel_units, c.tile_m, c.tile_n, to_seconds(c.kernel_latency) * 1e6,
              fit.latency_fitted ? " (fitted)" : "", c.memory_efficiency);
  if (m.untimed_gemms > 0) {
    std::printf("  not used: %d GEMMs of a first-version bench file, timed one call at a time (not in a graph)\n",
                m.untimed_gemms);
  }
  for (const auto& [dtype, count] : fit.skipped) {
    std::printf("  not used: %d %s GEMMs (no %s peak in the hardware file)\n", count, dtype.c_str(), dtype.c_str());
  }
  for (const auto& [dtype, r] : c.gemm) {
    std::printf("  %s: efficiency_max %.4f (%.0f TFLOP/s), k_overhead %.1f\n", dtype.c_str(), r.efficiency_max,
                r.efficiency_max * accel->peak.at(dtype).value() / 1e12, r.k_overhead);
  }
  std::printf("  %-22s %5s %6s %6s %6s %9s %10s %8s %9s\n", "label", "dtype", "m", "n", "k", "GFLOP", "meas_us",
              "trend_%", "held_out_%");
  int big = 0, big_within = 0, big_held = 0;
  for (const auto& ch : fit.checks) {
    const auto& g = ch.sample;
    const double gflop = 2 * g.m * g.n * g.k / 1e9;
    std::printf("  %-22s %5s %6.0f %6.0f %6.0f %9.2f %10.2f %+8.1f %+9.1f\n", g.label.c_str(), g.dtype.c_str(), g.m,
                g.n, g.k, gflop, g.seconds * 1e6, 100 * ch.trend_error, 100 * ch.held_out_error);
    if (gflop >= 1) {
      ++big;
      big_within += std::abs(ch.trend_error) <= 0.10 ? 1 : 0;
      big_held += std::abs(ch.held_out_error) <= 0.10 ? 1 : 0;
    }
  }
  std::printf("  GEMMs of 1 GFLOP or more within 10 %%: %d of %d by the trend alone, %d with the table (shape held out)\n",
              big_within, big, big_held);

  std::string command = "scalepoint calibrate compute --accelerator " + accel->name + " --out " + o.out;
  for (const auto& in : o.inputs) command += " --input " + in;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), calibration::kernel_costs_yaml(fit, inputs, command, date));
  files.commit();
  if (!o.report_dir.empty()) write_report(o.report_dir, fit);
  std::printf("wrote %s%s\n", o.out.c_str(), o.report_dir.empty() ? "" : (" and " + o.report_dir + "/gemm_fit.{csv,png}").c_str());
  return 0;
}

}  // namespace sp::cli
