#include "sim/core/det_math.hpp"

#include <cmath>
#include <limits>

namespace sp::det {

namespace {
// ln 2 split in a high part with trailing zero bits (exact when multiplied by small integers)
// and the remainder: the Cody-Waite trick keeps k*ln2 exact.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kSqrtHalf = 0.70710678118654752440;
}  // namespace

double log(double x) {
  if (!(x > 0.0) || x == std::numeric_limits<double>::infinity()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m * 2^e, m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;  // exact
    --e;
  }
  // m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| < 0.1716.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double poly = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) poly = 1.0 / k + s2 * poly;
  const double log_m = 2.0 * s * poly;
  return e * kLn2Hi + (log_m + e * kLn2Lo);
}

double exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.1332191019412) return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; e^x = 2^k e^r.
  const double k = std::nearbyint(x / (kLn2Hi + kLn2Lo));
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double poly = 1.0;
  for (int n = 17; n >= 1; --n) poly = 1.0 + r * poly / n;  // Horner form of the Taylor series
  return std::ldexp(poly, static_cast<int>(k));
}

}  // namespace sp::det
