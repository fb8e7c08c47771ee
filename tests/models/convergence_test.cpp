#include <gtest/gtest.h>

#include "models/training/convergence.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

using testing::shipped_workload;

// Expected values: column rcp_mean_to_converge of calibration/data/mlperf/results_v4.1.csv, which
// re-implements mlperf_logging's rcp_checker (README "Independent RCP cross-check").
TEST(Convergence, MatchesTheRcpCheckerOnV41Submissions) {
  const Workload bert = shipped_workload("bert");
  EXPECT_NEAR(samples_to_converge(bert, 768).mean_samples, 2443933.538, 1e-3);    // interpolated 448..4608
  EXPECT_NEAR(samples_to_converge(bert, 576).mean_samples, 2426226.215, 1e-3);
  EXPECT_NEAR(samples_to_converge(bert, 3072).mean_samples, 2656421.415, 1e-3);   // 3072 is listed but not pruned
  EXPECT_NEAR(samples_to_converge(bert, 13888).mean_samples, 4860355.556, 1e-3);
  EXPECT_NEAR(samples_to_converge(bert, 6912).mean_samples, 3601920.0, 1e-3);     // listed and pruned
  EXPECT_EQ(samples_to_converge(bert, 6912).method, "rcp");
  EXPECT_EQ(samples_to_converge(bert, 768).method, "interpolated");
  // Below the smallest pruned batch the checker compares with that point.
  EXPECT_NEAR(samples_to_converge(bert, 66).mean_samples, 2414421.333, 1e-3);
  EXPECT_EQ(samples_to_converge(bert, 66).method, "below_table");

  const Workload llama = shipped_workload("llama2_70b_lora");
  EXPECT_NEAR(samples_to_converge(llama, 64).mean_samples, 7131.429, 1e-3);
  EXPECT_NEAR(samples_to_converge(llama, 8).mean_samples, 3178.667, 1e-3);

  const Workload sd = shipped_workload("stable_diffusion");
  EXPECT_NEAR(samples_to_converge(sd, 512).mean_samples, 2311757.576, 1e-3);

  // RetinaNet's table is in epochs of 1,170,301 images.
  const Workload retina = shipped_workload("retinanet");
  EXPECT_NEAR(samples_to_converge(retina, 512).mean_samples / 1170301.0, 4.492, 5e-4);
  EXPECT_NEAR(samples_to_converge(retina, 2528).mean_samples / 1170301.0, 8.571, 5e-4);
  EXPECT_DOUBLE_EQ(samples_to_converge(retina, 256).mean_samples, 4.0 * 1170301);
}

TEST(Convergence, StdevIsInterpolatedLikeTheMean) {
  // bert 448 -> 197,392.4765; 4608 -> 130,963.7053; at 2528 (half way) the mean of the two.
  const Workload bert = shipped_workload("bert");
  EXPECT_NEAR(samples_to_converge(bert, 2528).stdev_samples, (197392.4765 + 130963.7053) / 2, 1e-6);
}

TEST(Convergence, BeyondTheTableTheLastSegmentContinues) {
  // bert pruned 13,056 -> 4,645,333.3333 and 16,384 -> 5,505,422.2222: slope 258.4402 per sample.
  const Workload bert = shipped_workload("bert");
  const double slope = (5505422.2222 - 4645333.3333) / (16384 - 13056);
  EXPECT_NEAR(samples_to_converge(bert, 20000).mean_samples, 5505422.2222 + slope * (20000 - 16384), 1e-3);
  EXPECT_EQ(samples_to_converge(bert, 20000).method, "extrapolated");
}

}  // namespace sp::models
