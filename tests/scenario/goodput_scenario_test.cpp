// Failures, checkpoints and restarts in a whole scenario: where the reliability keys come from
// (defaults, platform, scenario), and that turning failures off leaves today's times exactly.
#include <gtest/gtest.h>

#include "sim/scenario/scenario.hpp"

namespace sp {
namespace {

models::Catalog catalog() { return models::Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }

ScenarioSpec bert(const std::vector<std::string>& sets) {
  std::vector<config::Override> o;
  for (const auto& s : sets) o.push_back(config::parse_override(s));
  return load_scenario(std::string(SP_SOURCE_DIR) + "/scenarios/bert.yaml", o, catalog());
}

TEST(GoodputScenario, WithFailuresOffEveryEffectiveTimeIsTheTimeToTrain) {
  const auto points = run_scenario(bert({"reliability.failures=false", "accelerators=[8, 64, 512]"}));
  ASSERT_EQ(points.size(), 3u);
  for (const ScalingPoint& p : points) {
    EXPECT_EQ(p.goodput.goodput, 1.0);
    EXPECT_EQ(p.goodput.effective_s, to_seconds(p.estimate.time_to_train));
    EXPECT_EQ(p.goodput.effective_p90_s, to_seconds(p.estimate.time_to_train));
    EXPECT_EQ(p.effective_e_prime, p.e_prime);
    EXPECT_EQ(p.goodput.interruptions, 0);
  }
}

TEST(GoodputScenario, TheScenarioOverridesThePlatformWhichOverridesTheDefaults) {
  const ScenarioSpec defaults = bert({});
  EXPECT_EQ(defaults.reliability.detection, seconds(300));  // models/goodput/gpu_cluster.yaml
  EXPECT_EQ(defaults.reliability.sources.size(), 4u);
  const ScenarioSpec platform = bert({"platform.reliability.detection=\"10 min\""});
  EXPECT_EQ(platform.reliability.detection, seconds(600));
  EXPECT_EQ(platform.reliability.relaunch, defaults.reliability.relaunch);  // the rest stays
  const ScenarioSpec both =
      bert({"platform.reliability.detection=\"10 min\"", "reliability.detection=\"30 s\""});
  EXPECT_EQ(both.reliability.detection, seconds(30));
  // The restart of a job grows by exactly the longer detection.
  const auto a = run_scenario(bert({"accelerators=[64]"}));
  const auto b = run_scenario(bert({"accelerators=[64]", "reliability.detection=\"10 min\""}));
  EXPECT_NEAR(to_seconds(b[0].goodput.job.restart - a[0].goodput.job.restart), 300, 1e-9);
}

TEST(GoodputScenario, AnUnreliableClusterLosesWhatTheClosedFormSays) {
  // Every node fails once an hour on average; BERT at 64 GPUs (8 nodes) then fails every 7.5 min
  // of a run of about 50 s: goodput well below 1, and the Monte Carlo's mean wall time within
  // its sampling error of Daly's expectation for the same plan.
  const auto p = run_scenario(bert({"accelerators=[64]", "samples=2000",
                                    "reliability.sources=[{name: node, per: node, mtbf: \"1 h\"}]",
                                    "reliability.detection=\"5 s\"", "reliability.relaunch=\"5 s\""}))[0];
  EXPECT_NEAR(p.goodput.job.failures_per_hour, 8, 1e-12);
  EXPECT_LT(p.goodput.goodput, 0.99);
  EXPECT_NEAR(p.goodput.mean_wall_s / p.goodput.expected_wall_s, 1, 0.01);
  EXPECT_NEAR(p.goodput.effective_s,
              to_seconds(p.estimate.time_to_train) * p.goodput.mean_wall_s / to_seconds(p.estimate.run_time), 1e-6);
}

}  // namespace
}  // namespace sp
