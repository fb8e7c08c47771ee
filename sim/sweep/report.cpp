#include "sim/sweep/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace sp {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string stem_of(const std::string& base) { return fs::path(unquoted(base)).stem().string(); }

std::string value_text(const std::string& key, const std::string& v) { return key == "base" ? stem_of(v) : v; }

std::string n_text(const BreakEven& b) { return b.accelerators ? std::to_string(*b.accelerators) : "-"; }

}  // namespace

SweepReport read_sweep_report(const std::string& dir) {
  const fs::path csv = fs::path(dir) / "sweep.csv", manifest = fs::path(dir) / "manifest.yaml";
  const SourceLocation where{dir, 0, 0};
  if (!config::exists_quietly(csv.string()) || !config::exists_quietly(manifest.string())) {
    throw InputError(where, "", "no finished sweep here (sweep.csv and manifest.yaml)", "run scalepoint sweep first");
  }
  SweepReport r;
  const config::ConfigNode m = config::load_file(manifest.string());
  r.name = m.at("sweep_name").as_string();
  const std::string sweep_file = m.at("sweep_file").as_string();
  if (config::exists_quietly(sweep_file)) {
    const SweepSpec spec = load_sweep(sweep_file);
    r.gpu_hour_usd = spec.gpu_hour_usd;
    r.deadline_s = spec.deadline_s;
  }
  // The rows must be the finished sweep the manifest names, byte for byte as written: the
  // progress file records their count, their bytes' checksum and the sweep file's hash.
  {
    const std::string text = config::read_text_file(csv.string());
    const std::optional<SweepProgress> p = read_sweep_progress((fs::path(dir) / "sweep.progress").string());
    const bool whole = p && p->sha == m.at("sweep_sha256").as_string() && p->bytes == text.size() &&
                       SweepWriter::checksum(SweepWriter::kChecksumStart, text) == p->checksum &&
                       std::to_string(p->done) == m.at("points").as_string();
    if (!whole) {
      throw InputError(where, "", csv.filename().string() + " is not the finished sweep manifest.yaml and sweep.progress record",
                       "run scalepoint sweep --resume to finish it, or the sweep again");
    }
  }
  const config::CsvTable t = config::CsvTable::read(csv.string());
  r.has_energy = t.has_column("energy_kwh");
  std::vector<std::string> keys;
  for (const auto& h : t.header()) {
    if (h.rfind("sweep.", 0) == 0 && h != "sweep.accelerators") keys.push_back(h.substr(6));
  }
  // Which keys vary between points: those name the groups.
  std::map<std::string, std::set<std::string>> seen;
  std::map<long long, std::size_t> group_of_point;
  for (std::size_t row = 0; row < t.rows(); ++row) {
    const long long point = t.integer(row, "point").value_or(-1);
    auto [it, fresh] = group_of_point.try_emplace(point, r.groups.size());
    if (fresh) {
      ReportGroup g;
      for (const auto& k : keys) {
        g.axes.emplace_back(k, t.cell(row, "sweep." + k));
        seen[k].insert(t.cell(row, "sweep." + k));
      }
      r.groups.push_back(std::move(g));
    }
    ReportGroup& g = r.groups[it->second];
    const auto n = t.integer(row, "accelerators");
    if (!n) continue;  // a failed point: no curve
    const bool ok = t.cell(row, "status") == "ok";
    g.n.push_back(static_cast<int>(*n));
    g.time_s.push_back(ok ? t.number(row, "time_to_train_s").value_or(kNaN) : kNaN);
    const char* wall = t.has_column("run_time_s") ? "run_time_s" : "time_to_train_s";
    g.wall_s.push_back(ok ? t.number(row, wall).value_or(kNaN) : kNaN);
    g.e_prime.push_back(ok ? t.number(row, "e_prime").value_or(kNaN) : kNaN);
    // Sweeps written before energy existed have no such column: no energy_optimal then.
    if (r.has_energy) g.energy_kwh.push_back(ok ? t.number(row, "energy_kwh").value_or(kNaN) : kNaN);
    if (t.has_column("effective_time_to_train_min")) {
      const double eff = ok ? t.number(row, "effective_time_to_train_min").value_or(kNaN) * 60 : kNaN;
      g.effective_s.push_back(eff);
      const double ttt = ok ? t.number(row, "time_to_train_min").value_or(kNaN) * 60 : kNaN;
      r.has_failures = r.has_failures || (std::isfinite(eff) && eff != ttt);
    }
  }
  // A `label` names the values it is zipped with: a key whose value the label determines is not
  // repeated in the group's name; keys of other axes are (by the last part of their path).
  const auto value_of = [](const ReportGroup& g, const std::string& key) {
    for (const auto& [k, v] : g.axes) {
      if (k == key) return v;
    }
    return std::string();
  };
  const auto named_by_label = [&](const std::string& key) {
    std::map<std::string, std::string> by_label;
    for (const ReportGroup& g : r.groups) {
      const auto [it, fresh] = by_label.emplace(value_of(g, "label"), value_of(g, key));
      if (!fresh && it->second != value_of(g, key)) return false;
    }
    return std::find(keys.begin(), keys.end(), "label") != keys.end();
  };
  for (const auto& k : keys) {
    if (seen[k].size() > 1 && (k == "label" || k == "base" || !named_by_label(k))) r.axis_keys.push_back(k);
  }
  BreakEvenOptions opt;
  opt.deadline_s = r.deadline_s;
  for (ReportGroup& g : r.groups) {
    for (const auto& [k, v] : g.axes) {
      if (seen[k].size() < 2 || (k != "label" && k != "base" && named_by_label(k))) continue;
      const std::string shortk = k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
      g.label += (g.label.empty() ? "" : " ") + (k == "base" || k == "label" ? value_text(k, v) : shortk + "=" + v);
    }
    if (g.label.empty()) g.label = r.name;
    opt.wall_s = &g.wall_s;
    g.break_even = break_even_points(g.n, g.time_s, opt, r.has_energy ? &g.energy_kwh : nullptr);
  }
  if (r.has_failures) {
    for (ReportGroup& g : r.groups) g.effective_break_even = break_even_points(g.n, g.effective_s);
  }
  return r;
}

namespace {

// Time to train and E' against N, one line per group, for the groups of one scenario.
bool plot_scaling_groups(const fs::path& png, const std::string& title, const std::vector<const ReportGroup*>& gs) {
  std::string data, time_plots, e_plots;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    data += fmt::format("$g{} << EOD\n", i);
    for (std::size_t j = 0; j < gs[i]->n.size(); ++j) {
      if (std::isfinite(gs[i]->time_s[j])) {
        data += fmt::format("{} {} {}\n", gs[i]->n[j], gs[i]->time_s[j] / 60, gs[i]->e_prime[j]);
      }
    }
    data += "EOD\n";
    const std::string label = output::gnuplot_text(gs[i]->label);
    time_plots += fmt::format("{}$g{} using 1:2 with linespoints lw 2 pt 7 title {}", i ? ", " : "", i, label);
    e_plots += fmt::format("{}$g{} using 1:3 with linespoints lw 2 pt 7 title {}", i ? ", " : "", i, label);
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1100,460 font 'sans,10'\nset output {}\n{}"
      "set multiplot layout 1,2 title {}\nset logscale x 2\nset grid\nset key top right\n"
      "set xlabel 'accelerators N'\nset logscale y\nset ylabel 'time to train (min)'\nplot {}\n"
      "unset logscale y\nset yrange [0:1.05]\nset ylabel \"E' (per-accelerator efficiency)\"\nplot {}\n"
      "unset multiplot\n",
      output::gnuplot_text(png.string()), data, output::gnuplot_text(title), time_plots, e_plots);
  return output::run_gnuplot(script, png.parent_path());
}

// The efficiency break-even N over two swept axes, as a coloured grid with the N written in; with
// a third axis, one grid per value of the first (`panel`).
bool plot_heat_map(const fs::path& png, const SweepReport& r, const std::string& kx, const std::string& ky,
                   const std::string& panel) {
  const auto value = [](const ReportGroup& g, const std::string& k) {
    for (const auto& [key, v] : g.axes) {
      if (key == k) return value_text(k, v);
    }
    return std::string();
  };
  std::vector<std::string> xs, ys, panels;
  const auto add = [](std::vector<std::string>& list, const std::string& v) {
    if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
  };
  for (const auto& g : r.groups) {
    add(xs, value(g, kx));
    add(ys, value(g, ky));
    add(panels, panel.empty() ? std::string() : value(g, panel));
  }
  std::string data, plots;
  std::string xt, yt;
  for (std::size_t i = 0; i < xs.size(); ++i) xt += fmt::format("{}{} {}", i ? ", " : "", output::gnuplot_text(xs[i]), i);
  for (std::size_t i = 0; i < ys.size(); ++i) yt += fmt::format("{}{} {}", i ? ", " : "", output::gnuplot_text(ys[i]), i);
  for (std::size_t p = 0; p < panels.size(); ++p) {
    data += fmt::format("$h{} << EOD\n", p);
    for (const auto& g : r.groups) {
      if (!panel.empty() && value(g, panel) != panels[p]) continue;
      const auto x = std::find(xs.begin(), xs.end(), value(g, kx)) - xs.begin();
      const auto y = std::find(ys.begin(), ys.end(), value(g, ky)) - ys.begin();
      const auto& b = g.break_even.front();  // efficiency
      data += fmt::format("{} {} {} \"{}\"\n", x, y, b.accelerators ? std::log2(*b.accelerators) : -1.0, n_text(b));
    }
    data += "EOD\n";
    plots += fmt::format("set title {}\nplot $h{} using 1:2:3 with image notitle, $h{} using 1:2:4 with labels notitle\n",
                         output::gnuplot_text(panel.empty() ? "largest N with E' >= 0.5" : panels[p]), p, p);
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size {},520 font 'sans,11'\nset output {}\n{}"
      "set multiplot layout 1,{} title {}\n"
      "set xtics ({})\nset ytics ({})\nset xlabel {}\nset ylabel {}\n"
      "set xrange [-0.5:{}]\nset yrange [-0.5:{}]\nset cblabel 'log2 N'\nset cbrange [3:14]\nset palette defined (0 '#d73027', 0.5 "
      "'#fee08b', 1 '#1a9850')\n{}unset multiplot\n",
      panels.size() > 1 ? 380 * panels.size() + 100 : 760, output::gnuplot_text(png.string()), data, panels.size(),
      output::gnuplot_text(panel.empty() ? "" : "largest N with E' >= 0.5, by " + panel), xt, yt, output::gnuplot_text(kx),
      output::gnuplot_text(ky), xs.size() - 0.5, ys.size() - 0.5,
      plots);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

std::vector<std::string> write_sweep_report(const SweepReport& r, const std::string& dir) {
  output::StagedFiles files(dir);
  std::vector<std::string> written;
  // GPU-hours are paid for the run's wall time, not for the RCP-scaled score.
  const auto cost = [&](const BreakEven& b) {
    return r.gpu_hour_usd && b.accelerators ? fmt::format("{:.0f}", *b.accelerators * b.wall_s / 3600 * *r.gpu_hour_usd)
                                            : std::string();
  };
  // report.csv: one row per group and definition.
  std::string csv = "group,definition,accelerators,time_to_train_s,cost_usd\n";
  for (const auto& g : r.groups) {
    for (const auto& b : g.break_even) {
      csv += fmt::format("{},{},{},{},{}\n", output::csv_field(g.label), b.name,
                         b.accelerators ? std::to_string(*b.accelerators) : "",
                         b.accelerators ? fmt::format("{}", b.time_s) : "", cost(b));
    }
    for (const auto& b : g.effective_break_even) {  // time_to_train_s holds the effective time here
      csv += fmt::format("{},effective_{},{},{},\n", output::csv_field(g.label), b.name,
                         b.accelerators ? std::to_string(*b.accelerators) : "",
                         b.accelerators ? fmt::format("{}", b.time_s) : "");
    }
  }
  files.write("report.csv", csv);
  written.push_back("report.csv");

  std::string md = fmt::format("# Sweep `{}`: where per-accelerator efficiency collapses\n\n", r.name);
  md += "Break-even N per group (DESIGN.md definitions; `-`: not reached in the range swept):\n\n";
  md += "| group | E' >= 0.5 | doubling < 1.1x | knee of log T | N x T^2 minimum |";
  if (r.deadline_s) md += fmt::format(" cheapest within {:.0f} min |", *r.deadline_s / 60);
  const bool energy = r.has_energy;
  if (energy) md += " least energy per run |";
  md += "\n|---|---:|---:|---:|---:|" + std::string(r.deadline_s ? "---:|" : "") + (energy ? "---:|" : "") + "\n";
  for (const auto& g : r.groups) {
    md += "| " + g.label;
    for (const auto& b : g.break_even) {
      md += " | " + n_text(b);
      if (b.name == "deadline_cheapest" && b.accelerators) {
        md += fmt::format(" ({:.1f} min{})", b.wall_s / 60, r.gpu_hour_usd ? ", $" + cost(b) : "");
      }
      if (b.name == "energy_optimal" && b.accelerators) {
        for (std::size_t i = 0; i < g.n.size(); ++i) {
          if (g.n[i] == *b.accelerators) md += fmt::format(" ({:.3g} kWh)", g.energy_kwh[i]);
        }
      }
    }
    md += " |\n";
  }
  if (r.gpu_hour_usd) md += fmt::format("\nCosts at {} USD per accelerator-hour.\n", *r.gpu_hour_usd);
  if (r.has_failures) {
    md += "\nOn the effective time to train (failures, checkpoints and restarts counted):\n\n"
          "| group | E' >= 0.5 | doubling < 1.1x | knee of log T | N x T^2 minimum |\n|---|---:|---:|---:|---:|\n";
    for (const auto& g : r.groups) {
      md += "| " + g.label;
      for (const auto& b : g.effective_break_even) md += " | " + n_text(b);
      md += " |\n";
    }
  }
  // One plot per scenario (base), the groups of that scenario as lines.
  std::map<std::string, std::vector<const ReportGroup*>> by_base;
  for (const auto& g : r.groups) {
    std::string base = r.name;
    for (const auto& [k, v] : g.axes) {
      if (k == "base") base = stem_of(v);
    }
    by_base[base].push_back(&g);
  }
  for (const auto& [base, gs] : by_base) {
    const std::string png = "scaling_" + base + ".png";
    if (plot_scaling_groups(files.stage(png), base, gs)) {
      md += fmt::format("\n## {}\n\n![time to train and E' against N]({})\n", base, png);
      written.push_back(png);
    } else {
      files.drop(png);
    }
    md += "\n| group | N | time to train (min) | E' |\n|---|---:|---:|---:|\n";
    for (const ReportGroup* g : gs) {
      for (std::size_t i = 0; i < g->n.size(); ++i) {
        md += fmt::format("| {} | {} | {} | {} |\n", g->label, g->n[i],
                          std::isfinite(g->time_s[i]) ? fmt::format("{:.3f}", g->time_s[i] / 60) : "does not fit",
                          std::isfinite(g->e_prime[i]) ? fmt::format("{:.3f}", g->e_prime[i]) : "-");
      }
    }
  }
  if (r.axis_keys.size() >= 2) {
    std::vector<std::string> keys = r.axis_keys;
    if (std::find(keys.begin(), keys.end(), "label") != keys.end()) {
      // A labelled axis stands for the keys it zips: put it and the scenario first.
      std::stable_partition(keys.begin(), keys.end(), [](const std::string& k) { return k == "base" || k == "label"; });
    }
    // Two axes: one grid; three: one grid per value of the first (the scenario, as a rule).
    const bool panels = keys.size() >= 3;
    const std::string kx = keys[panels ? 1 : 0], ky = keys[panels ? 2 : 1], panel = panels ? keys[0] : "";
    if (plot_heat_map(files.stage("breakeven_heatmap.png"), r, kx, ky, panel)) {
      md += fmt::format("\n## Efficiency break-even over {} and {}{}\n\n![break-even heat map](breakeven_heatmap.png)\n",
                        kx, ky, panels ? ", per " + panel : "");
      written.push_back("breakeven_heatmap.png");
    } else {
      files.drop("breakeven_heatmap.png");
    }
  }
  files.write("report.md", md);
  written.push_back("report.md");
  files.commit();
  return written;
}

}  // namespace sp
