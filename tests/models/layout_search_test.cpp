// The layout search against brute force: every candidate evaluated by hand, the fastest that
// fits taken, and the workload's usual layout kept unless another beats it by more than 2 %.
#include <gtest/gtest.h>

#include <limits>

#include "models/training/layout_search.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

namespace {

struct Candidate {
  ParallelSpec spec;
  double seconds = std::numeric_limits<double>::infinity();  // inf: does not resolve or fit
};

// Llama2-70B LoRA at 8 accelerators and global batch 8 (micro-batch 1), every TP x CP.
std::vector<Candidate> brute_force(const Workload& w, const Platform& p, const ParallelSpec& base) {
  std::vector<Candidate> out;
  for (int tp : {1, 2, 4, 8}) {
    for (int cp : {1, 2, 4}) {
      Candidate c{base};
      c.spec.tensor = tp;
      c.spec.context = cp;
      std::string why;
      if (resolve_layout(c.spec, p.topology, 8, 8, why)) {
        const TrainingEstimate e = estimate_training(w, p, 8, 8, c.spec);
        if (e.ok()) c.seconds = to_seconds(e.time_to_train);
      }
      out.push_back(c);
    }
  }
  return out;
}

void expect_search_matches_brute_force(const std::string& platform) {
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform(platform);
  const ParallelSpec base = w.parallelism.for_accelerators(8);
  ASSERT_TRUE(base.search.has_value()) << "the workload file tunes one node per machine";
  const auto chosen = fastest_layout(w, p, 8, 8, base, *base.search);
  ASSERT_TRUE(chosen && chosen->ok()) << platform;

  const std::vector<Candidate> all = brute_force(w, p, base);
  double best = std::numeric_limits<double>::infinity(), usual = best;
  for (const Candidate& c : all) {
    best = std::min(best, c.seconds);
    if (c.spec.tensor == base.tensor && c.spec.context == base.context) usual = c.seconds;
  }
  const double got = to_seconds(chosen->time_to_train);
  if (chosen->layout.tp == *base.tensor && chosen->layout.cp == *base.context) {
    EXPECT_DOUBLE_EQ(got, usual) << platform;
    EXPECT_LE(usual, 1.02 * best) << platform << ": the usual layout is kept only within 2 %";
  } else {
    EXPECT_DOUBLE_EQ(got, best) << platform;
    EXPECT_GT(usual, 1.02 * best) << platform << ": " << chosen->layout.describe();
  }
}

}  // namespace

TEST(LayoutSearch, OneNodeMatchesBruteForceOnH100AndH200) {
  expect_search_matches_brute_force("dgx_h100");
  expect_search_matches_brute_force("dgx_h200");
}

TEST(LayoutSearch, MemoryDecidesTheLayoutPerMachine) {
  // TP1 holds the whole model: 69.0 B parameters x 1 B (FP8) = 69 GB of weights, which with
  // activations and the 6 GiB reserve exceeds an 80 GB H100 but fits a 141 GB H200.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  ParallelSpec tp1 = w.parallelism.for_accelerators(8);
  tp1.tensor = 1;
  tp1.context = 2;
  EXPECT_EQ(estimate_training(w, testing::shipped_platform("dgx_h100"), 8, 8, tp1).status, "out_of_memory");
  EXPECT_EQ(estimate_training(w, testing::shipped_platform("dgx_h200"), 8, 8, tp1).status, "ok");
  // So the H200 may leave TP4 for a smaller tensor-parallel group (less exposed TP traffic);
  // the H100 never goes below TP2.
  const ParallelSpec base = w.parallelism.for_accelerators(8);
  const auto h100 = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, base, *base.search);
  ASSERT_TRUE(h100);
  EXPECT_GE(h100->layout.tp, 2);
}

TEST(LayoutSearch, ReportsWhyNothingFitsAndNulloptWhenNothingResolves) {
  // Every parameter trainable: no layout of 8 H100s holds the optimizer states (see Memory
  // tests); the search says out_of_memory instead of inventing a layout.
  Workload full = testing::shipped_workload("llama2_70b_lora");
  for (LayerGroup& l : full.layers) l.trainable_parameters = l.parameters;
  const Platform p = testing::shipped_platform("dgx_h100");
  const ParallelSpec base = full.parallelism.for_accelerators(8);
  const auto e = fastest_layout(full, p, 8, 8, base, *base.search);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, "out_of_memory");
  // A global batch of 7 splits over no data-parallel size of TP8 x CP1 (DP1 aside), nor over
  // base's DP2: with the search limited to TP1 CP1 (DP8) nothing resolves.
  LayoutSearch dp_only;
  dp_only.tensor = {1};
  dp_only.context = {1};
  EXPECT_FALSE(fastest_layout(testing::shipped_workload("llama2_70b_lora"), p, 8, 7, base, dp_only));
}

}  // namespace sp::models
