#include "models/goodput/checkpoint_interval.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/det_math.hpp"

namespace sp::models {

double expected_segment_s(double w, double r, double lambda) {
  if (!(lambda > 0)) return w;
  // expm1 by its series where lambda w is tiny (a short run on a reliable cluster), so that the
  // expectation does not lose every digit to 1 - 1; det::exp elsewhere for identical bits.
  const double x = lambda * w;
  const double grown = x < 1e-5 ? x * (1 + x / 2 * (1 + x / 3)) : det::exp(x) - 1;
  return det::exp(lambda * r) * grown / lambda;
}

double expected_run_s(double work, double tau, double cost, double r, double lambda) {
  if (!(work > 0)) return 0;
  const double segments = std::max(1.0, std::ceil(work / tau - 1e-9));
  const double last = work - (segments - 1) * tau;
  return (segments - 1) * expected_segment_s(tau + cost, r, lambda) + expected_segment_s(last, r, lambda);
}

double optimal_interval_s(double work, double cost, double r, double lambda, double min_tau) {
  if (!(work > 0)) return 0;
  if (!(lambda > 0)) return work;  // nothing fails: never checkpoint
  // f(k) for k segments of work / k: convex in k (the checkpoints' cost grows linearly, the
  // rework shrinks as 1/k), so a ternary search over the integers finds its minimum.
  const double k_max = std::max(1.0, std::floor(work / std::max(min_tau, 1e-9)));
  const auto f = [&](double k) { return expected_run_s(work, work / k, cost, r, lambda); };
  double lo = 1, hi = std::min(k_max, 1e12);
  while (hi - lo > 2) {
    const double m1 = std::floor(lo + (hi - lo) / 3), m2 = std::floor(hi - (hi - lo) / 3);
    if (f(m1) <= f(m2)) {
      hi = m2;
    } else {
      lo = m1 + 1;
    }
  }
  double best = lo;
  for (double k = lo + 1; k <= hi; ++k) best = f(k) < f(best) ? k : best;
  return work / best;
}

double young_interval_s(double cost, double mtbf) { return std::sqrt(2 * cost * mtbf); }

double daly_interval_s(double cost, double mtbf) {
  if (cost >= 2 * mtbf) return mtbf;
  const double x = cost / (2 * mtbf);
  return std::sqrt(2 * cost * mtbf) * (1 + std::sqrt(x) / 3 + x / 9) - cost;
}

}  // namespace sp::models
