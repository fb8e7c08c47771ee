// Stragglers: a synchronous step waits for the slowest of N ranks. Each rank's compute in a step
// is jittered by a relative normal noise of standard deviation sigma (seeded); the step pays
// sigma x compute x M_N, where M_N is the maximum of N standard normal draws. M_N is never drawn
// as N numbers: its mean and variance come from quadrature over its density n phi Phi^(n-1), and
// a run of s steps (hundreds to thousands) pays the sum of s of them, drawn as a normal with s
// times those moments (central limit; time_to_train.cpp).
#pragma once

#include <vector>

namespace sp::models {

/// The standard normal CDF (via our own erfc; about 1e-15 absolute error).
double normal_cdf(double x);
/// The standard normal density, with our own exp (byte-identical results on every machine).
double normal_pdf(double x);

struct MaxMoments {
  double mean = 0;      // E[M_N]
  double variance = 0;  // Var[M_N]
};

/// Moments of the maximum of n standard normal draws (0 for n = 1: one rank waits for nobody).
MaxMoments max_of_normals(int n);

/// Ranks that share one compute time: `ranks` of them, each `relative` (<= 1) of the slowest's.
struct RankGroup {
  double relative = 1;
  long long ranks = 1;
};

/// E[max over every rank i of relative_i (1 + sigma X_i)], X_i independent standard normals: the
/// pace of a synchronous step whose ranks compute for different times (a pipeline's stages, its
/// last one longer by the LM head). A rank whose base time is short absorbs its own slowness: only
/// where it overtakes the longest does the step notice. All groups at 1: 1 + sigma E[M_n].
/// The CDF of the maximum is the product over groups of Phi((y / relative - 1) / sigma)^ranks;
/// the mean integrates its complement by Simpson's rule.
double expected_slowest_pace(const std::vector<RankGroup>& groups, double sigma);

}  // namespace sp::models
