// Goodput of a training run: the share of its wall time that is training kept, once failures,
// checkpoints and restarts are counted. The run's failure-free time comes from the step model
// (TrainingEstimate::run_time); the reliability of the cluster (reliability.hpp) gives the job's
// failure rate and costs at its size; the checkpoint interval is the scenario's or the one that
// minimises the expected wall time (checkpoint_interval.hpp); Monte Carlo runs on the event
// engine (run_simulation.hpp) give the spread.
//   effective time to train = time to train / goodput,  goodput = run time / E[wall time]
#pragma once

#include <cstdint>
#include <string>

#include "models/goodput/reliability.hpp"
#include "models/goodput/run_simulation.hpp"
#include "models/training/time_to_train.hpp"

namespace sp::models {

struct GoodputEstimate {
  bool counted = false;      // false: failures off, or no time to train; goodput 1
  JobReliability job;
  double interval_s = 0;     // training between checkpoints (>= the run: none)
  bool interval_optimal = true;
  double expected_wall_s = 0;  // closed form (exact for synchronous checkpoints, else first order)
  double mean_wall_s = 0, p10_wall_s = 0, p50_wall_s = 0, p90_wall_s = 0;  // Monte Carlo
  double goodput = 1;
  // Per-run means over the replicates.
  double interruptions = 0, checkpoints = 0;
  double lost_s = 0, checkpoint_s = 0, restart_s = 0, wait_s = 0;
  // Time to train / goodput, in seconds: a run with failures may last past a Duration's ~106 days.
  double effective_s = 0, effective_p10_s = 0, effective_p50_s = 0, effective_p90_s = 0;
  std::string timeline;      // one replicate's run as Chrome trace JSON, when asked for
};

GoodputEstimate estimate_goodput(const Reliability& r, const TrainingEstimate& e, const Workload& w,
                                 const Platform& p, int samples, std::uint64_t seed, std::uint64_t point,
                                 bool timeline = false);

}  // namespace sp::models
