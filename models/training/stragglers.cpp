#include "models/training/stragglers.hpp"

#include <cmath>
#include <map>
#include <mutex>

#include "sim/core/det_math.hpp"

namespace sp::models {

namespace {

// Acklam's coefficients for the central and tail regions.
constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                        1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                        6.680131188771972e+01,  -1.328068155288572e+01};
constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                        -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                        3.754408661907416e+00};
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

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) return p <= 0.0 ? -INFINITY : INFINITY;
  constexpr double lo = 0.02425;
  double x;
  if (p < lo) {
    const double q = std::sqrt(-2 * det::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - lo) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * det::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step on Phi(x) - p.
  const double e = normal_cdf(x) - p;
  const double u = e * kSqrt2Pi * det::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

MaxMoments max_of_normals(int n) {
  if (n <= 1) return {0.0, n == 1 ? 1.0 : 0.0};
  // Pure in n and asked for again and again (every step of every point): remember it.
  static std::mutex mutex;
  static std::map<int, MaxMoments> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(n); it != memo.end()) return it->second;
  }
  // E[g(M)] = integral of g(x) n phi(x) Phi(x)^(n-1) dx, a smooth integrand: Simpson's rule
  // from -8 (where Phi^(n-1) has vanished) to well past the bulk of the maximum.
  constexpr int kIntervals = 4000;
  const double lo = -8.0, hi = 8.0 + std::sqrt(2.0 * det::log(static_cast<double>(n)));
  const double h = (hi - lo) / kIntervals;
  double s1 = 0, s2 = 0, wsum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double x = lo + i * h;
    const double cdf = normal_cdf(x);
    const double pdf = det::exp(-0.5 * x * x) / kSqrt2Pi;
    const double density = cdf > 0 ? n * pdf * det::exp((n - 1) * det::log(cdf)) : 0.0;
    const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    s1 += w * density * x;
    s2 += w * density * x * x;
    wsum += w * density;
  }
  const double mean = s1 / wsum;
  const MaxMoments m{mean, s2 / wsum - mean * mean};
  std::lock_guard<std::mutex> lock(mutex);
  memo.emplace(n, m);
  return m;
}

double sample_max_of_normals(RngStream& rng, int n) {
  if (n <= 1) return rng.normal(0.0, 1.0);
  double u = rng.uniform01();
  while (u <= 0.0) u = rng.uniform01();
  return normal_quantile(det::exp(det::log(u) / n));
}

}  // namespace sp::models
