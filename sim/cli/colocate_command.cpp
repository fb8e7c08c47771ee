#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/csv.hpp"
#include "sim/core/error.hpp"
#include "sim/output/manifest.hpp"
#include "sim/output/plot.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/colocation.hpp"

namespace sp::cli {

namespace fs = std::filesystem;

namespace {
// Makespan and energy per job against K, a line per strategy.
bool plot_colocation(const fs::path& png, const ColocationSpec& spec, const std::vector<ColocationPoint>& points) {
  std::string data, time_plots, energy_plots;
  int i = 0;
  for (Strategy st : spec.strategies) {
    data += fmt::format("$s{} << EOD\n", i);
    for (const ColocationPoint& p : points) {
      if (p.strategy != st || p.status != "ok") continue;
      data += fmt::format("{} {} {}\n", p.jobs, to_seconds(p.run.makespan), p.run.energy.value() / 1e3 / p.jobs);
    }
    data += "EOD\n";
    // Strategy names are the program's own, not input text.
    time_plots += fmt::format("{}$s{} using 1:2 with linespoints lw 2 pt 7 title '{}'", i ? ", " : "", i, strategy_name(st));
    energy_plots += fmt::format("{}$s{} using 1:3 with linespoints lw 2 pt 7 title '{}'", i ? ", " : "", i, strategy_name(st));
    ++i;
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1100,460 font 'sans,10'\nset output {}\n{}"
      "set multiplot layout 1,2 title {}\nset logscale x 2\nset grid\nset key top left\n"
      "set xlabel 'jobs K'\nset ylabel 'makespan (s)'\nplot {}\n"
      "set ylabel 'board energy per job (kJ)'\nplot {}\nunset multiplot\n",
      output::gnuplot_text(png.string()), data,
      output::gnuplot_text(fmt::format("{}: K x {} ({} steps each) on {}", spec.name, spec.workload.name, spec.steps,
                                       spec.accelerator.name)),
      time_plots, energy_plots);
  return output::run_gnuplot(script, png.parent_path());
}
}  // namespace

int colocate_validate(const ColocateOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const output::Table t = validate_colocation(o.validate, catalog);
  const fs::path dir = o.out_dir.empty() ? fs::path("results") / "checks" : fs::path(o.out_dir);
  const std::string base = "colocation_" + fs::path(o.validate).stem().string();
  output::StagedFiles files(dir);
  files.write(base + ".csv", output::to_csv(t));
  // Model against published, a point series per scenario and strategy, with the +-20 % band.
  std::string data, plots;
  std::map<std::string, std::string> series;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string key = t.column("scenario").text[i] + " " + t.column("strategy").text[i];
    series[key] += fmt::format("{} {}\n", t.column("published_speedup").values[i], t.column("model_speedup").values[i]);
  }
  int n = 0;
  for (const auto& [key, rows] : series) {
    data += fmt::format("$v{} << EOD\n{}EOD\n", n, rows);
    plots += fmt::format(", $v{} using 1:2 with points pt 7 ps 1.3 title {}", n++, output::gnuplot_text(key));
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 760,640 font 'sans,11'\nset output {}\n{}"
      "set logscale xy\nset grid\nset key top left\nset xrange [0.8:20]\nset yrange [0.8:20]\n"
      "set xlabel 'published or measured speedup over one job at a time'\nset ylabel 'simulated speedup'\n"
      "set title {}\n"
      "plot x title 'model = published' lc rgb 'black', 1.2*x dt 2 lc rgb 'gray' title '+-20 %', 0.8*x dt 2 lc rgb 'gray' notitle{}\n",
      output::gnuplot_text(files.stage(base + ".png").string()), data,
      output::gnuplot_text("co-location: PointNet-cls on one GPU (" + fs::path(o.validate).stem().string() + ")"), plots);
  const bool plotted = output::run_gnuplot(script, dir);
  if (!plotted) files.drop(base + ".png");
  files.commit();
  int inside = 0;
  for (double v : t.column("within_tolerance").values) inside += v > 0 ? 1 : 0;
  if (!o.quiet) {
    for (std::size_t i = 0; i < t.rows(); ++i) {
      const double published = t.column("published_speedup").values[i], ref = t.column("published_reference").values[i];
      // a point read off another baseline's axis shows what was read and what it was divided by
      const std::string read = ref == 1 ? "" : fmt::format(" ({:.2f} / {:.2f})", published * ref, ref);
      std::printf("%-20s %-13s K=%-3.0f published %5.2f%s  model %5.2f  %+6.1f%%%s\n", t.column("scenario").text[i].c_str(),
                  t.column("strategy").text[i].c_str(), t.column("jobs").values[i], published, read.c_str(),
                  t.column("model_speedup").values[i], 100 * t.column("error").values[i],
                  t.column("within_tolerance").values[i] > 0 ? "" : "  outside tolerance");
    }
    std::printf("%d of %zu points within tolerance; wrote %s/%s.{csv%s}\n", inside, t.rows(), dir.string().c_str(), base.c_str(),
                plotted ? ",png" : "");
  }
  return 0;
}

// Against K processes measured on one GPU (scalepoint-coloc-bench's CSV): colocation_<stem>.{csv,png}.
int colocate_validate_bench(const ColocateOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  TimeSlicingDerivation derived;
  const output::Table t = validate_sharing_bench(o.validate, catalog, &derived);
  const fs::path dir = o.out_dir.empty() ? fs::path("results") / "checks" : fs::path(o.out_dir);
  const std::string base = "colocation_" + fs::path(o.validate).stem().string();
  output::StagedFiles files(dir);
  files.write(base + ".csv", output::to_csv(t));
  std::string data[3];  // time slicing, MPS, rows a constant is derived from
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.column("jobs").values[i] < 2) continue;
    const bool derives = t.column("use").text[i] != "validation";
    data[derives ? 2 : t.column("sharing").text[i] == "mps" ? 1 : 0] +=
        fmt::format("{} {}\n", t.column("measured_speedup").values[i], t.column("model_speedup").values[i]);
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 760,640 font 'sans,11'\nset output {}\n"
      "$ts << EOD\n{}EOD\n$mps << EOD\n{}EOD\n$derives << EOD\n{}EOD\n"
      "set logscale xy\nset grid\nset key top left\nset xrange [0.7:10]\nset yrange [0.7:10]\n"
      "set xlabel 'measured speedup over one job at a time (K = 2, 4, 8)'\nset ylabel 'simulated speedup'\n"
      "set title {}\n"
      "plot x title 'model = measured' lc rgb 'black', 1.1*x dt 2 lc rgb 'gray' title '+-10 %', 0.9*x dt 2 lc rgb 'gray' "
      "notitle, $ts using 1:2 with points pt 7 ps 1.3 title 'time slicing', $mps using 1:2 with points pt 5 ps 1.3 "
      "title 'MPS', $derives using 1:2 with points pt 6 ps 1.3 title 'derives the switch cost'\n",
      output::gnuplot_text(files.stage(base + ".png").string()), data[0], data[1], data[2],
      output::gnuplot_text("co-location: K processes of synthetic loops sharing one GPU (" + fs::path(o.validate).stem().string() +
                           ")"));
  const bool plotted = output::run_gnuplot(script, dir);
  if (!plotted) files.drop(base + ".png");
  files.commit();
  if (!o.quiet) {
    int inside = 0, validated = 0;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      const bool checked = t.column("use").text[i] == "validation";
      validated += checked ? 1 : 0;
      inside += checked && t.column("within_tolerance").values[i] > 0 ? 1 : 0;
      std::printf("%-14s %-13s K=%-2.0f measured %5.3f  model %5.3f  %+6.1f%%  %s\n", t.column("case").text[i].c_str(),
                  t.column("sharing").text[i].c_str(), t.column("jobs").values[i], t.column("measured_speedup").values[i],
                  t.column("model_speedup").values[i], 100 * t.column("error").values[i], t.column("use").text[i].c_str());
    }
    const ColocationSpec defaults;
    if (!derived.slice_measured) {
      std::printf("derived from the measurements: host cost per launch %.2f us; time slice %.0f us and switch %.0f us "
                  "assumed (the H100's: the file lacks queued_long or probe rows to give them)\n",
                  to_seconds(derived.launch_cost) * 1e6, to_seconds(derived.time_slice) * 1e6,
                  to_seconds(derived.switch_cost) * 1e6);
    } else {
      std::printf("derived from the measurements: host cost per launch %.2f us, time slice %.0f us, switch %.0f us "
                  "(the scenarios' defaults: %.0f us, %.0f us)\n",
                  to_seconds(derived.launch_cost) * 1e6, to_seconds(derived.time_slice) * 1e6,
                  to_seconds(derived.switch_cost) * 1e6, to_seconds(defaults.time_slice) * 1e6,
                  to_seconds(defaults.switch_cost) * 1e6);
    }
    std::printf("%d of %d validation rows within tolerance; wrote %s/%s.{csv%s}\n", inside, validated,
                dir.string().c_str(), base.c_str(), plotted ? ",png" : "");
  }
  return 0;
}

int colocate_command(const ColocateOptions& o) {
  if (!o.validate.empty()) {
    // scalepoint-coloc-bench's measurements carry the loops' shapes; published points name scenarios.
    const bool bench = config::CsvTable::read(o.validate).has_column("launches_per_step");
    return bench ? colocate_validate_bench(o) : colocate_validate(o);
  }
  if (o.scenario.empty()) throw InputError({"colocate", 0, 0}, "", "needs a scenario file or --validate FILE");
  std::vector<config::Override> overrides;
  for (const auto& s : o.overrides) overrides.push_back(config::parse_override(s));
  const models::Catalog catalog(models::data_root() / "models");
  const ColocationSpec spec = config::naming_overrides(overrides, [&] { return load_colocation(o.scenario, overrides, catalog); });
  // A point at K = 32 under MPS simulates millions of kernels: say how far it is.
  Progress progress(static_cast<int>(spec.jobs.size() * spec.strategies.size()), 0, o.quiet);
  const std::vector<ColocationPoint> points = config::naming_overrides(
      overrides, [&] { return run_colocation(spec, [&](double done, int) { progress.update(done); }); });
  progress.finish(static_cast<int>(points.size()));
  const output::Table table = colocation_table(spec, points);

  const fs::path dir = o.out_dir.empty() ? fs::path("results") / spec.name : fs::path(o.out_dir);
  output::StagedFiles files(dir);
  files.write("summary.csv", output::to_csv(table));
  files.write("jobs.csv", output::to_csv(colocation_jobs_table(points)));
  output::Manifest m;
  m.fields = {{"scalepoint_version", SCALEPOINT_VERSION}, {"scenario_name", spec.name}, {"scenario_file", spec.file}};
  m.overrides = o.overrides;
  m.files = {"summary.csv", "jobs.csv", "manifest.yaml"};
  const bool plotted = files.keep_if(plot_colocation(files.stage("colocation.png"), spec, points), "colocation.png", m.files);
  files.write("manifest.yaml", output::to_yaml(m));
  files.commit();
  if (!o.quiet) {
    std::printf("%s: %s (batch %.0f, %.0f steps) x K on %s\n", spec.name.c_str(), spec.workload.name.c_str(), spec.batch,
                spec.steps, spec.accelerator.name.c_str());
    std::printf("%5s %-13s %6s %9s %11s %8s %8s %7s %10s  %s\n", "K", "strategy", "mem GB", "makespan", "samples/s",
                "speedup", "SM act", "busy", "kJ/job", "status");
    for (const ColocationPoint& p : points) {
      const bool ok = p.status == "ok";
      std::printf("%5d %-13s %6.1f %9s %11s %8s %8s %7s %10s  %s\n", p.jobs, strategy_name(p.strategy), p.memory.value() / 1e9,
                  ok ? fmt::format("{:.2f} s", to_seconds(p.run.makespan)).c_str() : "-",
                  ok ? fmt::format("{:.0f}", trained_samples(p, spec.batch) / to_seconds(p.run.makespan)).c_str() : "-",
                  ok ? fmt::format("{:.2f}x", p.speedup).c_str() : "-", ok ? fmt::format("{:.3f}", p.run.sm_active).c_str() : "-",
                  ok ? fmt::format("{:.2f}", p.run.gpu_busy_share).c_str() : "-",
                  ok ? fmt::format("{:.3f}", p.run.energy.value() / 1e3 / p.jobs).c_str() : "-",
                  ok ? "ok" : (p.status + ": " + p.message).c_str());
    }
    for (const StrategyChoice& c : choose_strategies(points)) {
      if (!c.fastest) {
        std::printf("K=%-3d no strategy ran (see status)\n", c.jobs);
        continue;
      }
      std::printf("K=%-3d fastest: %s (%.2f s); least energy: %s (%.3f kJ/job)\n", c.jobs, strategy_name(c.fastest->strategy),
                  to_seconds(c.fastest->run.makespan), strategy_name(c.least_energy->strategy),
                  c.least_energy->run.energy.value() / 1e3 / c.jobs);
    }
    std::printf("wrote %s/{summary.csv,jobs.csv,manifest.yaml%s}\n", dir.string().c_str(), plotted ? ",colocation.png" : "");
  }
  if (!plotted) {
    const bool any = std::any_of(points.begin(), points.end(), [](const auto& p) { return p.status == "ok"; });
    std::fprintf(stderr, "scalepoint: warning: %s; colocation.png not written\n",
                 any ? "gnuplot not found or failed" : "no point ran (every one out of memory or invalid)");
  }
  return 0;
}

}  // namespace sp::cli
