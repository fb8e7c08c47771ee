#include "models/training/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/training/evaluation.hpp"
#include "models/step/stragglers.hpp"

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

double observe(double samples, double interval, double first) {
  if (!(interval > 0)) return std::max(samples, first);
  return std::max(first, std::max(1.0, std::ceil(samples / interval - 1e-9)) * interval);
}

ObservedConvergence observed_convergence(const Workload& w, std::int64_t gbs) {
  // The same interpolation as the checker, on the continuous points under the observed ones.
  Workload continuous = w;
  const double per_unit = w.convergence.unit == ConvergenceTable::Unit::epochs ? static_cast<double>(w.train_samples) : 1.0;
  for (ConvergencePoint& p : continuous.convergence.points) {
    // The reference runs were observed on their own grid: the rules' interval for most RCPs, a
    // far finer one for BERT's (every 23-50 k samples where the rules evaluate every 150-300 k).
    const double grid = p.evaluated_every > 0 ? p.evaluated_every : evaluation_interval_samples(w, p.global_batch) / per_unit;
    p.mean -= grid / 2;
  }
  const ConvergenceEstimate c = samples_to_converge(continuous, gbs);
  ObservedConvergence o;
  o.continuous_mean = c.mean_samples;
  o.stdev = c.stdev_samples;
  o.interval = evaluation_interval_samples(w, gbs);
  o.first = first_evaluation_samples(w, gbs);
  if (!(o.stdev > 0)) {
    o.expected = observe(o.continuous_mean, o.interval, o.first);
    return o;
  }
  // E[(samples - continuous mean)^2], about the continuous mean so that the variance is not the
  // difference of two numbers of 1e13 (BERT's samples squared).
  double second = 0;
  const double lo = std::floor((o.continuous_mean - 8 * o.stdev) / o.interval);
  const double hi = std::ceil((o.continuous_mean + 8 * o.stdev) / o.interval);
  double below = normal_cdf((lo * o.interval - o.continuous_mean) / o.stdev);
  const double first = observe(lo * o.interval, o.interval, o.first);
  o.expected = below * first;  // the mass at the first evaluation
  second = below * (first - o.continuous_mean) * (first - o.continuous_mean);
  for (double k = lo + 1; k <= hi; ++k) {
    const double upto = normal_cdf((k * o.interval - o.continuous_mean) / o.stdev);
    const double at = observe(k * o.interval, o.interval, o.first);
    o.expected += at * (upto - below);
    second += (at - o.continuous_mean) * (at - o.continuous_mean) * (upto - below);
    below = upto;
  }
  const double offset = o.expected - o.continuous_mean;
  o.variance = std::max(0.0, second - offset * offset);
  return o;
}

double expected_max_with(double mean, double sd, double c) {
  if (!(sd > 0)) return std::max(mean, c);
  // E[max(X, c)] = c + E[(X - c)+] = c + (m - c) Phi(d) + s phi(d), d = (m - c) / s.
  const double d = (mean - c) / sd;
  return c + (mean - c) * normal_cdf(d) + sd * normal_pdf(d);
}

ScoredConvergence scored_convergence(const ObservedConvergence& seen, double rcp_mean, int runs) {
  ScoredConvergence s;
  s.trained = seen.expected;
  s.rcp_mean = rcp_mean;
  s.scored = expected_max_with(seen.expected, std::sqrt(seen.variance / std::max(1, runs)), rcp_mean);
  return s;
}

ScoredConvergence scored_convergence(const Workload& w, std::int64_t gbs, int runs) {
  return scored_convergence(observed_convergence(w, gbs), samples_to_converge(w, gbs).mean_samples, runs);
}

}  // namespace sp::models
