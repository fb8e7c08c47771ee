#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "calibration/analysis/efficiency_analysis.hpp"
#include "calibration/predict/results.hpp"
#include "models/catalog.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/csv.hpp"
#include "sim/core/error.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {

// E' against N (log2 axis), one colour per cluster, like the study's figures.
bool plot_benchmark(const std::filesystem::path& png, const calibration::BenchmarkAnalysis& a) {
  std::string data, plots;
  for (int c = 0; c < a.k; ++c) {
    data += fmt::format("$c{} << EOD\n", c);
    for (const auto& r : a.rows) {
      if (r.cluster == c) data += fmt::format("{} {}\n", r.result.accelerators, r.e_prime);
    }
    data += "EOD\n";
    plots += fmt::format("{}$c{} using 1:2 title 'cluster {}' with points pt 7 ps 1.4 lc rgb '{}'",
                         c ? ", " : "", c, c, output::series_colour(static_cast<std::size_t>(c) % 6));
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 800,520 font 'sans,11'\nset output {}\n{}"
      "set logscale x 2\nset grid\nset key top right\nset xlabel 'accelerators (N)'\n"
      "set ylabel \"E' = (T_{{ref}}/T)/(N/N_{{ref}})\"\nset yrange [0:*]\n"
      "set title {}\n"
      "plot {}, 1 with lines dt 2 lc rgb '#888888' notitle\n",
      output::gnuplot_text(png.string()), data,
      output::gnuplot_text(fmt::format("{}: per-accelerator efficiency of MLPerf systems (ref: {} accelerators, {:.2f} min)",
                                       a.benchmark, a.reference.accelerators, *a.reference.time_to_train_min)),
      plots);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int analyze_command(const AnalyzeOptions& o) {
  const config::CsvTable csv = config::CsvTable::read_rows(o.data);
  auto results = calibration::read_mlperf_results(csv);
  calibration::name_benchmarks(results, models::Catalog(models::data_root() / "models"));
  calibration::require_times(results, csv.file());
  if (o.k && *o.k < 1) throw InputError(SourceLocation{"--k", 0, 0}, "", "needs at least 1 cluster");
  const auto analyses = calibration::analyze_efficiency(results, o.k, o.seed);

  const std::filesystem::path dir = o.out_dir.empty() ? std::string("results/analysis") : o.out_dir;
  output::StagedFiles files(dir);
  files.write("table1.csv", output::to_csv(calibration::table_one(analyses)));
  files.write("efficiency.csv", output::to_csv(calibration::efficiency_table(analyses)));
  std::vector<std::string> plots;
  for (const auto& a : analyses) {
    const std::string name = "eprime_" + a.benchmark + ".png";
    files.keep_if(plot_benchmark(files.stage(name), a), name, plots);
  }
  files.commit();

  std::printf("Table I: MLPerf Training systems per benchmark (%s)\n", o.data.c_str());
  std::printf("%-18s %8s %12s %14s  %s\n", "benchmark", "systems", "ref accel.", "ref time min", "reference system");
  for (const auto& a : analyses) {
    std::printf("%-18s %8d %12d %14.2f  %s %s\n", a.benchmark.c_str(), a.systems, a.reference.accelerators,
                *a.reference.time_to_train_min, a.reference.submitter.c_str(), a.reference.system_name.c_str());
  }
  for (const auto& a : analyses) {
    std::printf("\n%s: %d clusters on (log2 N, E') (silhouette %.2f); equilibrium on the Pareto frontier of time against N:\n%s",
                a.benchmark.c_str(), a.k, a.silhouette, describe(a.equilibrium).c_str());
  }
  std::printf("\nwrote %s/{table1.csv,efficiency.csv%s}\n", dir.string().c_str(),
              plots.empty() ? "" : ",eprime_<benchmark>.png");
  return 0;
}

}  // namespace sp::cli
