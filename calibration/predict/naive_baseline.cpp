#include "calibration/predict/naive_baseline.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

namespace sp::calibration {

void add_naive_baselines(std::vector<ValidationRow>& rows, BaselineExclusion exclusion) {
  for (ValidationRow& r : rows) {
    r.baseline_error = std::numeric_limits<double>::quiet_NaN();
    const double n = r.row.accelerators;
    if (!r.row.time_to_train_min || !(r.prediction.peak_flops > 0) || !(n > 0)) continue;
    const ValidationRow* best = nullptr;
    const std::string own = r.row.system();
    // Same kind first, then the nearest count in log N (as the ratio larger / smaller: an exact
    // division, so 4 and 16 around 8 tie on every machine), then the system's name, its size and
    // its time: what a row is, not where it stands in the file.
    std::tuple<bool, double, std::string, int, double> best_key{};
    for (const ValidationRow& o : rows) {
      if (&o == &r || o.row.benchmark != r.row.benchmark || !o.row.time_to_train_min) continue;
      if (!(o.prediction.peak_flops > 0) || o.row.accelerators <= 0) continue;
      if (o.row.system() == own) continue;
      if (exclusion == BaselineExclusion::kind && o.prediction.kind == r.prediction.kind) continue;
      const double m = o.row.accelerators;
      std::tuple<bool, double, std::string, int, double> key{o.prediction.kind != r.prediction.kind,
                                                             std::max(m, n) / std::min(m, n), o.row.system(),
                                                             o.row.accelerators, *o.row.time_to_train_min};
      if (!best || key < best_key) {
        best = &o;
        best_key = std::move(key);
      }
    }
    if (!best) continue;
    const double naive = *best->row.time_to_train_min * (best->row.accelerators / n) *
                         (best->prediction.peak_flops / r.prediction.peak_flops);
    r.baseline_error = naive / *r.row.time_to_train_min - 1;
  }
}

}  // namespace sp::calibration
