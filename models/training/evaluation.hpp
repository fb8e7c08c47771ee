// Evaluation inside the timed region (MLPerf rules, models/workloads/*.yaml `evaluation`):
// how many evaluations a run performs before it converges, and what each costs (a forward pass
// over the evaluation set spread over the accelerators, plus host-side work shared by the nodes).
#pragma once

#include <cstdint>

#include "models/compute/compute_model.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

/// Training samples between two evaluations at global batch `gbs`.
double evaluation_interval_samples(const Workload& w, std::int64_t gbs);

struct EvaluationCost {
  double evaluations = 0;  // expected count (convergence falls on an evaluation)
  Duration each;
  Duration total;
};

EvaluationCost evaluation_cost(const Workload& w, const ComputeModel& compute, int accelerators,
                               int nodes, double per_accelerator_batch, double samples_to_converge,
                               std::int64_t gbs);

}  // namespace sp::models
