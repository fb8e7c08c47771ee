// Samples to converge as a function of the global batch, from the MLPerf reference convergence
// points (RCPs), the way mlperf_logging's rcp_checker reads them: only the pruned points count; a
// listed batch takes its point, another batch interpolates mean and stdev linearly between its
// pruned neighbours, and a batch below the smallest pruned point is compared with that point.
#pragma once

#include <cstdint>
#include <string>

#include "models/workloads/workload.hpp"

namespace sp::models {

struct ConvergenceEstimate {
  double mean_samples = 0;   // expected samples to reach the quality target
  double stdev_samples = 0;  // run-to-run spread
  /// rcp | interpolated | below_table (smallest point used) | extrapolated (beyond the largest)
  std::string method;
};

ConvergenceEstimate samples_to_converge(const Workload& w, std::int64_t global_batch);

/// Where runs stop. Convergence is seen only at evaluations (or checkpoints), so a run trains on
/// to the first evaluation past the point where it has converged; the RCP tables hold such
/// observed values. Under each lies a continuous convergence point, half an evaluation interval
/// earlier on average; it is interpolated between the pruned points (each with its own batch's
/// interval) and observed again at this batch's interval:
///   E[observed] = sum_k k I P((k-1) I < S <= k I),  S ~ N(continuous mean, stdev)
/// which gives back the table at its own points and rises above the linear interpolation between
/// them where a batch's interval is coarse (RetinaNet's epochs, Stable Diffusion's 512k images).
struct ObservedConvergence {
  double continuous_mean = 0;  // samples
  double stdev = 0;            // samples
  double interval = 0;         // samples between evaluations at this batch
  double expected = 0;         // E[samples trained], a multiple of interval on every run
};

ObservedConvergence observed_convergence(const Workload& w, std::int64_t global_batch);

/// The first evaluation at or after `samples`: ceil(samples / interval) x interval (at least one).
double observe(double samples, double interval);

}  // namespace sp::models
