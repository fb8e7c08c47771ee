// Time to train, as MLPerf scores it: a run from run_start to run_stop, evaluations included,
//   run_time = steps x step_time + evaluations x evaluation_time,  steps = samples / GBS
//   time_to_train = run_time x rcp_normalisation
// with the samples to converge at this global batch from the RCP table, scaled up as MLPerf's
// RCP normalisation does for results that converge faster than the reference, for one layout of the
// job; a layout that does not fit in memory gets status out_of_memory and no time.
// Prediction intervals come from Monte Carlo replicates of the MLPerf score itself: each
// replicate is the olympic mean of the benchmark's runs, every run drawing its samples to
// converge from the RCP spread and its straggler delays from the maximum of N jittered ranks,
// scaled up where the runs' olympic mean of samples falls below the RCP mean,
// times the model's own error (log-normal, spread from calibration's held-out systems).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "models/training/convergence.hpp"
#include "models/training/evaluation.hpp"
#include "models/training/memory.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/step/step_model.hpp"
#include "models/workloads/workload.hpp"

namespace sp::models {

struct TrainingEstimate {
  int accelerators = 0;
  int nodes = 0;
  std::int64_t global_batch = 0;
  double per_accelerator_batch = 0;
  std::string status = "ok";  // ok | out_of_memory | invalid_layout
  std::string message;
  ParallelLayout layout;
  MemoryEstimate memory;
  StepResult step;
  ConvergenceEstimate convergence;
  double steps = 0;
  EvaluationCost evaluation;
  Duration run_time;            // E[one run's run_start to run_stop] (what energy integrates)
  double rcp_normalisation = 1;  // E[the score] / run_time: MLPerf's RCP scaling (ScoredConvergence)
  Duration time_to_train;       // E[the MLPerf score]: run_time x rcp_normalisation
  Duration p10, p50, p90;  // of the MLPerf score, from replicates (all equal when none)
  Duration run_p10, run_p90;  // of the replicates' run time, before the RCP scaling (energy)
  // How the layout was chosen (layout_search.hpp): declared | recipe | searched (empty: given to
  // estimate_training directly); the next fastest layout of other sizes or sharding, and how much
  // slower it trains (negative where the recipe was kept though that one was faster).
  std::string layout_basis;
  std::string runner_up;
  double runner_up_slower = 0;

  bool ok() const { return status == "ok"; }
};

TrainingEstimate estimate_training(const Workload& workload, const Platform& platform, int accelerators,
                                   std::int64_t global_batch, const ParallelSpec& parallel,
                                   Fidelity fidelity = Fidelity::analytic);

/// The time to train of a run of `e`'s job that converges at `samples` (an observed run rather
/// than the RCP mean): its steps and the evaluations up to that point.
Duration time_to_train_at(const TrainingEstimate& e, const Workload& workload, double samples);

/// The evaluations of a run of `e` that trains `samples`.
EvaluationCost evaluation_at(const TrainingEstimate& e, const Workload& workload, double samples);

/// Fills p10/p50/p90 from `samples` replicates drawn from streams of (seed, point, name).
void add_prediction_interval(TrainingEstimate& e, const Workload& workload, const Platform& platform, int samples,
                             std::uint64_t seed, std::uint64_t point);

/// The olympic mean MLPerf scores: drop the fastest and the slowest run, average the rest (a
/// plain mean for fewer than three runs).
double olympic_mean(std::vector<double> runs);

/// The software level's plausible range, as a factor on the calibrated one: a measurement further
/// from the model than this says the input (or the system) is not what the model describes.
inline constexpr double kSoftwareLevelMin = 0.2, kSoftwareLevelMax = 5.0;

/// The estimate at (workload, platform, ...) with the accelerator's software level (its
/// efficiency_scale) multiplied by `factor`: what an anchor's level is solved over.
TrainingEstimate estimate_at_level(const Workload& workload, Platform platform, int accelerators, std::int64_t global_batch,
                                   const ParallelSpec& parallel, double factor, Fidelity fidelity = Fidelity::analytic);

/// Where solve_software_level stopped: the factor on the accelerator's software level
/// (efficiency_scale) and log(time there / target).
struct LevelSolution {
  double factor = 1;
  double residual = 0;
  /// Met within 1e-6 in log, at a factor inside [lo, hi].
  bool met(double lo, double hi) const { return std::abs(residual) <= 1e-6 && factor >= lo && factor <= hi; }
};

/// The factor on the software level that makes `time_at(factor)` (a time the model gives at that
/// level: a step, a time to train) equal `target`: the secant method on log time against log
/// factor, along which time falls about as 1 / factor (less where communication, which no level
/// speeds, is a share of it). It stops at most a step (e) beyond [lo, hi], so that a target the
/// plausible range cannot meet says only on which side it lies. A time that is not positive and
/// finite at some factor (a layout that no longer fits) stops it with a NaN residual.
LevelSolution solve_software_level(const std::function<Duration(double)>& time_at, Duration target, double lo, double hi);

}  // namespace sp::models
