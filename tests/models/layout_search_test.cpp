// The layout search against brute force: every candidate evaluated by hand, the fastest that
// fits taken, and the workload's usual layout (or, where it does not fit, its recipe for smaller
// parts) kept unless another beats it by more than 2 %.
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

// Every TP x CP of one node.
LayoutSearch every_size() {
  LayoutSearch all;
  all.tensor = {1, 2, 4, 8};
  all.context = {1, 2, 4};
  return all;
}

void expect_search_matches_brute_force(const std::string& platform) {
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform(platform);
  const ParallelSpec base = w.parallelism.for_accelerators(8);
  const auto chosen = fastest_layout(w, p, 8, 8, base, every_size());
  ASSERT_TRUE(chosen && chosen->ok()) << platform;

  const std::vector<Candidate> all = brute_force(w, p, base);
  const auto seconds_of = [&](int tp, int cp) {
    for (const Candidate& c : all) {
      if (c.spec.tensor == tp && c.spec.context == cp) return c.seconds;
    }
    return std::numeric_limits<double>::infinity();
  };
  double best = std::numeric_limits<double>::infinity();
  for (const Candidate& c : all) best = std::min(best, c.seconds);
  // The usual layout: base, or the first recipe that fits.
  int usual_tp = *base.tensor, usual_cp = *base.context;
  double usual = seconds_of(usual_tp, usual_cp);
  for (const ParallelSpec::Sizes& z : base.otherwise) {
    if (usual < std::numeric_limits<double>::infinity()) break;
    usual_tp = z.tensor;
    usual_cp = z.context;
    usual = seconds_of(usual_tp, usual_cp);
  }
  const double got = to_seconds(chosen->time_to_train);
  if (chosen->layout.tp == usual_tp && chosen->layout.cp == usual_cp) {
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

TEST(LayoutSearch, MemoryDecidesTheRecipePerMachine) {
  // TP1 holds the whole model: 69.0 B parameters x 1 B (FP8) = 69 GB of weights, which with
  // activations and the 6 GiB reserve exceeds an 80 GB H100 but fits a 141 GB H200.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  ParallelSpec tp1 = w.parallelism.for_accelerators(8);
  tp1.tensor = 1;
  tp1.context = 2;
  EXPECT_EQ(estimate_training(w, testing::shipped_platform("dgx_h100"), 8, 8, tp1).status, "out_of_memory");
  EXPECT_EQ(estimate_training(w, testing::shipped_platform("dgx_h200"), 8, 8, tp1).status, "ok");
  // So one node runs NVIDIA's recipe for its memory, with no search: TP1 CP2 on the H200, and
  // on the H100, where that does not fit, the workload's `otherwise`, TP4 CP1.
  const ParallelSpec base = w.parallelism.for_accelerators(8);
  ASSERT_EQ(base.otherwise.size(), 1u);
  const auto h100 = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, base, LayoutSearch{});
  const auto h200 = fastest_layout(w, testing::shipped_platform("dgx_h200"), 8, 8, base, LayoutSearch{});
  ASSERT_TRUE(h100 && h200);
  EXPECT_EQ(h100->layout.describe(), "TP4 CP1 PP1 DP2 mb1 x4 ZeRO-1");
  EXPECT_EQ(h200->layout.describe(), "TP1 CP2 PP1 DP4 mb1 x2 ZeRO-1");
  // A recipe list whose every entry fails leaves the first failure's reason.
  ParallelSpec none_fit = base;
  none_fit.otherwise = {{1, 1, 1}};
  const auto e = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, none_fit, LayoutSearch{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, "out_of_memory");
}

TEST(LayoutSearch, ReportsWhyNothingFitsAndNulloptWhenNothingResolves) {
  // Every parameter trainable: no layout of 8 H100s holds the optimizer states (see Memory
  // tests); the search says out_of_memory instead of inventing a layout.
  Workload full = testing::shipped_workload("llama2_70b_lora");
  for (LayerGroup& l : full.layers) l.trainable_parameters = l.parameters;
  const Platform p = testing::shipped_platform("dgx_h100");
  const ParallelSpec base = full.parallelism.for_accelerators(8);
  const auto e = fastest_layout(full, p, 8, 8, base, every_size());
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
