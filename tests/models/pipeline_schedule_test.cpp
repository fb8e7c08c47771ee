#include <gtest/gtest.h>

#include <string>

#include "models/step/pipeline_schedule.hpp"

namespace sp::models {

namespace {

// "F0 F1 B0 ..." with the chunk after a dot where there are several: the order written out.
std::string written(const std::vector<ScheduleUnit>& order, bool chunks) {
  std::string out;
  for (const ScheduleUnit& u : order) {
    if (!out.empty()) out += ' ';
    out += (u.forward ? "F" : "B") + std::to_string(u.micro_batch);
    if (chunks) out += "." + std::to_string(u.chunk);
  }
  return out;
}

}  // namespace

TEST(PipelineSchedule, OneFOneBFillsWithTheStagesBehindIt) {
  // Four stages, six micro-batches. Stage 0 runs three forwards before its first backward (the
  // three stages behind it fill), then alternates, then drains; the last stage alternates at once.
  EXPECT_EQ(written(pipeline_order(0, 4, 1, 6), false), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(written(pipeline_order(3, 4, 1, 6), false), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than the fill: every forward first.
  EXPECT_EQ(written(pipeline_order(0, 4, 1, 2), false), "F0 F1 B0 B1");
}

TEST(PipelineSchedule, InterleavingVisitsEachChunkInGroupsOfStages) {
  // Two stages, two chunks each, four micro-batches (Narayanan et al. SC'21, figure 4's pattern):
  // micro-batches in groups of 2 through chunk 0 then chunk 1; stage 0 warms up with
  // 2 (2 - 0 - 1) + (2 - 1) 2 = 4 forward units, backwards run through the chunks in reverse.
  EXPECT_EQ(written(pipeline_order(0, 2, 2, 4), true),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  // Every (chunk, micro-batch) runs once forward and once backward on every stage.
  for (int s = 0; s < 2; ++s) EXPECT_EQ(pipeline_order(s, 2, 2, 4).size(), 16u);
}

TEST(PipelineSchedule, PartsAreContiguousAndBalancedByCost) {
  // Ten layers of 1 and a head of 1.5 in four parts: 11.5 / 4 = 2.875 a part; a part starts where
  // an instance's midpoint passes j x 2.875: 0-2, 3-5, 6-8, 9-10 (the head with the last layer).
  const std::vector<double> costs = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1.5};
  const std::vector<std::vector<int>> parts = split_contiguous(costs, 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parts[1], (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(parts[2], (std::vector<int>{6, 7, 8}));
  EXPECT_EQ(parts[3], (std::vector<int>{9, 10}));
  // One expensive instance still leaves every part at least one.
  const std::vector<std::vector<int>> skewed = split_contiguous({100, 1, 1}, 3);
  EXPECT_EQ(skewed, (std::vector<std::vector<int>>{{0}, {1}, {2}}));
}

}  // namespace sp::models
