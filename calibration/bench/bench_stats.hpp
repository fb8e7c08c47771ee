// Summaries of repeated timings for scalepoint-bench: per message size the fastest, the median
// and the spread (p10, p90) of the per-repetition times, each the slowest rank's time.
#pragma once

#include <algorithm>
#include <vector>

#include "sim/core/quantile.hpp"

namespace sp::bench {

struct TimingSummary {
  double min_s = 0, median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

inline TimingSummary summarise_timings(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  TimingSummary s;
  s.repetitions = static_cast<int>(seconds.size());
  if (seconds.empty()) return s;
  s.min_s = seconds.front();
  s.median_s = sorted_quantile(seconds, 0.5);
  s.p10_s = sorted_quantile(seconds, 0.1);
  s.p90_s = sorted_quantile(seconds, 0.9);
  return s;
}

}  // namespace sp::bench
