#include <cmath>

#include <gtest/gtest.h>

#include "models/training/convergence.hpp"
#include "models/training/evaluation.hpp"
#include "models/training/time_to_train.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

using testing::shipped_workload;

// Expected values: column rcp_mean_to_converge of calibration/data/mlperf/results_v4.1.csv, which
// re-implements mlperf_logging's rcp_checker (calibration/README.md).
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

// Llama2-70B LoRA evaluates every 384 samples rounded up to whole global batches and skips the
// first FLOOR(0.125 x GBS + 2) evaluations (training_rules.adoc). The first evaluation a run
// performs, (skipped + 1) intervals, is where v4.1's logs show the first eval_start: 4 x 384 =
// 1,536 at GBS 8, 11 x 384 = 4,224 at GBS 64, 19 x 384 = 7,296 at GBS 128.
// At GBS 288 the interval is 2 x 288 = 576 and 38 are skipped: the first at 39 x 576 = 22,464
// samples, past the table's straight line (RCP points 4,032 at 16 and 11,264 at 128, each less
// half its interval of 384: continuous 3,840 and 11,072; at 288: 11,072 + 7,232 x 160 / 112 =
// 21,403.43, stdev 411.3463 + 433.4537 x 272 / 112 = 1,464.02). A run that has converged by then
// still trains to 22,464 and evaluates once: P = Phi((22,464 - 21,403.43) / 1,464.02) = 0.7656
// of the runs stop there, the rest at 40 x 576, 41 x 576, ...: E = 22,737.97 samples (summed by
// hand over the grid). Before, the grid started at one interval, and the expected run at GBS 288
// trained 21,691 samples and evaluated none.
TEST(Convergence, NoRunStopsBeforeTheFirstEvaluationTheRulesLetItPerform) {
  const Workload llama = shipped_workload("llama2_70b_lora");
  EXPECT_DOUBLE_EQ(first_evaluation_samples(llama, 8), 1536.0);
  EXPECT_DOUBLE_EQ(first_evaluation_samples(llama, 64), 4224.0);
  EXPECT_DOUBLE_EQ(first_evaluation_samples(llama, 128), 7296.0);
  EXPECT_DOUBLE_EQ(first_evaluation_samples(llama, 288), 22464.0);
  const ObservedConvergence seen = observed_convergence(llama, 288);
  EXPECT_NEAR(seen.continuous_mean, 21403.42857, 1e-3);
  EXPECT_NEAR(seen.stdev, 1464.01957, 1e-3);
  EXPECT_DOUBLE_EQ(seen.first, 22464.0);
  EXPECT_NEAR(seen.expected, 22737.972, 0.01);
  // The runs that stop at the first evaluation narrow the spread: summed over the same grid,
  // E[(X - 22,737.97)^2] = 359,473.9 samples^2 (2,171,001 with the grid from one interval).
  EXPECT_NEAR(seen.variance, 359473.9, 1.0);
  // Without spread the run stops at the first evaluation.
  Workload exact = llama;
  for (ConvergencePoint& p : exact.convergence.points) p.stdev = 0;
  EXPECT_DOUBLE_EQ(observed_convergence(exact, 288).expected, 22464.0);
  // Workloads without a skip rule evaluate first after one interval, as before.
  const Workload bert = shipped_workload("bert");
  EXPECT_DOUBLE_EQ(first_evaluation_samples(bert, 768), evaluation_interval_samples(bert, 768));
  EXPECT_DOUBLE_EQ(observe(10, 100, 100), 100.0);
  EXPECT_DOUBLE_EQ(observe(250, 100, 100), 300.0);
  EXPECT_DOUBLE_EQ(observe(250, 100, 500), 500.0);
}

// BERT's reference runs evaluated every 23,040 samples at GBS 4,608 (the smallest gap between two
// runs' values in rcps_bert.json), where the rules let a submission evaluate every FLOOR(0.05 x
// (230.23 x 4,608 + 3,000,000), 25,000) = 200,000. The point's mean 2,798,080 lies 11,520 above
// the continuous point (2,786,560, sd 130,963.71); a submission observes that every 200,000:
// E = sum_k k 200,000 P((k-1) 200,000 < S <= k 200,000) = 2,886,554.5 samples (summed by hand
// over the grid), 3.2 % above the table, as NVIDIA's runs at 4,608 trained 2,877,120 on average
// (the olympic mean of Eos_n8's logs). Taking the submission's interval for the reference's too
// would have given back the table's 2,798,081.
TEST(Convergence, BertsReferenceRunsWereObservedOnTheirOwnFinerGrid) {
  const Workload bert = shipped_workload("bert");
  const ObservedConvergence seen = observed_convergence(bert, 4608);
  EXPECT_DOUBLE_EQ(seen.interval, 200000.0);
  EXPECT_NEAR(seen.continuous_mean, 2786560.0, 1e-6);
  EXPECT_NEAR(seen.expected, 2886554.5, 0.5);
  Workload at_rules = bert;
  for (ConvergencePoint& p : at_rules.convergence.points) p.evaluated_every = 0;
  EXPECT_NEAR(observed_convergence(at_rules, 4608).expected, 2798080.8, 0.5);
}

// A run's evaluations are those past the skipped ones, not its samples in proportion: at GBS 8
// (every 384 samples, 3 skipped) a run stopping at 3,456 = 9 x 384 samples performed 6, one at
// 1,536 performed 1; at GBS 288 (every 576, 38 skipped) one at 22,464 = 39 x 576 performed 1.
TEST(Convergence, ARunPerformsTheEvaluationsPastTheSkippedOnes) {
  const Workload llama = shipped_workload("llama2_70b_lora");
  EXPECT_DOUBLE_EQ(evaluations_performed(llama, 8, 3456), 6.0);
  EXPECT_DOUBLE_EQ(evaluations_performed(llama, 8, 1536), 1.0);
  EXPECT_DOUBLE_EQ(evaluations_performed(llama, 288, 22464), 1.0);
  EXPECT_DOUBLE_EQ(evaluations_performed(llama, 8, 768), 0.0);  // never below zero
  // BERT skips none: at GBS 768 it evaluates every FLOOR(0.05 x (230.23 x 768 + 3,000,000), 25,000)
  // = FLOOR(158,841, 25,000) = 150,000 samples (the logs: 150,300), so 2,400,000 samples are 16.
  EXPECT_DOUBLE_EQ(evaluations_performed(shipped_workload("bert"), 768, 2400000), 16.0);
}

// So a large-batch run pays for one evaluation and its set-up, and trains the samples to it.
TEST(Convergence, ARunPastTheTableStillEvaluatesOnceAndPaysItsSetUp) {
  const Workload w = shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const TrainingEstimate e = estimate_training(w, p, 2304, 288, w.parallelism.for_accelerators(2304));
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_NEAR(e.convergence.mean_samples, 22737.972, 0.01);
  EXPECT_NEAR(e.evaluation.evaluations, 22737.972 / 576 - 38, 1e-4);  // 1.4757: at least one
  EXPECT_GT(to_seconds(e.evaluation.first), 0.0);
  const double run = to_seconds(e.step.step) * e.steps + to_seconds(e.evaluation.total);
  EXPECT_NEAR(to_seconds(e.run_time), run, 1e-9);
}

TEST(RcpNormalisation, ExpectedMaximumOfANormalAndAFloor) {
  // E[max(X, c)] = c + (m - c) Phi(d) + s phi(d), d = (m - c) / s.
  EXPECT_NEAR(expected_max_with(100, 10, 100), 100 + 10 * 0.3989422804, 1e-9);  // d = 0: phi(0)
  // m = 110, s = 10, c = 100: d = 1, Phi(1) = 0.8413447461, phi(1) = 0.2419707245.
  EXPECT_NEAR(expected_max_with(110, 10, 100), 100 + 10 * 0.8413447461 + 10 * 0.2419707245, 1e-8);
  // The mean below the floor: m = 90, c = 100, d = -1: 100 - 10 Phi(-1) + 10 phi(1) = 100.83315.
  EXPECT_NEAR(expected_max_with(90, 10, 100), 100 - 10 * 0.1586552539 + 10 * 0.2419707245, 1e-8);
  EXPECT_DOUBLE_EQ(expected_max_with(90, 0, 100), 100.0);  // no spread: the floor
  EXPECT_DOUBLE_EQ(expected_max_with(120, 0, 100), 120.0);
  // Far above the floor the floor does not matter.
  EXPECT_NEAR(expected_max_with(200, 10, 100), 200.0, 1e-9);
}

// One pruned RCP point: 1000 samples, stdev 100, evaluations every 10 samples. The continuous
// point lies half an interval below (995); observed on a grid this fine the runs keep the RCP's
// spread (variance 100^2 + 10^2 / 12 by Sheppard's correction, the grid's own steps) and their
// mean the table's 1000. Ten runs: the mean's sd is sqrt(10008.33 / 10) = 31.636, so the score
// stands for 1000 + 31.636 x phi(0) = 1012.621 samples, 1.2621 % above what a run trains.
TEST(RcpNormalisation, ScoreStandsForTheLargerOfTheRunsMeanAndTheRcpMean) {
  Workload w = testing::evaluated_workload(100, 10);
  w.convergence.unit = ConvergenceTable::Unit::samples;
  w.convergence.points = {ConvergencePoint{32, 1000, 100, 20, true}};
  const ObservedConvergence seen = observed_convergence(w, 32);
  EXPECT_NEAR(seen.expected, 1000.0, 1e-3);
  EXPECT_NEAR(seen.variance, 100.0 * 100 + 10.0 * 10 / 12, 1.0);
  const ScoredConvergence s = scored_convergence(w, 32, 10);
  EXPECT_DOUBLE_EQ(s.rcp_mean, 1000.0);
  EXPECT_NEAR(s.scored, 1000 + std::sqrt(seen.variance / 10) * 0.3989422804, 1e-6);
  EXPECT_NEAR(s.normalisation(), 1.012621, 1e-5);
  // One run per result: sd 100.04, 1 + 0.3991 x 100.04 / 1000 = 1.03991.
  EXPECT_NEAR(scored_convergence(w, 32, 1).normalisation(), 1.03991, 1e-4);

  // RetinaNet at GBS 256: 4 epochs with no spread, so nothing to scale up.
  const Workload retina = testing::shipped_workload("retinanet");
  EXPECT_DOUBLE_EQ(observed_convergence(retina, 256).variance, 0.0);
  EXPECT_DOUBLE_EQ(scored_convergence(retina, 256, 5).normalisation(), 1.0);
}

TEST(RcpNormalisation, TheScoreIsTheRunTimeScaledAndEnergyKeepsTheRunTime) {
  const Workload w = testing::shipped_workload("bert");
  const Platform p = testing::shipped_platform("dgx_h100");
  const TrainingEstimate e = estimate_training(w, p, 8, 768, w.parallelism.for_accelerators(8));
  ASSERT_TRUE(e.ok());
  const double factor = scored_convergence(w, 768, w.runs_per_result).normalisation();
  EXPECT_GT(factor, 1.0);
  EXPECT_DOUBLE_EQ(e.rcp_normalisation, factor);
  EXPECT_NEAR(to_seconds(e.time_to_train), to_seconds(e.run_time) * factor, 1e-9);
  EXPECT_NEAR(to_seconds(e.run_time), to_seconds(time_to_train_at(e, w, e.convergence.mean_samples)), 1e-9);
}

}  // namespace sp::models

namespace sp::models {

TEST(ConvergenceRounds, ARoundIsTwoNumbersComparedAsNumbers) {
  EXPECT_EQ(mlperf_round("4.1"), (std::pair{4, 1}));
  EXPECT_EQ(mlperf_round("5.0"), (std::pair{5, 0}));
  EXPECT_LT(*mlperf_round("4.9"), *mlperf_round("4.10"));  // not as text
  EXPECT_EQ(mlperf_round("v5.0"), (std::pair{5, 0}));     // as MLPerf names rounds
  EXPECT_EQ(mlperf_round("5.0.0"), (std::pair{5, 0}));    // as the RCP rulesets do
  for (const char* bad : {"", "4", ".1", "4.", "a.b", "4.1.2", "vv4.1", "4.1 ", "-4.1", "12345.1", "Training 5.0"}) {
    EXPECT_FALSE(mlperf_round(bad).has_value()) << bad;
  }
}

TEST(ConvergenceRounds, AResultGetsItsRoundsTableOrTheLatestBeforeIt) {
  // Stable Diffusion's file: its own points are v4.1's, with 4.0's and 5.0's beside them.
  const ConvergenceTable t = testing::shipped_workload("stable_diffusion").convergence;
  ASSERT_EQ(t.round, "4.1");
  const auto first_mean = [&](const std::string& round) { return t.at_round(round).points.front().mean; };
  EXPECT_DOUBLE_EQ(first_mean("4.1"), 2048000.0);     // its own: 256 at 2,048,000
  EXPECT_DOUBLE_EQ(first_mean("5.0"), 1706666.6667);  // 5.0's re-run reference at 256
  EXPECT_DOUBLE_EQ(first_mean("5.1"), 1706666.6667);  // no 5.1 table: the latest before it
  EXPECT_DOUBLE_EQ(first_mean("4.0"), 2561280.0);     // 4.0's starts at 384
  EXPECT_DOUBLE_EQ(first_mean("3.1"), 2561280.0);     // before every table: the earliest
  EXPECT_DOUBLE_EQ(first_mean(""), 2048000.0);        // not said: the file's own
  EXPECT_DOUBLE_EQ(first_mean("next"), 2048000.0);
  EXPECT_EQ(t.at_round("5.1").round, "5.0");
  // A chosen table can be asked again: from 5.0's back to 4.1's and on to 4.0's.
  EXPECT_DOUBLE_EQ(t.at_round("5.0").at_round("4.1").points.front().mean, 2048000.0);
  EXPECT_EQ(t.at_round("5.0").at_round("4.1").round, "4.1");
  EXPECT_DOUBLE_EQ(t.at_round("5.0").at_round("4.0").points.front().mean, 2561280.0);
  EXPECT_EQ(t.at_round("5.0").other_rounds.size(), 2u);
  // A workload with one round answers every round with it (BERT's 4.0, 4.1 and 5.0 RCPs agree).
  const ConvergenceTable bert = testing::shipped_workload("bert").convergence;
  EXPECT_EQ(bert.at_round("5.0").points.size(), bert.points.size());
  EXPECT_EQ(bert.at_round("5.0").round, "4.1");
}

TEST(ConvergenceRounds, TheRcpCheckerInterpolatesAmongItsRoundsPrunedPoints) {
  // v5.0 keeps 256 (1,706,666.67) and 2,048 (4,002,909.09) only, so 512 interpolates between
  // them: 1,706,666.67 + (4,002,909.09 - 1,706,666.67) x 256 / 1,792 = 2,034,701.30, not its own
  // record (2,104,888.89, not pruned). v4.1 interpolates 256 and 1,024: 2,311,757.58.
  Workload sd = testing::shipped_workload("stable_diffusion");
  sd.convergence = sd.convergence.at_round("5.0");
  const double expected = 1706666.6667 + (4002909.0909 - 1706666.6667) * 256.0 / 1792.0;
  EXPECT_NEAR(expected, 2034701.30, 0.01);
  EXPECT_NEAR(samples_to_converge(sd, 512).mean_samples, expected, 1e-6);
  EXPECT_EQ(samples_to_converge(sd, 512).method, "interpolated");
  EXPECT_NEAR(samples_to_converge(testing::shipped_workload("stable_diffusion"), 512).mean_samples, 2311757.576, 1e-3);
}

TEST(ConvergenceRounds, RoundsAreCheckedWhereTheyAreWritten) {
  const std::string head = "unit: samples\npoints:\n  - {global_batch: 8, mean: 10, stdev: 1, runs: 3, pruned: true}\n";
  const auto parse = [&](const std::string& more) { return parse_convergence(config::load_string(head + more, "w.yaml")); };
  const ConvergenceTable ok = parse("round: \"4.1\"\nrounds:\n  \"5.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true}\n");
  EXPECT_DOUBLE_EQ(ok.at_round("5.0").points.front().mean, 8.0);
  const auto refused = [&](const std::string& more, const std::string& says) {
    try {
      (void)parse(more);
      ADD_FAILURE() << "accepted: " << more;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("w.yaml:"), std::string::npos) << e.what();
    }
  };
  refused("round: r4.1\n", "'r4.1' is not an MLPerf round");
  refused("rounds:\n  \"5.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true}\n", "needs the round of `points`");
  refused("round: \"4.1\"\nrounds:\n  \"4.10\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: false}\n",
          "needs at least one point with pruned: true");
  refused("round: \"4.1\"\nrounds:\n  \"4.1\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true}\n",
          "round 4.1 is the round of `points`");
  refused("round: \"4.1\"\nrounds:\n  \"5.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true}\n"
          "  \"05.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true}\n",
          "round 05.0 is given twice");
  // A point's evaluation grid, where given, is positive and below its mean.
  refused("round: \"4.1\"\nrounds:\n  \"5.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true, evaluated_every: 8}\n",
          "must be below the point's mean");
  refused("round: \"4.1\"\nrounds:\n  \"5.0\":\n    - {global_batch: 8, mean: 8, stdev: 1, runs: 3, pruned: true, evaluated_every: 0}\n",
          "evaluated_every");
  EXPECT_DOUBLE_EQ(parse("").points.front().evaluated_every, 0.0);
}

}  // namespace sp::models
