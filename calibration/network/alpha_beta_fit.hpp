// Piecewise alpha-beta fits of measured collective times, per network tier. Inside one regime
// (in-cache, out-of-cache, a protocol switch) a collective over p ranks costs
//   t = c_alpha(op, p) x alpha + c_beta(op, p) x n / beta
// with the coefficients of the model's own ring cost terms (2(p-1) and 2(p-1)/p for an
// all-reduce), so a platform carrying the fitted segments reproduces what was measured. The
// message-size breakpoints are chosen by the fit: for each number of segments the split with
// the least squared relative error (dynamic programming over the sorted sizes), then the fewest
// segments that put every point within a tolerance (10 %), or, when no number does, the number
// with the least Bayesian information criterion. Weighted least squares (weights 1/t^2, i.e.
// relative errors) with Eigen. In a bandwidth-bound regime alpha is below the noise and its
// estimate may fall either side of zero: an estimate less than two standard errors below zero
// is reported as unresolved and the segment refitted with alpha = 0 (beta alone); one further
// below, or a beta that is not positive, makes the segment no solution, and if no split avoids
// such segments the fit fails with a message. No value is clamped silently.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/network/kinds.hpp"

namespace sp::calibration {

struct FitPoint {
  models::CollectiveOp op = models::CollectiveOp::all_reduce;
  bool point_to_point = false;  // ping-pong: one step, t = alpha + n / beta
  int ranks = 2;
  double bytes = 0;
  double time_s = 0;
};

/// t = c.first x alpha + c.second x n / beta for `p` on one tier under the model's ring.
std::pair<double, double> alpha_beta_coefficients(const FitPoint& p);

struct AlphaBetaSegment {
  double from_bytes = 0, to_bytes = 0;  // the sizes measured in this regime (first and last)
  double alpha_s = 0;                   // per algorithm step
  double beta_bytes_per_s = 0;
  int points = 0;
  bool alpha_resolved = true;           // false: alpha's estimate was within noise of zero
};

struct AlphaBetaFit {
  bool ok = false;
  std::string message;                  // why not, when !ok
  std::vector<AlphaBetaSegment> segments;
  std::vector<double> predicted_s;      // per input point, in input order
  std::vector<double> relative_error;   // predicted / measured - 1
  double r_squared = 0;                 // of the relative residuals (weights 1/t^2)
  double max_abs_relative_error = 0;
};

struct AlphaBetaOptions {
  int max_segments = 8;
  double tolerance = 0.10;        // largest relative error a split must reach to stop adding segments
  // Distinct message sizes per segment. One is allowed: where a cache spills, time more than
  // doubles from one size to the next, which no line with alpha >= 0 follows; such a size is a
  // regime of its own (a bandwidth, alpha unresolved), kept only when the tolerance needs it.
  int min_sizes_per_segment = 1;
  int segments = 0;               // > 0: exactly this many (no information criterion)
};

AlphaBetaFit fit_alpha_beta(const std::vector<FitPoint>& points, const AlphaBetaOptions& options = {});

}  // namespace sp::calibration
