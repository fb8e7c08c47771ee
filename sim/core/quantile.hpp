// Quantiles by linear interpolation between order statistics (numpy's default rule), shared by
// the prediction intervals, the validation summaries and scalepoint-bench.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

namespace sp {

/// q in [0, 1] of values already sorted ascending; NaN when empty.
inline double sorted_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] + frac * (sorted[i + 1] - sorted[i]) : sorted[i];
}

/// The same for values in any order.
inline double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, q);
}

}  // namespace sp
