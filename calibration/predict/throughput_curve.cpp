#include "calibration/predict/throughput_curve.hpp"

#include <cmath>
#include <stdexcept>

namespace sp::calibration {

namespace {

// log of the time at p = 1: log(S (x + k) / G).
double log_shape(const CurvePoint& c, double k) {
  return std::log(c.samples_to_converge * (c.global_batch / c.accelerators + k) / c.global_batch);
}

// The sum of squared log errors at k with each kind's log p at its optimum, the mean over the
// kind's points of log shape - log time.
double loss(const std::vector<CurvePoint>& pts, double k, std::map<std::string, double>* log_p) {
  std::map<std::string, std::pair<double, int>> mean;
  for (const CurvePoint& c : pts) {
    auto& m = mean[c.kind];
    m.first += log_shape(c, k) - std::log(c.minutes);
    ++m.second;
  }
  double sum = 0;
  for (const CurvePoint& c : pts) {
    const auto& m = mean.at(c.kind);
    const double r = log_shape(c, k) - m.first / m.second - std::log(c.minutes);
    sum += r * r;
  }
  if (log_p) {
    for (const auto& [kind, m] : mean) (*log_p)[kind] = m.first / m.second;
  }
  return sum;
}

}  // namespace

double ThroughputCurve::shape(const CurvePoint& c) const { return std::exp(log_shape(c, k)); }

double ThroughputCurve::anchored(const CurvePoint& target, const CurvePoint& anchor) const {
  return anchor.minutes * shape(target) / shape(anchor);
}

ThroughputCurve fit_throughput_curve(const std::vector<CurvePoint>& pts) {
  if (pts.size() < 2) throw std::invalid_argument("a throughput curve needs at least two points");
  // The loss is smooth in u = log(1 + k): a coarse grid finds the basin, golden sections refine it.
  constexpr double kMaxU = 9.2104;  // log(1 + 10^4)
  constexpr int kGrid = 200;
  int best = 0;
  double best_loss = loss(pts, 0.0, nullptr);
  for (int i = 1; i <= kGrid; ++i) {
    const double l = loss(pts, std::expm1(kMaxU * i / kGrid), nullptr);
    if (l < best_loss) {
      best_loss = l;
      best = i;
    }
  }
  double lo = kMaxU * std::max(0, best - 1) / kGrid, hi = kMaxU * std::min(kGrid, best + 1) / kGrid;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 80; ++it) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (loss(pts, std::expm1(a), nullptr) < loss(pts, std::expm1(b), nullptr)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  ThroughputCurve c;
  c.k = std::expm1((lo + hi) / 2);
  std::map<std::string, double> log_p;
  loss(pts, c.k, &log_p);
  for (const auto& [kind, v] : log_p) c.p[kind] = std::exp(v);
  return c;
}

}  // namespace sp::calibration
