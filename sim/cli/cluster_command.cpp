// `scalepoint cluster`: several jobs on one fat tree (sim/scenario/cluster.hpp): a table per job,
// placement and point, the varied job's break-even points alone and beside its neighbours, a
// plot, and a timeline of a window with every job.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/output/manifest.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/cluster.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace sp::cli {

namespace fs = std::filesystem;

namespace {

// Left: the varied job's time to train against its N, alone and per placement (when a job
// varies). Right: each job's slowdown per placement at the last point, in % of its step alone.
bool plot_cluster(const fs::path& png, const ClusterSpec& spec, const ClusterResult& res) {
  const std::vector<int> sizes = spec.sizes();
  std::string data, left;
  if (spec.varied >= 0) {
    const auto series = [&](const std::string& name, std::size_t p, bool together) {
      std::string d = fmt::format("${} << EOD\n", name);
      for (const ClusterJobRow& r : res.rows) {
        if (r.placement != spec.placements[p] || static_cast<int>(r.job) != spec.varied || r.status != "ok") continue;
        d += fmt::format("{} {}\n", sizes[r.point], (together ? r.ttt_together_s : r.ttt_alone_s) / 60);
      }
      return d + "EOD\n";
    };
    data += series("alone", 0, false);
    left = "$alone using 1:2 with linespoints lw 2 pt 7 lc rgb 'black' title 'alone'";
    for (std::size_t p = 0; p < spec.placements.size(); ++p) {
      data += series(fmt::format("p{}", p), p, true);
      left += fmt::format(", $p{} using 1:2 with linespoints lw 2 pt 7 lc rgb '{}' title '{}'", p, output::series_colour(p),
                          placement_name(spec.placements[p]));
    }
  }
  // Slowdown at the last point: rows are jobs, columns placements.
  std::string bars = "$slow << EOD\n";
  for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
    // A datablock's first column is a label, not a command: only whitespace and quotes matter.
    std::string label = spec.jobs[j].scenario.name;
    for (char& c : label) {
      if (c == ' ' || c == '"' || c == '\'' || c == '\t') c = '_';
    }
    bars += label;
    for (models::Placement pl : spec.placements) {
      double v = std::numeric_limits<double>::quiet_NaN();
      for (const ClusterJobRow& r : res.rows) {
        if (r.job == j && r.placement == pl && r.point + 1 == sizes.size() && r.status == "ok") {
          v = (to_seconds(r.step_together) / to_seconds(r.step_alone) - 1) * 100;
        }
      }
      bars += std::isfinite(v) ? fmt::format(" {:.6f}", v) : std::string(" NaN");
    }
    bars += "\n";
  }
  data += bars + "EOD\n";
  std::string right;
  for (std::size_t p = 0; p < spec.placements.size(); ++p) {
    right += fmt::format("{}$slow using {}:xtic(1) lc rgb '{}' title '{}'", p ? ", " : "", p + 2, output::series_colour(p),
                         placement_name(spec.placements[p]));
  }
  const std::string title = output::gnuplot_text(
      fmt::format("{}: {} jobs on {} leaves of {} ({}:1)", spec.name, spec.jobs.size(), spec.leaves,
                  spec.platform.name, spec.platform.topology.tiers[models::leaf_tier(spec.platform)].oversubscription));
  const std::string varied_label =
      spec.varied >= 0 ? output::gnuplot_text(spec.jobs[static_cast<std::size_t>(spec.varied)].scenario.name + " accelerators")
                       : "''";
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1100,460 font 'sans,10'\nset output {}\n{}"
      "set multiplot layout 1,{} title {}\nset grid\n"
      "{}"
      "unset logscale\nset style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8\n"
      "set yrange [0:*]\nset key top left\nset xlabel 'job (at the last point)'\nset ylabel 'step time beside the others (% over alone)'\n"
      "plot {}\nunset multiplot\n",
      output::gnuplot_text(png.string()), data, spec.varied >= 0 ? 2 : 1, title,
      spec.varied >= 0 ? fmt::format("set logscale xy 2\nset key top right\nset xlabel {}\nset ylabel 'time to train (min)'\n"
                                     "plot {}\n",
                                     varied_label, left)
                       : std::string(),
      right);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int cluster_command(const ClusterOptions& o) {
  std::vector<config::Override> overrides;
  for (const auto& s : o.overrides) overrides.push_back(config::parse_override(s));
  const models::Catalog catalog(models::data_root() / "models");
  const ClusterSpec spec = config::naming_overrides(overrides, [&] { return load_cluster(o.scenario, overrides, catalog); });
  Progress progress(static_cast<int>(spec.placements.size() * spec.sizes().size()), 0, o.quiet);
  const ClusterResult res =
      config::naming_overrides(overrides, [&] { return run_cluster(spec, [&](int done, int) { progress.update(done); }); });
  progress.finish(static_cast<int>(spec.placements.size() * spec.sizes().size()));
  const output::Table table = cluster_table(spec, res);

  const fs::path dir = o.out_dir.empty() ? fs::path("results") / spec.name : fs::path(o.out_dir);
  output::StagedFiles files(dir);
  files.write("cluster.csv", output::to_csv(table));
  output::Manifest m;
  m.fields = {{"scalepoint_version", SCALEPOINT_VERSION}, {"scenario_name", spec.name}, {"scenario_file", spec.file}};
  m.overrides = o.overrides;
  m.files = {"cluster.csv", "manifest.yaml"};
  if (o.timelines) {
    files.write("cluster_timeline.json", res.timeline);
    m.files.push_back("cluster_timeline.json");
  }
  const bool plotted = files.keep_if(plot_cluster(files.stage("cluster.png"), spec, res), "cluster.png", m.files);
  files.write("manifest.yaml", output::to_yaml(m));
  files.commit();
  if (!o.quiet) {
    const std::vector<int> sizes = spec.sizes();
    std::printf("%s: %zu jobs on %d leaves of %s, %d steps each\n", spec.name.c_str(), spec.jobs.size(), spec.leaves,
                spec.platform.name.c_str(), spec.steps);
    std::printf("%-8s %-18s %6s %6s %-40s %10s %10s %8s %7s %9s %9s\n", "placing", "job", "N", "leaves", "layout",
                "alone ms", "shared ms", "slowdown", "uplink", "TTT min", "shared");
    for (std::size_t i = 0; i < res.rows.size(); ++i) {
      const ClusterJobRow& r = res.rows[i];
      const bool ok = r.status == "ok";
      std::printf("%-8s %-18s %6d %6.0f %-40s %10s %10s %8s %7s %9s %9s\n", placement_name(r.placement),
                  spec.jobs[r.job].scenario.name.c_str(), spec.accelerators(r.job, r.point),
                  table.column("leaves").values[i], ok ? r.alone.layout.describe().c_str() : r.status.c_str(),
                  ok ? fmt::format("{:.2f}", to_seconds(r.step_alone) * 1e3).c_str() : "-",
                  ok ? fmt::format("{:.2f}", to_seconds(r.step_together) * 1e3).c_str() : "-",
                  ok ? fmt::format("{:.3f}x", to_seconds(r.step_together) / to_seconds(r.step_alone)).c_str() : "-",
                  ok && r.busiest_leaf >= 0 ? fmt::format("{:.0f} %", r.busiest_uplink * 100).c_str() : "-",
                  ok ? fmt::format("{:.2f}", r.ttt_alone_s / 60).c_str() : "-",
                  ok ? fmt::format("{:.2f}", r.ttt_together_s / 60).c_str() : "-");
    }
    for (std::size_t p = 0; p < res.break_even_together.size(); ++p) {
      std::printf("%s, %s: break-even points alone\n%s", spec.jobs[static_cast<std::size_t>(spec.varied)].scenario.name.c_str(),
                  placement_name(spec.placements[p]), describe(res.break_even_alone[p]).c_str());
      std::printf("%s, %s: break-even points shared\n%s", spec.jobs[static_cast<std::size_t>(spec.varied)].scenario.name.c_str(),
                  placement_name(spec.placements[p]), describe(res.break_even_together[p]).c_str());
    }
    std::printf("wrote %s/{cluster.csv,manifest.yaml%s%s}\n", dir.string().c_str(), o.timelines ? ",cluster_timeline.json" : "",
                plotted ? ",cluster.png" : "");
  }
  if (!plotted) std::fprintf(stderr, "scalepoint: warning: gnuplot not found or failed; cluster.png not written\n");
  return 0;
}

}  // namespace sp::cli
