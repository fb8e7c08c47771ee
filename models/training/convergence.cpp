#include "models/training/convergence.hpp"

#include <vector>

namespace sp::models {

ConvergenceEstimate samples_to_converge(const Workload& w, std::int64_t global_batch) {
  std::vector<ConvergencePoint> pts;
  for (const auto& p : w.convergence.points) {
    if (p.pruned) pts.push_back(p);
  }
  const double per_unit = w.convergence.unit == ConvergenceTable::Unit::epochs
                              ? static_cast<double>(w.train_samples)
                              : 1.0;
  const auto in_samples = [&](double mean, double stdev, std::string method) {
    return ConvergenceEstimate{mean * per_unit, stdev * per_unit, std::move(method)};
  };
  const auto lerp = [&](const ConvergencePoint& a, const ConvergencePoint& b, std::string method) {
    const double t = static_cast<double>(global_batch - a.global_batch) /
                     static_cast<double>(b.global_batch - a.global_batch);
    return in_samples(a.mean + (b.mean - a.mean) * t, a.stdev + (b.stdev - a.stdev) * t, std::move(method));
  };

  if (global_batch <= pts.front().global_batch) {
    const auto& p = pts.front();
    return in_samples(p.mean, p.stdev, global_batch == p.global_batch ? "rcp" : "below_table");
  }
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (global_batch == pts[i].global_batch) return in_samples(pts[i].mean, pts[i].stdev, "rcp");
    if (global_batch < pts[i].global_batch) return lerp(pts[i - 1], pts[i], "interpolated");
  }
  // Beyond the table: continue the last segment (convergence keeps degrading with batch size).
  if (pts.size() == 1) return in_samples(pts[0].mean, pts[0].stdev, "extrapolated");
  return lerp(pts[pts.size() - 2], pts.back(), "extrapolated");
}

}  // namespace sp::models
