#include <gtest/gtest.h>

#include "models/training/evaluation.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

using testing::shipped_workload;

TEST(Evaluation, IntervalsFollowTheMlperfRules) {
  // BERT: FLOOR(0.05 x (230.23 x 768 + 3,000,000), 25,000) = FLOOR(158,840.8, 25,000) = 150,000
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("bert"), 768), 150000);
  // at 13,888: 0.05 x 6,197,434.2 = 309,871.7 -> 300,000
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("bert"), 13888), 300000);
  // Llama: every 384 samples, rounded up to whole steps: 384 at GBS 8, CEIL(384/128) x 128 = 384,
  // CEIL(384/256) x 256 = 512 at GBS 256.
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("llama2_70b_lora"), 8), 384);
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("llama2_70b_lora"), 256), 512);
  // RetinaNet: every epoch.
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("retinanet"), 256), 1170301);
}

TEST(Evaluation, CountAndCostByHand) {
  // Test workload: forward 2 TFLOP/sample -> 2 ms per sample at 1 PFLOP/s, efficiency 1.
  // 1,000 evaluation samples on 8 accelerators: 125 each -> 250 ms, plus host time 1 s / 2 nodes.
  // Every 100 samples; converging at 1,050 samples: 10.5 evaluations minus FLOOR(0.5 x 2 + 1) = 2.
  Workload w = testing::two_layer_workload(0, 1);
  w.evaluation.timed = true;
  w.evaluation.samples = 1000;
  w.evaluation.interval_samples = 100;
  w.evaluation.skip_per_global_batch = 0.5;
  w.evaluation.skip_count = 1;
  w.evaluation.host_time = seconds(1.0);
  const ComputeModel compute{FlopsPerSecond(1e15), 1.0, 0.0};
  const EvaluationCost c = evaluation_cost(w, compute, 8, 2, 4.0, 1050, 2);
  EXPECT_DOUBLE_EQ(c.evaluations, 8.5);
  EXPECT_EQ(c.each.ps(), milliseconds(750).ps());
  EXPECT_EQ(c.total.ps(), seconds(8.5 * 0.75).ps());
}

TEST(Evaluation, UntimedEvaluationCostsNothing) {
  const Workload sd = shipped_workload("stable_diffusion");
  const ComputeModel compute{FlopsPerSecond(1e15), 0.5, 1.0};
  const EvaluationCost c = evaluation_cost(sd, compute, 8, 1, 32, 2e6, 256);
  EXPECT_EQ(c.evaluations, 0);
  EXPECT_EQ(c.total.ps(), 0);
}

}  // namespace sp::models
