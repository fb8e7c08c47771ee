// A measured time at one N sets the system's software level: the model then gives exactly that
// time there, every other N moves by what the level changes, and an anchor the model cannot meet
// within the level's plausible range is an input error at the key.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

namespace {
ScenarioSpec bert(const std::vector<config::Override>& overrides) {
  const models::Catalog catalog(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return load_scenario(std::string(SP_SOURCE_DIR) + "/scenarios/bert.yaml", overrides, catalog);
}
const ScalingPoint* at(const std::vector<ScalingPoint>& points, int n) {
  for (const ScalingPoint& p : points) {
    if (p.estimate.accelerators == n) return &p;
  }
  return nullptr;
}
double minutes_at(const std::vector<ScalingPoint>& points, int n) {
  for (const ScalingPoint& p : points) {
    if (p.estimate.accelerators == n) return to_seconds(p.estimate.time_to_train) / 60;
  }
  return -1;
}
}  // namespace

TEST(Anchor, TheModelGivesTheMeasuredTimeAtTheAnchorAndScalesFromIt) {
  ScenarioSpec plain = bert({{"samples", "0", "--set samples=0"}});
  const std::vector<ScalingPoint> before = run_scenario(plain);
  const double at8 = minutes_at(before, 8), at64 = minutes_at(before, 64);
  ASSERT_GT(at8, 0);
  // A system 10 % slower than the model at 8: its level falls until the model says so there,
  // and the larger systems, whose compute is a smaller share of the step, slow by less.
  const std::string measured = fmt::format("{:.6f} min", at8 * 1.1);
  ScenarioSpec anchored = bert({{"samples", "0", "--set samples=0"},
                                {"anchor", "{accelerators: 8, time_to_train: \"" + measured + "\"}", "--anchor"}});
  ASSERT_TRUE(anchored.anchor);
  EXPECT_NEAR(to_seconds(anchored.anchor->modelled_before) / 60, at8, 1e-9);
  EXPECT_LT(anchored.anchor->software_factor, 1.0);
  EXPECT_GT(anchored.anchor->software_factor, 1 / 1.1 - 0.02);
  const std::vector<ScalingPoint> after = run_scenario(anchored);
  EXPECT_NEAR(minutes_at(after, 8) / (at8 * 1.1), 1.0, 1e-6);
  const double ratio64 = minutes_at(after, 64) / at64;
  EXPECT_GT(ratio64, 1.0);
  EXPECT_LE(ratio64, 1.1 + 1e-9);
  // The model's own time as the anchor changes nothing.
  ScenarioSpec same = bert({{"samples", "0", "--set samples=0"},
                            {"anchor", fmt::format("{{accelerators: 8, time_to_train: \"{:.12f} min\"}}", at8), "--anchor"}});
  EXPECT_NEAR(same.anchor->software_factor, 1.0, 1e-6);
}

TEST(Anchor, AMeasuredStepSetsTheLevelThatATimeToTrainWouldSet) {
  // A step 10 % longer than the model's at 8: the level falls until the model's step there is the
  // measured one. Its time to train at 8 is then what a time-to-train anchor needs to set the very
  // same level: two measurements of one system, one level (both solves are monotone in it).
  ScenarioSpec plain = bert({{"samples", "0", "--set samples=0"}});
  const std::vector<ScalingPoint> before = run_scenario(plain);
  ASSERT_NE(at(before, 8), nullptr);
  const double step8 = to_seconds(at(before, 8)->estimate.step.step);
  const std::string measured = fmt::format("{:.9f} s", step8 * 1.1);
  ScenarioSpec stepped = bert({{"samples", "0", "--set samples=0"},
                               {"anchor", "{accelerators: 8, step_time: \"" + measured + "\"}", "--anchor 8=" + measured + "/step"}});
  ASSERT_TRUE(stepped.anchor);
  EXPECT_EQ(stepped.anchor->quantity, Anchor::Quantity::step_time);
  EXPECT_NEAR(to_seconds(stepped.anchor->modelled_before), step8, 1e-12);
  EXPECT_LT(stepped.anchor->software_factor, 1.0);
  const std::vector<ScalingPoint> after = run_scenario(stepped);
  EXPECT_NEAR(to_seconds(at(after, 8)->estimate.step.step) / (step8 * 1.1), 1.0, 1e-6);
  const double ttt8 = minutes_at(after, 8);
  EXPECT_GT(ttt8, minutes_at(before, 8));
  ScenarioSpec timed = bert({{"samples", "0", "--set samples=0"},
                             {"anchor", fmt::format("{{accelerators: 8, time_to_train: \"{:.12f} min\"}}", ttt8), "--anchor"}});
  EXPECT_NEAR(timed.anchor->software_factor / stepped.anchor->software_factor, 1.0, 1e-6);
  EXPECT_EQ(describe_anchor(*stepped.anchor).find("anchored: N=8 measured a "), 0u) << describe_anchor(*stepped.anchor);
}

TEST(Anchor, AnAnchorAtAnUnlistedNTakesTheBatchTheScenarioWouldGiveThere) {
  // Llama2-70B LoRA with v4.1's typical batches: at 16 GPUs 8 sequences, the recipe TP4 CP2
  // leaving 2 data-parallel ranks of 4. An anchor at 16 must be solved at that batch whether or not
  // 16 is among the scenario's counts; rounded to 16 ranks of one (the batch as if every GPU were
  // a replica) the model's time there would be another and so would the level.
  const models::Catalog catalog(std::filesystem::path(SP_SOURCE_DIR) / "models");
  const auto llama = [&](const std::string& counts) {
    return load_scenario(std::string(SP_SOURCE_DIR) + "/scenarios/llama2_70b_lora.yaml",
                         {{"samples", "0", "--set samples=0"},
                          {"batch", "{typical: true}", "--set batch"},
                          {"accelerators", counts, "--set accelerators"},
                          {"anchor", "{accelerators: 16, time_to_train: \"15 min\"}", "--anchor 16=15min"}},
                         catalog);
  };
  const ScenarioSpec listed = llama("[16, 64]"), unlisted = llama("[8, 64]");
  ASSERT_EQ(listed.batch.global_batch(16), 8);
  EXPECT_EQ(to_seconds(unlisted.anchor->modelled_before), to_seconds(listed.anchor->modelled_before));
  EXPECT_EQ(unlisted.anchor->software_factor, listed.anchor->software_factor);
}

TEST(Anchor, AnAnchorTheModelCannotMeetIsAnInputError) {
  try {
    bert({{"anchor", "{accelerators: 8, time_to_train: \"10 s\"}", "--anchor 8=10s"}});
    ADD_FAILURE() << "an anchor 30x faster than the model was taken";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--anchor 8=10s"), std::string::npos) << what;
    EXPECT_NE(what.find("anchor.time_to_train"), std::string::npos) << what;
    EXPECT_NE(what.find("outside the plausible 0.2..5"), std::string::npos) << what;
    // The search stops a step past the range: it says on which side, not where it stopped.
    EXPECT_NE(what.find("a software level above x5,"), std::string::npos) << what;
  }
  try {
    bert({{"anchor", "{accelerators: 8, time_to_train: \"3 h\"}", "--anchor 8=3h"}});
    ADD_FAILURE() << "an anchor 30x slower than the model was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a software level below x0.2,"), std::string::npos) << e.what();
  }
  try {
    bert({{"anchor", "{accelerators: 8, step_time: \"1 ms\"}", "--anchor 8=1ms/step"}});
    ADD_FAILURE() << "a step far faster than the model's was taken";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("anchor.step_time"), std::string::npos) << what;
    EXPECT_NE(what.find("meeting 0.001 s takes a software level above x5"), std::string::npos) << what;
  }
  // One quantity, and a positive one.
  EXPECT_THROW(bert({{"anchor", "{accelerators: 8, step_time: \"1 s\", time_to_train: \"5 min\"}", "--anchor"}}), InputError);
  EXPECT_THROW(bert({{"anchor", "{accelerators: 8, step_time: \"0 s\"}", "--anchor"}}), InputError);
  EXPECT_THROW(bert({{"anchor", "{accelerators: 8}", "--anchor"}}), InputError);
  EXPECT_THROW(bert({{"anchor", "{accelerators: 8, time_to_train: \"-1 min\"}", "--anchor"}}), InputError);
}

}  // namespace sp
