// The goodput model against closed forms: Daly's expected segment time, Young's and Daly's optimal
// checkpoint intervals, the job's failure rate and checkpoint costs by hand, and the Monte Carlo
// of run_simulation against the expectation it must converge to.
#include <cmath>

#include <gtest/gtest.h>

#include "models/goodput/checkpoint_interval.hpp"
#include "models/goodput/goodput.hpp"
#include "models/goodput/reliability.hpp"
#include "models/goodput/run_simulation.hpp"
#include "tests/models/test_fixtures.hpp"

namespace sp::models {
namespace {

constexpr double kHour = 3600;

TEST(CheckpointInterval, ASegmentTakesDalysExpectation) {
  // MTBF 1 h, a segment of 30 min, restart 10 min: e^{600/3600} (e^{1800/3600} - 1) x 3600
  // = 1.181360 x 0.648721 x 3600 = 2758.945 s.
  EXPECT_NEAR(expected_segment_s(1800, 600, 1 / kHour), 2758.945, 1e-3);
  // Without failures a segment takes its length.
  EXPECT_DOUBLE_EQ(expected_segment_s(1800, 600, 0), 1800);
  // A run of 2.5 h in 1 h segments with a 60 s checkpoint: two full segments and a last half
  // without a checkpoint.
  const double l = 1 / (10 * kHour);
  EXPECT_DOUBLE_EQ(expected_run_s(2.5 * kHour, kHour, 60, 300, l),
                   2 * expected_segment_s(kHour + 60, 300, l) + expected_segment_s(0.5 * kHour, 300, l));
}

TEST(CheckpointInterval, TheOptimumIsDalysAndNearYoungs) {
  // C = 60 s, M = 10 h: Young sqrt(2 x 60 x 36000) = 2078.46 s; Daly
  // 2078.46 x (1 + sqrt(60/72000)/3 + (60/72000)/9) - 60 = 2038.65 s, which is the exact minimum of
  // (e^{(tau+C)/M} - 1)/tau to 1e-6. Over 30 days the whole segments are work/1272 = 2037.7 s.
  const double c = 60, m = 10 * kHour, work = 30 * 24 * kHour;
  EXPECT_NEAR(young_interval_s(c, m), 2078.461, 1e-3);
  EXPECT_NEAR(daly_interval_s(c, m), 2038.653, 1e-3);
  const double best = optimal_interval_s(work, c, 600, 1 / m, 1);
  EXPECT_NEAR(best / daly_interval_s(c, m), 1, 2e-3);
  EXPECT_NEAR(best / young_interval_s(c, m), 1, 0.025);
  EXPECT_GT(std::fabs(best / young_interval_s(c, m) - 1), 0.01);  // Young's first order is visibly off
  // A checkpoint dearer than 2M: Daly's rule is M.
  EXPECT_DOUBLE_EQ(daly_interval_s(3 * m, m), m);
  // Nothing fails: never checkpoint.
  EXPECT_DOUBLE_EQ(optimal_interval_s(work, c, 600, 0, 1), work);
}

RunPlan sync_plan() {
  RunPlan p;
  p.work_s = 10 * 24 * kHour;
  p.interval_s = kHour;
  p.stall_s = p.write_s = 120;
  p.restart_s = 600;
  p.failures_per_s = 1 / (5 * kHour);
  return p;
}

TEST(RunSimulation, TheMeanOfManyRunsIsTheClosedForm) {
  const RunPlan p = sync_plan();
  RngStream rng(7, 0, "failures");
  const int n = 2000;
  double sum = 0, sum2 = 0, failures = 0;
  for (int k = 0; k < n; ++k) {
    const RunOutcome o = simulate_run(p, rng);
    sum += o.wall_s;
    sum2 += o.wall_s * o.wall_s;
    failures += o.failures;
  }
  const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / n);
  const double expected = expected_run_s(p.work_s, p.interval_s, p.stall_s, p.restart_s, p.failures_per_s);
  EXPECT_NEAR(mean, expected, 3 * se) << "closed form " << expected << " s, se " << se;
  // Failures arrive at the job's rate over the whole wall time (restarts included): lambda E[wall].
  EXPECT_NEAR(failures / n, p.failures_per_s * mean, 0.02 * p.failures_per_s * mean);
}

TEST(RunSimulation, WithoutFailuresARunIsItsWorkAndItsCheckpoints) {
  RunPlan p = sync_plan();
  p.failures_per_s = 0;
  RngStream rng(1, 0, "failures");
  const RunOutcome o = simulate_run(p, rng);
  // 240 h in 1 h segments: 239 checkpoints of 120 s.
  EXPECT_EQ(o.checkpoints, 239);
  EXPECT_NEAR(o.wall_s, p.work_s + 239 * 120, 1e-6);
  EXPECT_EQ(o.failures, 0);
}

TEST(RunSimulation, AnAsyncCheckpointLosesItsWriteTimeMoreWork) {
  // Snapshots every hour, durable 20 min later: a failure u into a segment loses u, or u + 1 h when
  // u < 20 min (the last snapshot is not yet written): E[lost] = tau/2 + W = 30 + 20 = 50 min.
  // Rare failures (MTBF 50 h) keep the failure point uniform in the segment.
  RunPlan p;
  p.work_s = 100 * 24 * kHour;
  p.interval_s = kHour;
  p.async = true;
  p.stall_s = 10;
  p.write_s = 20 * 60;
  p.restart_s = 300;
  p.failures_per_s = 1 / (50 * kHour);
  RngStream rng(3, 0, "failures");
  double lost = 0, failures = 0;
  for (int k = 0; k < 200; ++k) {
    const RunOutcome o = simulate_run(p, rng);
    lost += o.lost_s;
    failures += o.failures;
  }
  EXPECT_GT(failures, 5000);
  EXPECT_NEAR(lost / failures / 60, 50, 2.5);
}

TEST(RunSimulation, WithoutSparesAFailedNodeIsWaitedFor) {
  // No spare: every node-taking failure waits the repair (6 h) before its restart, unless another
  // failure lands in the wait (rate x repair = 6/500 = 1.2 %).
  RunPlan p = sync_plan();
  p.failures_per_s = 1 / (500 * kHour);
  p.work_s = 365 * 24 * kHour;
  p.node_share = 1;
  p.spare_nodes = 0;
  p.repair_s = 6 * kHour;
  RngStream rng(5, 0, "failures");
  double wait = 0, failures = 0;
  for (int k = 0; k < 50; ++k) {
    const RunOutcome o = simulate_run(p, rng);
    wait += o.wait_s;
    failures += o.failures;
  }
  EXPECT_NEAR(wait / failures / kHour, 6, 6 * 0.03);
  // One spare and a repair far shorter than the gaps: almost nothing waits.
  p.spare_nodes = 1;
  RngStream again(5, 0, "failures");
  const RunOutcome o = simulate_run(p, again);
  EXPECT_LT(o.wait_s, 0.05 * o.failures * p.repair_s);
}

TEST(RunSimulation, TheSameSeedGivesTheSameRun) {
  const RunPlan p = sync_plan();
  RngStream a(11, 4, "failures"), b(11, 4, "failures");
  std::vector<RunSpan> ta, tb;
  const RunOutcome x = simulate_run(p, a, &ta), y = simulate_run(p, b, &tb);
  EXPECT_EQ(x.wall_s, y.wall_s);
  EXPECT_EQ(run_trace_json(ta), run_trace_json(tb));
  EXPECT_NE(run_trace_json(ta).find("\"failure\""), std::string::npos);
}

Reliability hand_reliability() {
  Reliability r;
  r.sources = {{"gpu", FailureSource::Per::accelerator, 100'000, true},
               {"host", FailureSource::Per::node, 20'000, true},
               {"software", FailureSource::Per::node, 40'000, false}};
  r.detection = seconds(60);
  r.relaunch = seconds(120);
  r.init_per_node = milliseconds(100);
  r.write_per_node = r.read_per_node = BytesPerSecond(1e9);
  r.storage_limit = BytesPerSecond(50e9);
  r.async_checkpoint = false;
  r.snapshot_per_accelerator = BytesPerSecond(10e9);
  return r;
}

TEST(Reliability, AJobsRateAndCostsByHand) {
  const Platform p = testing::simple_platform();  // 8 per node
  Workload w = testing::two_layer_workload(1'000'000'000, 0);
  w.layers[1].parameters = 3'000'000'000;  // 3e9 frozen, 1e9 trainable
  w.memory.weight_bytes_per_parameter = Bytes(2);
  w.memory.optimizer_bytes_per_trainable_parameter = Bytes(12);
  const Reliability r = hand_reliability();
  // 1024 accelerators on 128 nodes: 1024/1e5 + 128/2e4 + 128/4e4 = 0.01024 + 0.0064 + 0.0032 per hour.
  const JobReliability j = job_reliability(r, w, p, 1024);
  EXPECT_EQ(j.nodes, 128);
  EXPECT_NEAR(j.failures_per_hour, 0.01984, 1e-12);
  EXPECT_NEAR(j.node_share, 0.01664 / 0.01984, 1e-12);
  // Checkpoint 1e9 x (2 + 12) = 14 GB, at min(128 x 1, 50) GB/s = 0.28 s; the restart reads it and
  // the 3e9 frozen weights (6 GB): 60 + 120 + 128 x 0.1 + 20/50 = 193.2 s.
  EXPECT_DOUBLE_EQ(j.checkpoint.value(), 14e9);
  EXPECT_NEAR(to_seconds(j.write), 0.28, 1e-9);
  EXPECT_NEAR(to_seconds(j.stall), 0.28, 1e-9);
  EXPECT_NEAR(to_seconds(j.restart), 193.2, 1e-9);
  // 16 accelerators on 2 nodes: the nodes' links, 2 GB/s, are the limit: 7 s. Async: the stall is
  // each accelerator's 14/16 GB shard at 10 GB/s = 87.5 ms.
  Reliability async = r;
  async.async_checkpoint = true;
  const JobReliability small = job_reliability(async, w, p, 16);
  EXPECT_NEAR(to_seconds(small.write), 7, 1e-9);
  EXPECT_NEAR(to_seconds(small.stall), 0.0875, 1e-9);
  async.failures = false;
  EXPECT_EQ(job_reliability(async, w, p, 16).failures_per_hour, 0);
}

TEST(Goodput, WithFailuresOffTheEffectiveTimeIsTheTimeToTrain) {
  TrainingEstimate e;
  e.accelerators = 64;
  e.run_time = seconds(3 * kHour);
  e.time_to_train = seconds(3.3 * kHour);
  e.step.step = milliseconds(500);
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(1'000'000, 0);
  Reliability r = hand_reliability();
  r.failures = false;
  const GoodputEstimate g = estimate_goodput(r, e, w, p, 100, 1, 64);
  EXPECT_FALSE(g.counted);
  EXPECT_EQ(g.goodput, 1.0);
  EXPECT_EQ(g.effective_s, to_seconds(e.time_to_train));
  EXPECT_EQ(g.effective_p90_s, to_seconds(e.time_to_train));
  EXPECT_EQ(g.checkpoints, 0);
  // With failures on, the time grows by the closed form's factor (within the sampling error).
  r.failures = true;
  const GoodputEstimate f = estimate_goodput(r, e, w, p, 400, 1, 64);
  EXPECT_TRUE(f.counted);
  EXPECT_LT(f.goodput, 1);
  EXPECT_NEAR(f.mean_wall_s / f.expected_wall_s, 1, 0.01);
  EXPECT_NEAR(f.effective_s, to_seconds(e.time_to_train) * f.mean_wall_s / to_seconds(e.run_time), 1e-6);
  // A checkpoint every 10 ms of a 3 h run is 1.08 million of them: refused, not simulated for
  // minutes (the work of a run is bounded by what is asked, at most a million checkpoints).
  r.checkpoint_interval = milliseconds(10);
  EXPECT_THROW(estimate_goodput(r, e, w, p, 1, 1, 64), ModelError);
  r.checkpoint_interval = seconds(10.8);  // exactly a thousand
  EXPECT_NEAR(estimate_goodput(r, e, w, p, 1, 1, 64).checkpoints, 999, 2);
}

}  // namespace
}  // namespace sp::models
