// `scalepoint compute-check`: every measured forward/backward configuration predicted by the
// kernel-level compute model (calibration/compute/compute_check.hpp), printed side by side with
// the measurement, and written as compute_check.csv with a plot of time against batch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "calibration/compute/compute_check.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {

bool plot(const std::filesystem::path& png, const calibration::ComputeCheck& c) {
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"};
  std::map<std::string, std::string> series;  // "kind mode" -> data lines
  for (const auto& r : c.rows) {
    series[r.kind + " " + r.mode] +=
        fmt::format("{} {} {}\n", r.batch, r.measured_s * 1e3, r.modelled_s / c.factor.at(r.kind) * 1e3);
  }
  std::string data, plots;
  int i = 0;
  for (const auto& [name, lines] : series) {
    data += fmt::format("$s{} << EOD\n{}EOD\n", i, lines);
    plots += fmt::format("{}$s{} using 1:2 title '{} measured' with points pt 7 lc rgb '{}', "
                         "$s{} using 1:3 title 'modelled' with lines lw 2 lc rgb '{}'",
                         plots.empty() ? "" : ", ", i, name, colours[i % 5], i, colours[i % 5]);
    ++i;
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 900,640 font 'sans,11'\nset output '{}'\n{}"
      "set logscale xy\nset grid\nset key bottom right\nset xlabel 'per-GPU batch (sequences, images; tokens for llama)'\n"
      "set ylabel 'time per step (ms)'\nset title '{}: measured and modelled (one software factor per script)'\n"
      "plot {}\n",
      png.string(), data, c.accelerator, plots);
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
  std::printf("%-16s %-24s %6s %11s %11s %8s %9s %9s %9s\n", "kind", "mode", "batch", "measured_ms", "modelled_ms",
              "error_%", "common_%", "kernels", "profiled");
  std::string csv = "line,kind,mode,batch,measured_ms,modelled_ms,error,common_factor_error,kernels,profiled_kernels\n";
  std::map<std::string, std::pair<double, double>> worst;
  for (const auto& r : c.rows) {
    const double modelled_ms = r.modelled_s / c.factor.at(r.kind) * 1e3;
    const std::string profiled = r.measured_kernels > 0 ? fmt::format("{:.0f}", r.measured_kernels) : "";
    std::printf("%-16s %-24s %6g %11.3f %11.3f %+8.1f %+9.1f %9.0f %9s\n", r.kind.c_str(), r.mode.c_str(), r.batch,
                r.measured_s * 1e3, modelled_ms, 100 * r.error, 100 * r.common_error, r.kernels,
                profiled.empty() ? "-" : profiled.c_str());
    csv += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.5f},{:.5f},{:.0f},{}\n", r.line, r.kind, r.mode, r.batch,
                       r.measured_s * 1e3, modelled_ms, r.error, r.common_error, r.kernels, profiled);
    auto& w = worst[r.kind];
    w.first = std::max(w.first, std::abs(r.error));
    w.second = std::max(w.second, std::abs(r.common_error));
  }
  for (const auto& [kind, e] : worst) {
    std::printf("  %s: largest error %.1f %% (%.1f %% with the common factor)\n", kind.c_str(), 100 * e.first,
                100 * e.second);
  }
  output::StagedFiles files(o.out_dir);
  files.write("compute_check.csv", csv);
  if (!plot(files.stage("compute_check.png"), c)) files.drop("compute_check.png");
  files.commit();
  std::printf("wrote %s/compute_check.{csv,png}\n", o.out_dir.c_str());
  return 0;
}

}  // namespace sp::cli
