// The compute model's commands:
//  - `scalepoint calibrate compute`: an accelerator's kernel costs fitted to its measurements
//    (calibration/compute/kernel_fit.hpp), written as the `compute` fragment of its hardware
//    file, with a table of every measured GEMM against the fit (and, with --report,
//    gemm_fit.csv and a plot of measured against modelled time);
//  - `scalepoint compute-check`: every measured forward/backward configuration predicted
//    (calibration/compute/compute_check.hpp), side by side, as compute_check.csv and a plot;
//  - `scalepoint gemm-shapes`: the GEMMs of a workload for scalepoint-gpu-bench --shapes, or the
//    table compiled into the bench.
#include <optional>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "calibration/compute/compute_check.hpp"
#include "calibration/compute/gemm_shapes.hpp"
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

void write_report(output::StagedFiles& files, const calibration::KernelFit& fit) {
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
      "set terminal pngcairo noenhanced size 760,640 font 'sans,11'\nset output {}\n$d << EOD\n{}EOD\n"
      "set logscale xy\nset grid\nset key top left\nset xlabel 'measured time of one GEMM (us)'\n"
      "set ylabel 'modelled (us)'\nset title {}\n"
      "plot x title 'equal' lc rgb '#888888', x*1.1 notitle dt 2 lc rgb '#bbbbbb', x/1.1 notitle dt 2 lc rgb '#bbbbbb', "
      "$d using 1:2 title 'trend' pt 6 lc rgb '#1f77b4', "
      "$d using 1:3 title 'trend + table, shape held out' pt 7 ps 0.7 lc rgb '#d62728'\n",
      output::gnuplot_text(files.stage("gemm_fit.png").string()), data,
      output::gnuplot_text(fit.accelerator.name + ": GEMMs, measured against the kernel model"));
  if (!output::run_gnuplot(script, files.dir())) files.drop("gemm_fit.png");
}

}  // namespace

int calibrate_compute_command(const CalibrateComputeOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  calibration::ComputeMeasurements m;
  output::refuse_output_over_input(o.out, o.inputs);
  // Both destinations are checked before the fit, and nothing is renamed into place unless both
  // are written (a --report naming a file once left --out written, and was blamed on --out).
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  std::optional<output::StagedFiles> report;
  if (!o.report_dir.empty()) report.emplace(o.report_dir, "--report");
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
  if (m.gemms.empty()) {  // the inputs' fault, not the model's: say which files
    std::string files;
    for (const std::string& f : o.inputs) files += (files.empty() ? "" : ", ") + f;
    throw InputError(SourceLocation{o.inputs.front(), 0, 0}, "",
                     "no GEMM rows in " + files + (m.untimed_gemms > 0 ? " (only GEMMs of the first bench version, not graph-timed)" : ""),
                     "measure with build/scalepoint-gpu-bench (calibration/README.md, \"Measuring a GPU\")");
  }
  // The fit compares shapes pairwise: 16,000 rows took 8 s and 200,000 more than a minute. A
  // GPU's characterisation is some hundreds of shapes (calibration/data/gpu/h100: 220).
  constexpr std::size_t kMaxGemms = 10'000;
  if (m.gemms.size() > kMaxGemms) {
    throw InputError(SourceLocation{o.inputs.front(), 0, 0}, "",
                     fmt::format("{} GEMM rows, more than the {} a fit takes", m.gemms.size(), kMaxGemms),
                     "measure fewer shapes, or fit on a sample of them");
  }
  // Too few shapes of a dtype is the inputs' fault, said of them (the fit would say it of nothing).
  if (const std::string why = calibration::too_few_gemm_shapes(m, *accel); !why.empty()) {
    throw InputError(SourceLocation{o.inputs.front(), 0, 0}, "", why, "measure more shapes (build/scalepoint-gpu-bench --shapes)");
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
  int big = 0, big_within = 0, big_held = 0, big_table = 0;
  for (const auto& ch : fit.checks) {
    const auto& g = ch.sample;
    const double gflop = 2 * g.m * g.n * g.k / 1e9;
    std::printf("  %-22s %5s %6.0f %6.0f %6.0f %9.2f %10.2f %+8.1f %+9.1f\n", g.label.c_str(), g.dtype.c_str(), g.m,
                g.n, g.k, gflop, g.seconds * 1e6, 100 * ch.trend_error, 100 * ch.held_out_error);
    if (gflop >= 1) {
      ++big;
      big_within += std::abs(ch.trend_error) <= 0.10 ? 1 : 0;
      big_held += std::abs(ch.held_out_error) <= 0.10 ? 1 : 0;
      big_table += std::abs(ch.table_error) <= 0.10 ? 1 : 0;
    }
  }
  std::printf("  GEMMs of 1 GFLOP or more within 10 %%: %d of %d by the trend alone, %d with the table (shape held out), "
              "%d with the table\n",
              big_within, big, big_held, big_table);

  std::string command = "scalepoint calibrate compute --accelerator " + accel->name + " --out " + o.out;
  for (const auto& in : o.inputs) command += " --input " + in;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  files.write(out.filename().string(), calibration::kernel_costs_yaml(fit, inputs, command, date));
  if (report) write_report(*report, fit);
  files.commit();
  if (report) report->commit();
  std::printf("wrote %s%s\n", o.out.c_str(), o.report_dir.empty() ? "" : (" and " + o.report_dir + "/gemm_fit.{csv,png}").c_str());
  return 0;
}

namespace {

bool plot_check(const std::filesystem::path& png, const calibration::ComputeCheck& c) {
  std::map<std::string, std::string> series;  // "kind mode" -> data lines
  for (const auto& r : c.rows) {
    series[r.kind + " " + r.mode] +=
        fmt::format("{} {} {}\n", r.batch, r.measured_s * 1e3, r.predicted_s * 1e3);
  }
  std::string data, plots;
  int i = 0;
  for (const auto& [name, lines] : series) {
    data += fmt::format("$s{} << EOD\n{}EOD\n", i, lines);
    plots += fmt::format("{}$s{} using 1:2 title {} with points pt 7 lc rgb '{}', "
                         "$s{} using 1:3 title 'modelled' with lines lw 2 lc rgb '{}'",
                         plots.empty() ? "" : ", ", i, output::gnuplot_text(name + " measured"), output::series_colour(static_cast<std::size_t>(i)), i,
                         output::series_colour(static_cast<std::size_t>(i)));
    ++i;
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1200,640 font 'sans,11'\nset output {}\n{}"
      "set logscale xy\nset grid\nset key outside right\nset xlabel 'per-GPU batch (sequences, images; tokens for llama)'\n"
      "set ylabel 'time per step (ms)'\nset title {}\n"
      "plot {}\n",
      output::gnuplot_text(png.string()), data,
      output::gnuplot_text(fmt::format("{}: measured (points), modelled (lines); eager: {:.1f} us host dispatch per kernel",
                                       c.accelerator, c.dispatch_s * 1e6)),
      plots);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int compute_check_command(const ComputeCheckOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const auto accel = catalog.find_accelerator(o.accelerator);
  if (!accel) {
    throw InputError(SourceLocation{"--accelerator", 0, 0}, "", "no hardware file names '" + o.accelerator + "'",
                     "scalepoint list accelerators");
  }
  const calibration::ComputeCheck c = calibration::run_compute_check(o.data, *accel, catalog);
  std::printf("%s, kernel model against %s\n", c.accelerator.c_str(), o.data.c_str());
  std::printf("software efficiency of each measured script (fitted on its rows): ");
  for (const auto& [kind, f] : c.factor) std::printf("%s %.3f  ", kind.c_str(), f);
  std::printf("\none factor for all three: %.3f\n", c.common_factor);
  if (c.dispatch_s > 0) {
    std::printf("host dispatch per kernel in eager PyTorch: %.1f us (fitted on the rows marked *; the other eager rows "
                "predicted with it)\n",
                c.dispatch_s * 1e6);
  }
  std::printf("%-16s %-24s %6s %11s %11s %8s %9s %9s %9s\n", "kind", "mode", "batch", "measured_ms", "modelled_ms",
              "error_%", "common_%", "kernels", "profiled");
  std::string csv =
      "line,kind,mode,batch,measured_ms,modelled_ms,error,common_factor_error,kernels,profiled_kernels,"
      "fits_dispatch\n";
  std::map<std::string, std::pair<double, double>> worst;
  for (const auto& r : c.rows) {
    const double modelled_ms = r.predicted_s * 1e3;
    const std::string profiled = r.measured_kernels > 0 ? fmt::format("{:.0f}", r.measured_kernels) : "";
    std::printf("%-16s %-24s %6g %11.3f %11.3f %+8.1f %+9.1f %9.0f %9s%s\n", r.kind.c_str(), r.mode.c_str(), r.batch,
                r.measured_s * 1e3, modelled_ms, 100 * r.error, 100 * r.common_error, r.kernels,
                profiled.empty() ? "-" : profiled.c_str(), r.fits_dispatch ? " *" : "");
    csv += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.5f},{:.5f},{:.0f},{},{}\n", r.line, r.kind, r.mode, r.batch,
                       r.measured_s * 1e3, modelled_ms, r.error, r.common_error, r.kernels, profiled,
                       r.fits_dispatch ? 1 : 0);
    if (r.fits_dispatch) continue;
    auto& w = worst[r.kind + (r.eager ? " eager" : "")];
    w.first = std::max(w.first, std::abs(r.error));
    w.second = std::max(w.second, std::abs(r.common_error));
  }
  for (const auto& [kind, e] : worst) {
    std::printf("  %s: largest error %.1f %% (%.1f %% with the common factor)\n", kind.c_str(), 100 * e.first,
                100 * e.second);
  }
  output::StagedFiles files(o.out_dir);
  files.write("compute_check.csv", csv);
  if (!plot_check(files.stage("compute_check.png"), c)) files.drop("compute_check.png");
  files.commit();
  std::printf("wrote %s/compute_check.{csv,png}\n", o.out_dir.c_str());
  return 0;
}

int gemm_shapes_command(const GemmShapesOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  std::string text;
  if (!o.cxx_table.empty()) {
    text = calibration::gemm_table_cxx(catalog.workloads(), "scalepoint gemm-shapes --cxx-table " + o.cxx_table);
  } else {
    const auto w = catalog.find_workload(o.workload);
    if (!w) throw InputError(SourceLocation{"--workload", 0, 0}, "", "unknown workload '" + o.workload + "'",
                             "scalepoint list workloads");
    text = calibration::gemm_shapes_csv(*w, o.batches, o.tp);
  }
  const std::string out = o.cxx_table.empty() ? o.out : o.cxx_table;
  if (out.empty() || out == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  const std::filesystem::path path(out);
  output::StagedFiles files(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path(),
                            o.cxx_table.empty() ? "--out" : "--cxx-table");
  files.write(path.filename().string(), text);
  files.commit();
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace sp::cli
