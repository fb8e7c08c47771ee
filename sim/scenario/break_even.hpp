// The efficiency break-even point of a scaling curve, under several named definitions that are
// reported side by side (DESIGN.md): where per-accelerator efficiency collapses while the time
// to train still falls.
//  - efficiency: the largest N whose E' is still at least a threshold (default 0.5);
//  - doubling: the first N from which doubling the accelerators buys less than a given speedup
//    (default 1.1x per doubling; uneven steps are converted to a per-doubling rate);
//  - knee: the knee of log T against log N (the point farthest below the chord joining the
//    curve's ends, after scaling both axes to [0, 1]: Kneedle);
//  - time_x_gpu_hours: the N that minimises time x GPU-hours = N x T^2;
//  - deadline_cheapest: with a deadline, the N that trains within it for the fewest
//    accelerator-hours N x T (at a price per accelerator-hour, the cheapest configuration);
//  - energy_optimal: with energies per run, the N that trains for the least energy.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp {

struct BreakEven {
  std::string name;
  std::string definition;
  std::optional<int> accelerators;  // none when the curve never meets the definition
  double time_s = 0;                // the time to train there (when reached)
  double wall_s = 0;                // a run's wall time there: time_s before MLPerf's RCP scaling
};

struct BreakEvenOptions {
  double efficiency_threshold = 0.5;
  double doubling_speedup = 1.1;
  std::optional<double> deadline_s;  // adds deadline_cheapest
  /// A run's wall time per point (run_time_s), what a deadline and GPU-hours are about; absent,
  /// the time to train stands for it.
  const std::vector<double>* wall_s = nullptr;
};

/// `n` ascending, `time` the time to train at each (NaN for points without one, skipped);
/// `energy` (one per point, NaN where unknown) adds energy_optimal.
std::vector<BreakEven> break_even_points(const std::vector<int>& n, const std::vector<double>& time,
                                         const BreakEvenOptions& options = {},
                                         const std::vector<double>* energy = nullptr);

/// "efficiency (E' >= 0.5): 256 | doubling (< 1.1x per doubling): 512 | ..."
std::string describe(const std::vector<BreakEven>& points);

}  // namespace sp
