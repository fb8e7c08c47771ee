// The step's lower bound (step_lower_bound), which the layout search prunes with: hand-worked
// pipelines where it is tight, and the simulated step never below it on real layouts.
#include <gtest/gtest.h>

#include "models/step/step_graph.hpp"
#include "models/step/step_model.hpp"
#include "models/step/stragglers.hpp"
#include "models/training/time_to_train.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

namespace {

double ms(Duration d) { return to_seconds(d) * 1e3; }

}  // namespace

TEST(StepBound, APipelinesBoundIsItsFillTheLastStagesWorkAndItsDrain) {
  // Two stages, two micro-batches of one sample. 1F1B: parts 0 and 1 hold four layers each
  // (f = 4 ms, b = 8 ms a micro-batch). The last stage starts after part 0's forward (4 ms), works
  // m (f + b) = 24 ms, and its last backward is followed by part 0's (8 ms): 36 ms, the
  // (m + p - 1)(f + b) of the simulated step; the busiest stage alone gives only 24.
  const Platform p = testing::simple_platform();
  Workload w = testing::eight_layer_workload();
  ParallelSpec spec;
  spec.pipeline = 2;
  spec.micro_batch = 1;
  const ParallelLayout plain = testing::layout(p, 2, 2, spec);
  EXPECT_NEAR(ms(step_compute_bound(w, p, plain)), 36, 1e-9);
  EXPECT_NEAR(ms(simulate_step(w, p, plain, 2).step), 36, 0.1);
  // Interleaved, v = 2: four parts of two layers, part 0 on stage 0 (f = 2, b = 4 ms): the fill
  // and drain shrink v-fold, 2 + 24 + 4 = 30 ms.
  spec.virtual_stages = 2;
  const ParallelLayout inter = testing::layout(p, 2, 2, spec);
  EXPECT_NEAR(ms(step_compute_bound(w, p, inter)), 30, 1e-9);
  EXPECT_NEAR(ms(simulate_step(w, p, inter, 2).step), 30, 0.1);
  // Full recompute runs each forward again before its backward: b = 8 + 4 = 12 ms a part in
  // 1F1B, 4 + 2 x 16 + 12 = 48 ms.
  spec.virtual_stages = 1;
  spec.recompute = Recompute::full;
  const ParallelLayout full = testing::layout(p, 2, 2, spec);
  EXPECT_NEAR(ms(step_compute_bound(w, p, full)), 48, 1e-9);
  EXPECT_NEAR(ms(simulate_step(w, p, full, 2).step), 48, 0.1);
  // Without a pipeline, the work of the micro-batches alone: 2 x (8 + 16) = 48 ms on one GPU.
  spec.pipeline = 1;
  spec.recompute.reset();
  EXPECT_NEAR(ms(step_compute_bound(w, p, testing::layout(p, 1, 2, spec))), 48, 1e-9);
  // A stem without a backward costs its stage only its forward: the frozen two-layer workload
  // with its first layer's backward pass removed, 2 ms forward + 2 ms backward.
  Workload stem = testing::two_layer_workload(0, 1);
  stem.layers[0].backward_pass = false;
  EXPECT_NEAR(ms(step_compute_bound(stem, p, testing::layout(p, 1, 1, spec))), 4, 1e-9);
}

TEST(StepBound, TheBoundPaysTheSlowestOfTheLongestStagesRanksAndTheHost) {
  // The two-layer workload, both layers trained (6 ms a sample), over 2 ranks of DP with a rank
  // speed spread sigma = 0.1: every compute op is longer by sigma E[max of 2 normals] =
  // 0.1 / sqrt(pi) = 5.642 %, so the bound is 6 x 1.05642 = 6.3385 ms, plus 1 ms of host time.
  // With PP2 of 2 ranks the longest stage has one rank: no straggler in the bound.
  Platform p = testing::simple_platform();
  p.gpu_speed_spread = 0.1;
  Workload w = testing::two_layer_workload(1, 1);
  w.host_per_step = milliseconds(1);
  const ParallelLayout dp = testing::layout(p, 2, 2);
  EXPECT_NEAR(max_of_normals(2).mean, 1 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(ms(step_lower_bound(w, p, dp, 2)), 6 * (1 + 0.1 / std::sqrt(M_PI)) + 1, 1e-6);
  EXPECT_GE(simulate_step(w, p, dp, 2).step, step_lower_bound(w, p, dp, 2));
  w.layers[0].pipeline_boundary = w.layers[1].pipeline_boundary = Bytes(1);
  ParallelSpec spec;
  spec.pipeline = 2;
  const ParallelLayout pp = testing::layout(p, 2, 1, spec);
  // Part 0 holds the first layer (1 + 2 ms), part 1 the second: 1 + 3 + 2 = 6 ms, and the host.
  EXPECT_NEAR(ms(step_lower_bound(w, p, pp, 2)), 7, 1e-6);
}

TEST(StepBound, TheSimulatedStepIsNeverBelowItsBound) {
  // The bounds only prune if they are ones: Llama2-70B pre-training on DGX H100s under layouts
  // with TP, CP, pipelines, interleaving, recompute and many micro-batches (extrapolated past 64),
  // stragglers on (the platform's own spread). The graph's bound (its ops uncontended) is at
  // least the compute bound, and at the flow fidelity leaves communication out.
  const Platform p = testing::shipped_platform("dgx_h100");
  const Workload w = testing::shipped_workload("llama2_70b_pretrain");
  struct Case {
    int tp, cp, pp, v, mb, n;
    std::int64_t gbs;
    Recompute recompute;
  };
  for (const Case& c : {Case{8, 1, 4, 1, 1, 64, 32, Recompute::selective}, Case{8, 1, 4, 5, 1, 128, 64, Recompute::full},
                        Case{4, 2, 8, 2, 1, 256, 1024, Recompute::selective}, Case{8, 1, 1, 1, 1, 1024, 1024, Recompute::full}}) {
    ParallelSpec spec;
    spec.tensor = c.tp;
    spec.context = c.cp;
    spec.pipeline = c.pp;
    if (c.v > 1) spec.virtual_stages = c.v;
    spec.micro_batch = c.mb;
    spec.recompute = c.recompute;
    const ParallelLayout l = testing::layout(p, c.n, c.gbs, spec);
    const Duration bound = step_lower_bound(w, p, l, c.n);
    const Duration graph = step_graph_lower_bound(w, p, l, c.n, Fidelity::analytic);
    const Duration step = simulate_step(w, p, l, c.n).step;
    EXPECT_GT(bound, scale(step, 0.5)) << l.describe();  // a bound that prunes, not zero
    EXPECT_LE(bound, graph) << l.describe();
    EXPECT_LE(graph, step) << l.describe();
    EXPECT_LE(step_graph_lower_bound(w, p, l, c.n, Fidelity::flow), simulate_step(w, p, l, c.n, Fidelity::flow).step)
        << l.describe();
  }
}

TEST(StepBound, EveryLayoutSpendsTheEvaluationsFixedCostsAtLeast) {
  // What the search adds to a candidate's bound: each evaluation's overhead and host work
  // (Llama2-70B LoRA's file: 1 s of overhead; its host work shared by the nodes), times the
  // evaluations, which the batch and convergence alone set. The evaluations' total of any layout
  // (their forwards, batch overheads, set-up and scoring added) is no less.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const EvaluationCosts& k = w.evaluation_costs;
  ASSERT_GT(k.overhead, Duration::zero());
  double evaluations = -1;
  for (const auto& [tp, cp] : {std::pair{4, 2}, std::pair{8, 1}, std::pair{2, 4}}) {
    ParallelSpec spec = w.parallelism.for_accelerators(256);
    spec.fix_sizes({tp, cp, 1});
    const TrainingEstimate e = estimate_training(w, p, 256, 32, spec);
    ASSERT_TRUE(e.ok()) << e.message;
    if (evaluations < 0) evaluations = e.evaluation.evaluations;
    EXPECT_EQ(e.evaluation.evaluations, evaluations) << e.layout.describe();  // the same for every layout
    // The file's 1 s of overhead and its host work over the 32 nodes.
    EXPECT_EQ(evaluation_fixed_cost(w, e.nodes), seconds(1) + k.host_work / 32);
    const Duration floor = scale(evaluation_fixed_cost(w, e.nodes), e.evaluation.evaluations);
    EXPECT_GT(floor, Duration::zero());
    EXPECT_GE(e.evaluation.total, floor) << e.layout.describe();
  }
}

}  // namespace sp::models
