// Stragglers: a synchronous step waits for the slowest of N ranks. Each rank's compute in a step
// is jittered by a relative normal noise of standard deviation sigma (seeded); the step pays
// sigma x compute x M_N, where M_N is the maximum of N standard normal draws. M_N is never drawn
// as N numbers: it is sampled from its own distribution (order statistics: the maximum of N
// i.i.d. draws is F^-1(U^(1/N))), and its mean and variance come from quadrature over U.
#pragma once

#include "sim/core/rng.hpp"

namespace sp::models {

/// The standard normal quantile Phi^-1(p), 0 < p < 1 (Acklam's rational approximation refined by
/// one Halley step: about 1e-15 relative error; only + - * / sqrt and our own log and exp).
double normal_quantile(double p);
/// The standard normal CDF (via our own erfc; about 1e-15 absolute error).
double normal_cdf(double x);

struct MaxMoments {
  double mean = 0;      // E[M_N]
  double variance = 0;  // Var[M_N]
};

/// Moments of the maximum of n standard normal draws (0 for n = 1: one rank waits for nobody).
MaxMoments max_of_normals(int n);

/// One draw of the maximum of n standard normals, by inversion: Phi^-1(U^(1/n)).
double sample_max_of_normals(RngStream& rng, int n);

}  // namespace sp::models
