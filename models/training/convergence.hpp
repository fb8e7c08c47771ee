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

}  // namespace sp::models
