// Time to train, as MLPerf scores it (run_start to run_stop, evaluations included):
//   time_to_train = steps x step_time + evaluations x evaluation_time,  steps = samples / GBS
// with the samples to converge at this global batch from the RCP table.
#pragma once

#include <cstdint>

#include "models/network/platform.hpp"
#include "models/training/convergence.hpp"
#include "models/training/evaluation.hpp"
#include "models/training/step_model.hpp"
#include "models/workloads/workload.hpp"

namespace sp::models {

struct TrainingEstimate {
  int accelerators = 0;
  int nodes = 0;
  std::int64_t global_batch = 0;
  double per_accelerator_batch = 0;
  double compute_efficiency = 0;  // achieved fraction of peak during forward and backward
  StepResult step;
  ConvergenceEstimate convergence;
  double steps = 0;
  EvaluationCost evaluation;
  Duration time_to_train;
};

TrainingEstimate estimate_training(const Workload& workload, const Platform& platform, int accelerators,
                                   std::int64_t global_batch, Fidelity fidelity = Fidelity::analytic);

}  // namespace sp::models
