// log and exp written with + - * / only, so they give the same bits on every machine and C
// library (libm's log/exp may differ in the last bit between implementations, which would break
// byte-identical results across machines). Accuracy: within 2 ulp over the whole double range.
#pragma once

namespace sp::det {

/// Natural logarithm; x must be > 0 and finite (returns NaN otherwise).
double log(double x);
/// e^x; returns +inf above ~709.78 and 0 below ~-745.
double exp(double x);

}  // namespace sp::det
