// Evaluation inside the timed region (MLPerf rules, models/workloads/*.yaml `evaluation`):
// how many evaluations a run performs before it converges, and what each costs: the evaluation
// set split over the data-parallel replicas in whole micro-batches (so small sets do not shrink
// with N), forward passes only, plus an overhead per step of the evaluation loop, a fixed
// overhead and host-side work shared by the nodes; where scoring runs on a background worker,
// the last evaluation's scoring (and any backlog) before the run can stop; and a one-time set-up
// before the first evaluation.
#pragma once

#include <cstdint>

#include "models/step/step_graph.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

/// Training samples between two evaluations at global batch `gbs`.
double evaluation_interval_samples(const Workload& w, std::int64_t gbs);
/// Evaluations the rules let a run leave out at its start (Llama2-70B LoRA: FLOOR(0.125 x GBS + 2)).
double evaluations_skipped(const Workload& w, std::int64_t gbs);
/// Samples trained at the first evaluation a run performs, (skipped + 1) intervals: the earliest a
/// run can stop, since convergence is seen only there.
double first_evaluation_samples(const Workload& w, std::int64_t gbs);
/// Evaluations performed by a run that trained `samples` (stopping at an evaluation): the ones past
/// those skipped, so a run's count does not scale with its samples where the rules skip some.
double evaluations_performed(const Workload& w, std::int64_t gbs, double samples);

/// What each evaluation costs whatever the layout: the rule's overhead and the host work, shared
/// by the nodes (EvaluationCost::each holds it, with the forward and the batch overheads).
Duration evaluation_fixed_cost(const Workload& w, int nodes);

struct EvaluationCost {
  double evaluations = 0;  // expected count (convergence falls on an evaluation)
  Duration each;
  Duration forward;  // of `each`, the accelerators computing (the rest is waiting, overhead and host work)
  Duration waits;    // of `each`, the forward waiting for transfers, communication and an eager host
  std::int64_t batches = 0;  // steps of the evaluation loop, each costing the rule's batch_overhead
  Duration scoring;  // asynchronous scoring still running after the last evaluation (once per run)
  Duration first;    // the evaluation's one-time set-up before the first one (once per run)
  Duration total;    // evaluations x each + scoring + first
};

/// Asynchronous scoring's delay of a run's end: `scoring` per evaluation on one background
/// worker, evaluations `between` apart (training plus evaluation), `evaluations` of them.
Duration exposed_scoring(Duration scoring, Duration between, double evaluations);

/// `step`: one training step (the training between evaluations hides asynchronous scoring).
EvaluationCost evaluation_cost(const Workload& w, const ParallelLayout& layout, MicroBatchForward forward,
                               Duration step, int nodes, double samples_to_converge, std::int64_t gbs);

}  // namespace sp::models
