#include "sim/cli/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/output/hdf5_writer.hpp"
#include "sim/output/manifest.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/break_even.hpp"
#include "sim/scenario/collective_bench.hpp"
#include "sim/scenario/scaling_table.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp::cli {

namespace fs = std::filesystem;

namespace {
std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}
}  // namespace

int run_command(const RunOptions& o) {
  std::vector<config::Override> overrides;
  if (!o.platform.empty()) {
    // The platform file, includes resolved, in place of the scenario's: its errors name its lines.
    // First, so that a --set of a platform key changes it rather than being replaced by it.
    overrides.push_back(config::Override{"platform", "", "--platform " + o.platform, find_platform_file(o.platform).string()});
  }
  for (const auto& s : o.overrides) overrides.push_back(config::parse_override(s));
  if (o.seed) {
    const std::string seed = std::to_string(*o.seed);
    overrides.push_back(config::Override{"seed", seed, "--seed " + seed});
  }
  if (o.samples) {
    const std::string k = std::to_string(*o.samples);
    overrides.push_back(config::Override{"samples", k, "--samples " + k});
  }
  if (!o.anchor.empty()) {
    // N=TIME (a time to train) or N=TIME/step (a step), as the scenario's anchor mapping, so that
    // its errors name --anchor.
    const auto eq = o.anchor.find('=');
    const auto malformed = [] {
      return InputError({"--anchor", 0, 0}, "anchor", "expected N=TIME or N=TIME/step, e.g. --anchor 8=28.2min or 8=3.68s/step");
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.anchor.size()) throw malformed();
    std::string value = o.anchor.substr(eq + 1);
    const std::string per_step = "/step";
    const bool step = value.size() >= per_step.size() && value.compare(value.size() - per_step.size(), per_step.size(), per_step) == 0;
    if (step) value.resize(value.size() - per_step.size());
    if (value.empty()) throw malformed();
    const std::string yaml = fmt::format("{{accelerators: {}, {}: \"{}\"}}", o.anchor.substr(0, eq),
                                         step ? "step_time" : "time_to_train", value);
    overrides.push_back(config::Override{"anchor", yaml, "--anchor " + o.anchor});
  }
  const models::Catalog catalog(models::data_root() / "models");
  const ScenarioSpec spec = config::naming_overrides(overrides, [&] { return load_scenario(o.scenario, overrides, catalog); });
  const std::vector<ScalingPoint> points = config::naming_overrides(overrides, [&] { return run_scenario(spec, o.timelines, true); });
  // The convergence table is measured only up to its largest batch; far beyond it the samples to
  // converge are a straight-line guess.
  std::int64_t largest = 0;
  for (const auto& c : spec.workload.convergence.points) largest = c.pruned ? std::max(largest, c.global_batch) : largest;
  for (const ScalingPoint& p : points) {
    if (p.estimate.ok() && largest > 0 && p.estimate.global_batch > 2 * largest) {
      warn({spec.file, 0, 0}, "batch",
           fmt::format("N={}: global batch {} is {:.1f}x the largest RCP batch of {} ({}); its samples to converge are "
                       "extrapolated from the table's last two points",
                       p.estimate.accelerators, p.estimate.global_batch,
                       static_cast<double>(p.estimate.global_batch) / static_cast<double>(largest), spec.workload.name,
                       largest));
    }
  }
  const output::Table table = scaling_table(points);

  const fs::path dir = o.out_dir.empty() ? fs::path("results") / spec.name : fs::path(o.out_dir);
  output::StagedFiles files(dir);
  files.write("summary.csv", output::to_csv(table));
  files.write("results.h5", output::hdf5_image(table,
                     {{"scenario_name", spec.name},
                      {"scenario_file", spec.file},
                      {"scenario_sha256", spec.file_sha256},
                      {"scenario_resolved_yaml", spec.resolved_yaml},
                      {"workload", spec.workload.name},
                      {"platform", spec.platform.name},
                      {"accelerator", spec.platform.accelerator.name},
                      {"seed", std::to_string(spec.seed)},
                      {"scalepoint_version", SCALEPOINT_VERSION}}));
  output::Manifest m;
  m.fields = {{"scalepoint_version", SCALEPOINT_VERSION},
              {"command", join(o.command_line)},
              {"scenario_name", spec.name},
              {"scenario_file", spec.file},
              {"scenario_sha256", spec.file_sha256},
              {"resolved_scenario_sha256", spec.resolved_sha256},
              {"seed", std::to_string(spec.seed)}};
  if (spec.anchor) m.fields.push_back({"anchor", describe_anchor(*spec.anchor)});
  m.overrides = o.overrides;
  if (!o.platform.empty()) m.overrides.push_back("platform=<" + o.platform + ">");
  m.files = {"summary.csv", "results.h5", "manifest.yaml"};
  for (const ScalingPoint& p : points) {  // one step of each N, for chrome://tracing or Perfetto
    if (p.timeline.empty()) continue;
    const std::string name = fmt::format("timeline_N{}.json", p.estimate.accelerators);
    files.write(name, p.timeline);
    m.files.push_back(name);
  }
  for (const ScalingPoint& p : points) {  // one replicate's whole run: failures, checkpoints, restarts
    if (p.goodput.timeline.empty()) continue;
    const std::string name = fmt::format("run_timeline_N{}.json", p.estimate.accelerators);
    files.write(name, p.goodput.timeline);
    m.files.push_back(name);
  }
  const fs::path png = files.stage("scaling.png");
  const bool plotted = files.keep_if(
      output::plot_scaling(png, table,
                           fmt::format("{} on {} ({})", spec.workload.name, spec.platform.name, spec.platform.accelerator.name)),
      "scaling.png", m.files);
  files.write("manifest.yaml", output::to_yaml(m));
  files.commit();

  if (!o.quiet) {
    std::printf("%s: %s on %s (%s x %d per node)\n", spec.name.c_str(), spec.workload.name.c_str(),
                spec.platform.name.c_str(), spec.platform.accelerator.name.c_str(),
                spec.platform.accelerators_per_node());
    if (spec.anchor) std::printf("%s\n", describe_anchor(*spec.anchor).c_str());
    std::fputs(console_table(table).c_str(), stdout);
    std::vector<int> n;
    std::vector<double> t, effective, energy;
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    bool failures = false;
    for (const ScalingPoint& p : points) {
      n.push_back(p.estimate.accelerators);
      t.push_back(p.estimate.ok() ? to_seconds(p.estimate.time_to_train) : nan);
      effective.push_back(p.estimate.ok() ? p.goodput.effective_s : nan);
      energy.push_back(p.energy.ok ? p.energy.total().value() : nan);
      failures = failures || p.goodput.counted;
    }
    std::printf("break-even points (time to train; energy):\n%s", describe(break_even_points(n, t, {}, &energy)).c_str());
    if (failures) {
      std::printf("break-even points (effective time to train: failures, checkpoints, restarts):\n%s",
                  describe(break_even_points(n, effective)).c_str());
    }
    if (!points.empty() && !points.front().energy.ok && points.front().estimate.ok()) {
      std::printf("no energy: %s\n", points.front().energy.why.c_str());
    }
    for (const ScalingPoint& p : points) {
      if (!p.estimate.ok()) std::printf("N=%d %s: %s\n", p.estimate.accelerators, p.estimate.status.c_str(), p.estimate.message.c_str());
    }
    std::printf("wrote %s/{%s}%s\n", dir.string().c_str(),
                plotted ? "summary.csv,results.h5,manifest.yaml,scaling.png" : "summary.csv,results.h5,manifest.yaml",
                m.files.size() > 4 ? " and a step timeline per N (timeline_N*.json, chrome://tracing or Perfetto), "
                                     "a run's failures and checkpoints per N (run_timeline_N*.json)" : "");
  }
  if (!plotted) {
    // Every N out of memory or invalid leaves gnuplot nothing to draw: that, not gnuplot, is why.
    const bool any = std::any_of(points.begin(), points.end(), [](const ScalingPoint& p) { return p.estimate.ok(); });
    std::fprintf(stderr, "scalepoint: warning: %s; scaling.png not written\n",
                 any ? "gnuplot not found or failed" : "no accelerator count has a time to plot");
  }
  return 0;
}

int list_command(const std::string& what) {
  const models::Catalog catalog(models::data_root() / "models");
  if (what == "accelerators") {
    for (const auto& a : catalog.accelerators()) {
      std::string aliases;
      for (const auto& al : a.aliases) aliases += (aliases.empty() ? "" : "; ") + al;
      std::printf("%-20s %-7s %-10s %-9s %-27s %s\n", a.name.c_str(), a.vendor.c_str(), a.family.c_str(),
                  a.software_stack.c_str(), a.compute.source.substr(0, a.compute.source.find(':')).c_str(),
                  aliases.c_str());
    }
  } else if (what == "workloads") {
    for (const auto& w : catalog.workloads()) {
      std::printf("%-18s %s\n", w.name.c_str(), w.description.c_str());
    }
  } else {
    // Columns as wide as their longest entry, so a long file name does not shift its row.
    const std::vector<std::string> names = models::shipped_platforms();
    std::vector<models::Platform> platforms;
    int stem_width = 0, name_width = 0;
    for (const std::string& n : names) {
      platforms.push_back(load_platform(models::shipped_platform_file(n).string(), catalog));
      stem_width = std::max(stem_width, static_cast<int>(n.size()));
      name_width = std::max(name_width, static_cast<int>(platforms.back().name.size()));
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      const models::Platform& p = platforms[i];
      std::printf("%-*s %-*s %s x %d per node\n", stem_width, names[i].c_str(), name_width, p.name.c_str(),
                  p.accelerator.name.c_str(), p.accelerators_per_node());
    }
  }
  return 0;
}

}  // namespace sp::cli
