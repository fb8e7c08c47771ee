// `scalepoint report DIR`: a sweep's results as a planner reads them. Points are grouped by
// everything they set except the accelerator count (in a sweep each point already holds a
// whole scaling curve); per group every break-even definition with its N, the time there and,
// with the sweep's price, its cost; plots of time to train and E' against N per scenario, and
// a heat map of the efficiency break-even N over the two swept axes with the most values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/break_even.hpp"

namespace sp {

struct ReportGroup {
  std::string label;                             // "bert NDR"
  std::vector<std::pair<std::string, std::string>> axes;  // swept key -> value (accelerators excluded)
  std::vector<int> n;
  std::vector<double> time_s, e_prime;           // NaN where the point did not fit
  std::vector<double> wall_s;                     // run_time_s (time_s in sweeps written before it)
  std::vector<double> energy_kwh;                 // per run; empty when the sweep has no energy column
  std::vector<double> effective_s;                // time to train / goodput; empty in sweeps written before it
  std::vector<BreakEven> break_even;
  std::vector<BreakEven> effective_break_even;    // on effective_s, where failures cost anything
};

struct SweepReport {
  std::string name;
  std::optional<double> gpu_hour_usd, deadline_s;
  bool has_energy = false;  // sweep.csv has energy_kwh (sweeps written before the energy model have not)
  bool has_failures = false;  // some point's effective time differs from its time to train
  std::vector<std::string> axis_keys;  // swept keys other than accelerators
  std::vector<ReportGroup> groups;
};

/// Reads DIR/sweep.csv and DIR/manifest.yaml (and the sweep file the manifest names, for the
/// price and deadline). InputError when DIR holds no finished sweep.
SweepReport read_sweep_report(const std::string& dir);

/// report.md, report.csv and the plots in DIR; returns the files written.
std::vector<std::string> write_sweep_report(const SweepReport& report, const std::string& dir);

}  // namespace sp
