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
/// earlier on average (the interval its reference runs evaluated at: the rules' for their batch,
/// or the point's `evaluated_every` where they evaluated more often, as BERT's did); it is
/// interpolated between the pruned points and observed again at this batch's interval:
///   E[observed] = sum_k max(F, k I) P((k-1) I < S <= k I),  S ~ N(continuous mean, stdev)
/// which gives back the table at its own points where the reference evaluated at the rules'
/// interval, rises above the linear interpolation between them where a batch's interval is coarse
/// (RetinaNet's epochs, Stable Diffusion's 512k images), and above the table itself where the
/// reference evaluated far more often than a submission may (BERT: 3.2 % at GBS 4,608).
/// F: no run stops before the first evaluation the rules let it run (first_evaluation_samples:
/// Llama2-70B LoRA skips FLOOR(0.125 x GBS + 2)), however early it converges: the k I below it
/// are all observed there.
struct ObservedConvergence {
  double continuous_mean = 0;  // samples
  double stdev = 0;            // samples
  double interval = 0;         // samples between evaluations at this batch
  double first = 0;            // samples at the first evaluation the rules let a run perform
  double expected = 0;         // E[samples trained], a multiple of interval on every run
  double variance = 0;         // of one run's samples trained (samples^2), the grid's steps included
};

ObservedConvergence observed_convergence(const Workload& w, std::int64_t global_batch);

/// MLPerf's RCP normalisation (mlperf_logging's rcp_checker): a result whose runs converge, on
/// the olympic mean of their samples, in fewer samples than the RCP mean at its batch
/// (samples_to_converge) has its time scaled up by RCP mean / that mean; a slower one keeps its
/// time. So the score stands for E[max(mean of runs, RCP mean)] samples, never fewer than the
/// runs train. The mean of `runs` observed runs is taken as normal with the spread of a plain mean
/// (the olympic trimming of one run each side adds 5 % of variance at 10 normal runs, 14 % at 5).
struct ScoredConvergence {
  double trained = 0;   // E[samples a run trains] (ObservedConvergence::expected)
  double rcp_mean = 0;  // what the checker compares with
  double scored = 0;    // E[max(mean of the runs, rcp_mean)]
  /// E[the score] over E[a run's time], for a time proportional to the samples trained.
  double normalisation() const { return trained > 0 ? scored / trained : 1.0; }
};

ScoredConvergence scored_convergence(const Workload& w, std::int64_t global_batch, int runs);
/// The same from the observed convergence and the RCP mean at the batch, where both are at hand.
ScoredConvergence scored_convergence(const ObservedConvergence& seen, double rcp_mean, int runs);

/// E[max(X, c)] for X normal with this mean and standard deviation.
double expected_max_with(double mean, double sd, double c);

/// The first evaluation at or after `samples`: ceil(samples / interval) x interval, and not before
/// `first`, the first evaluation the rules let a run perform (at least one interval).
double observe(double samples, double interval, double first);

}  // namespace sp::models
