#include "models/step/stragglers.hpp"

#include <cmath>
#include <map>

#include "sim/core/det_math.hpp"

namespace sp::models {

namespace {

constexpr double kSqrt2Pi = 2.50662827463100050242;

// erfc by the continued fraction (|x| > 2) or the series of erf (|x| <= 2), with our exp.
double erfc_det(double x) {
  if (x < 0) return 2.0 - erfc_det(-x);
  if (x < 2.0) {
    // erf x = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1))
    double term = x, sum = x;
    for (int n = 1; n < 60; ++n) {
      term *= -x * x / n;
      sum += term / (2 * n + 1);
    }
    return 1.0 - 1.1283791670955126 * sum;
  }
  // Lentz's continued fraction: erfc x = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...))))
  double f = x, cc = x, dd = 0;
  for (int n = 1; n < 200; ++n) {
    const double an = n * 0.5;
    dd = x + an * dd;
    dd = 1.0 / dd;
    cc = x + an / cc;
    const double delta = cc * dd;
    f *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return det::exp(-x * x) / (1.7724538509055160 * f);
}

}  // namespace

double normal_cdf(double x) { return 0.5 * erfc_det(-x / 1.4142135623730951); }

double normal_pdf(double x) { return det::exp(-0.5 * x * x) / kSqrt2Pi; }

MaxMoments max_of_normals(int n) {
  if (n <= 1) return {0.0, n == 1 ? 1.0 : 0.0};
  // Pure in n and asked for again and again (every step of every point): each thread remembers
  // what it computed, so no state is shared between threads (sweeps, calibration's folds) and
  // the value never depends on which thread asked first.
  thread_local std::map<int, MaxMoments> memo;
  if (auto it = memo.find(n); it != memo.end()) return it->second;
  // E[g(M)] = integral of g(x) n phi(x) Phi(x)^(n-1) dx, a smooth integrand: Simpson's rule
  // from -8 (where Phi^(n-1) has vanished) to well past the bulk of the maximum.
  constexpr int kIntervals = 4000;
  const double lo = -8.0, hi = 8.0 + std::sqrt(2.0 * det::log(static_cast<double>(n)));
  const double h = (hi - lo) / kIntervals;
  double s1 = 0, s2 = 0, wsum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double x = lo + i * h;
    const double cdf = normal_cdf(x);
    const double pdf = normal_pdf(x);
    const double density = cdf > 0 ? n * pdf * det::exp((n - 1) * det::log(cdf)) : 0.0;
    const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    s1 += w * density * x;
    s2 += w * density * x * x;
    wsum += w * density;
  }
  const double mean = s1 / wsum;
  const MaxMoments m{mean, s2 / wsum - mean * mean};
  memo.emplace(n, m);
  return m;
}

double expected_slowest_pace(const std::vector<RankGroup>& groups, double sigma) {
  long long n = 0;
  for (const RankGroup& g : groups) n += g.ranks;
  if (n <= 1 || !(sigma > 0)) return 1.0;
  // Below 1 - 8 sigma the slowest group alone is under its bound with probability 1 - 1e-15 per
  // rank; above 1 + sigma (8 + sqrt(2 ln n)) no rank of any group reaches (relative <= 1).
  const double lo = 1.0 - 8.0 * sigma;
  const double hi = 1.0 + sigma * (8.0 + std::sqrt(2.0 * det::log(static_cast<double>(n))));
  // The maximum's density is about sigma / sqrt(2 ln n) wide: 1,000 intervals over the ~20 sigma
  // range put a dozen points across it, and Simpson's error is below 1e-9 of the pace.
  constexpr int kIntervals = 1000;
  const double h = (hi - lo) / kIntervals;
  double integral = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double y = lo + i * h;
    double log_cdf = 0;
    for (const RankGroup& g : groups) {
      const double x = (y / g.relative - 1.0) / sigma;
      // Ten standard deviations below y: Phi^ranks = 1 - ranks x 7.6e-24, nothing at double precision
      // (a pipeline's shorter stages over most of the range; the costly erfc is skipped).
      if (x > 10.0) continue;
      const double c = normal_cdf(x);
      if (!(c > 0)) {
        log_cdf = -1e300;
        break;
      }
      log_cdf += static_cast<double>(g.ranks) * det::log(c);
    }
    const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    integral += w * (1.0 - det::exp(log_cdf));
  }
  return lo + integral * h / 3.0;
}

}  // namespace sp::models
