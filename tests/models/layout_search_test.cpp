// The layout search against brute force: every candidate evaluated by hand, the fastest that
// fits taken, and the workload's recipe (or, where it does not fit, its recipe for smaller parts)
// kept unless another beats it by more than 10 %; declared layouts are taken as they are, and a
// split the workload describes no traffic for is never tried.
#include <gtest/gtest.h>

#include <limits>

#include "models/training/layout_search.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

namespace {

struct Candidate {
  int tp = 1, cp = 1, pp = 1;
  double seconds = std::numeric_limits<double>::infinity();  // inf: does not resolve or fit
};

// Llama2-70B LoRA at 8 accelerators and global batch 8, every TP x CP x PP the search may try
// (powers of two, TP within the node; pipelines without interleaving, which LayoutSearch{} does
// not list), each at its fastest micro-batch that fits.
std::vector<Candidate> brute_force(const Workload& w, const Platform& p, const ParallelSpec& base) {
  std::vector<Candidate> out;
  for (int tp : {1, 2, 4, 8}) {
    for (int cp : {1, 2, 4, 8}) {
      for (int pp : {1, 2, 4, 8}) {
        Candidate c{tp, cp, pp};
        if (8 % (tp * cp * pp) != 0) continue;
        for (int mb : {8, 4, 2, 1}) {
          ParallelSpec s = base;
          s.fix_sizes({tp, cp, pp});
          s.micro_batch = mb;
          std::string why;
          if (!resolve_layout(s, p.topology, 8, 8, why)) continue;
          const TrainingEstimate e = estimate_training(w, p, 8, 8, s);
          if (e.ok()) c.seconds = std::min(c.seconds, to_seconds(e.time_to_train));
        }
        out.push_back(c);
      }
    }
  }
  return out;
}

void expect_search_matches_brute_force(const std::string& platform) {
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform(platform);
  ParallelSpec base = w.parallelism.for_accelerators(8);
  base.micro_batch.reset();  // the brute force tries every micro-batch as the grid does
  const auto chosen = fastest_layout(w, p, 8, 8, base, LayoutSearch{});
  ASSERT_TRUE(chosen && chosen->ok()) << platform;

  const std::vector<Candidate> all = brute_force(w, p, base);
  const auto seconds_of = [&](int tp, int cp) {
    for (const Candidate& c : all) {
      if (c.tp == tp && c.cp == cp && c.pp == 1) return c.seconds;
    }
    return std::numeric_limits<double>::infinity();
  };
  double best = std::numeric_limits<double>::infinity(), second = best;
  for (const Candidate& c : all) {
    if (c.seconds < best) {
      second = best;
      best = c.seconds;
    } else if (c.seconds < second) {
      second = c.seconds;
    }
  }
  // The recipe: base, or the first alternative that fits.
  int recipe_tp = *base.tensor, recipe_cp = *base.context;
  double recipe = seconds_of(recipe_tp, recipe_cp);
  for (const ParallelSpec::Sizes& z : base.otherwise) {
    if (recipe < std::numeric_limits<double>::infinity()) break;
    recipe_tp = z.tensor;
    recipe_cp = z.context;
    recipe = seconds_of(recipe_tp, recipe_cp);
  }
  const double got = to_seconds(chosen->time_to_train);
  if (chosen->layout.tp == recipe_tp && chosen->layout.cp == recipe_cp && chosen->layout.pp == 1) {
    EXPECT_EQ(chosen->layout_basis, "recipe") << platform;
    EXPECT_DOUBLE_EQ(got, recipe) << platform;
    EXPECT_LE(recipe, 1.10 * best) << platform << ": the recipe is kept only within 10 %";
  } else {
    EXPECT_EQ(chosen->layout_basis, "searched") << platform;
    EXPECT_DOUBLE_EQ(got, best) << platform;
    EXPECT_GT(recipe, 1.10 * best) << platform << ": " << chosen->layout.describe();
    // The runner-up is the next fastest set of sizes, and the output says by how much.
    EXPECT_NEAR(chosen->runner_up_slower, second / best - 1, 1e-12) << platform;
  }
  EXPECT_FALSE(chosen->runner_up.empty());
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
  // So one node runs NVIDIA's recipe for its memory unless another layout is clearly faster:
  // TP1 CP2 on the H200, and on the H100, where that does not fit, the workload's `otherwise`,
  // TP4 CP1.
  const ParallelSpec base = w.parallelism.for_accelerators(8);
  ASSERT_EQ(base.otherwise.size(), 1u);
  const auto h100 = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, base, LayoutSearch{});
  const auto h200 = fastest_layout(w, testing::shipped_platform("dgx_h200"), 8, 8, base, LayoutSearch{});
  ASSERT_TRUE(h100 && h200);
  EXPECT_EQ(h100->layout.describe(), "TP4 CP1 PP1 DP2 mb1 x4 ZeRO-1");
  EXPECT_EQ(h200->layout.describe(), "TP1 CP2 PP1 DP4 mb1 x2 ZeRO-1");
  EXPECT_EQ(h100->layout_basis, "recipe");
  EXPECT_EQ(h200->layout_basis, "recipe");
  // A declared layout that does not fit is reported as it is, unless the caller lets the search
  // replace it (a published system did run something).
  ParallelSpec declared = tp1;
  declared.fix_sizes({1, 2, 1});
  declared.declared = true;
  const auto as_given = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, declared, LayoutSearch{});
  ASSERT_TRUE(as_given);
  EXPECT_EQ(as_given->status, "out_of_memory");
  const auto replaced = fastest_layout(w, testing::shipped_platform("dgx_h100"), 8, 8, declared, LayoutSearch{},
                                       Fidelity::analytic, LayoutFallback::any);
  ASSERT_TRUE(replaced && replaced->ok());
  EXPECT_EQ(replaced->layout_basis, "searched: the declared layout does not fit or cannot run");
}

TEST(LayoutSearch, AFourGpuNodeTakesTheRecipeForItsMemoryAsAnEightGpuNodeDoes) {
  // v4.1's 4-GPU nodes were 80 GB H100s (Dell XE8640, Fujitsu GX2560M7), which ran TP4 CP1; a
  // 4-GPU GB200 tray (186 GB) holds the model on one GPU and runs the 8-GPU node's recipe, TP1
  // CP2, over 2 replicas (GBS 8: 4 micro-batches each), so that an anchor on one tray and a
  // prediction on two run the same layout.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const ParallelSpec base = w.parallelism.for_accelerators(4);
  const auto h100 = fastest_layout(w, testing::shipped_platform("hgx_h100_4gpu"), 4, 8, base, LayoutSearch{});
  const auto gb200 = fastest_layout(w, testing::shipped_platform("gb200_nvl72"), 4, 8, base, LayoutSearch{});
  const auto gb200_8 = fastest_layout(w, testing::shipped_platform("gb200_nvl72"), 8, 8, w.parallelism.for_accelerators(8),
                                      LayoutSearch{});
  ASSERT_TRUE(h100 && gb200 && gb200_8);
  EXPECT_EQ(h100->layout.describe(), "TP4 CP1 PP1 DP1 mb1 x8 ZeRO-1");
  EXPECT_EQ(gb200->layout.describe(), "TP1 CP2 PP1 DP2 mb1 x4 ZeRO-1");
  EXPECT_EQ(gb200_8->layout.describe(), "TP1 CP2 PP1 DP4 mb1 x2 ZeRO-1");
  EXPECT_EQ(h100->layout_basis, "recipe");
  EXPECT_EQ(gb200->layout_basis, "recipe");
}

TEST(LayoutSearch, ReportsWhyNothingFitsAndNulloptWhenNothingResolves) {
  // Every parameter trainable: no layout of 8 H100s holds the optimizer states (see Memory
  // tests); the search says out_of_memory instead of inventing a layout.
  Workload full = testing::shipped_workload("llama2_70b_lora");
  for (LayerGroup& l : full.layers) l.trainable_parameters = l.parameters;
  const Platform p = testing::shipped_platform("dgx_h100");
  const ParallelSpec base = full.parallelism.for_accelerators(8);
  LayoutSearch one_node;
  one_node.pipeline = {1};
  const auto e = fastest_layout(full, p, 8, 8, base, one_node);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, "out_of_memory");
  // On one H100 nothing fits at any micro-batch: the answer is the candidate that came closest,
  // one sequence a micro-batch, not the eight tried first.
  const Workload lora1 = testing::shipped_workload("llama2_70b_lora");
  const auto alone = fastest_layout(lora1, p, 1, 8, lora1.parallelism.for_accelerators(1), LayoutSearch{});
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->status, "out_of_memory");
  EXPECT_EQ(alone->layout.micro_batch, 1) << alone->message;
  // A global batch of 7 splits over no data-parallel size but 1: with the search limited to
  // TP1 CP1 PP1 (DP8), and the recipes' DP4 and DP2, nothing resolves.
  LayoutSearch dp_only;
  dp_only.tensor = {1};
  dp_only.context = {1};
  dp_only.pipeline = {1};
  EXPECT_FALSE(fastest_layout(testing::shipped_workload("llama2_70b_lora"), p, 8, 7, base, dp_only));
  // What a scenario's loader asks, without a step: the same answer as the search's on these cases,
  // and on the awkward batch that made a file take 16 s to load (218 sequences on 1,024 GPUs:
  // only DP1 or DP2 divides it, with TP x CP x PP of 512 or 1,024).
  const Workload lora = testing::shipped_workload("llama2_70b_lora");
  EXPECT_TRUE(some_layout_resolves(full, p, 8, 8, base, one_node));     // resolves, does not fit
  EXPECT_FALSE(some_layout_resolves(lora, p, 8, 7, base, dp_only));
  EXPECT_TRUE(some_layout_resolves(lora, p, 8, 7, base, LayoutSearch{}));  // TP or CP takes the 8
  const ParallelSpec wide = lora.parallelism.for_accelerators(1024);
  EXPECT_TRUE(some_layout_resolves(lora, p, 1024, 218, wide, LayoutSearch{}));
  EXPECT_EQ(some_layout_resolves(lora, p, 8, 7, base, LayoutSearch{}),
            fastest_layout(lora, p, 8, 7, base, LayoutSearch{}).has_value());
}

TEST(LayoutSearch, AMicroBatchTheUserPinsIsKeptOrNothingResolves) {
  // Llama2-70B LoRA on 16 H100s at global batch 16, its micro-batch pinned at 2 (a scenario's
  // `micro_batch: 2`): every size searched keeps it, so each data-parallel rank (16 / DP samples)
  // runs whole micro-batches of 2; once the search dropped it and ran mb1 without a word. Pinned
  // at 3, no DP that divides 16 leaves a multiple of 3 per rank: nothing resolves.
  const Workload lora = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  ParallelSpec base = lora.parallelism.for_accelerators(16);
  base.micro_batch = 2;
  base.micro_batch_pinned = true;
  const auto e = fastest_layout(lora, p, 16, 16, base, LayoutSearch{});
  ASSERT_TRUE(e && e->ok());
  EXPECT_EQ(e->layout.micro_batch, 2) << e->layout.describe();
  EXPECT_NE(e->runner_up.find(" mb2 "), std::string::npos) << e->runner_up;  // the next-fastest sizes keep it too
  base.micro_batch = 3;
  EXPECT_FALSE(some_layout_resolves(lora, p, 16, 16, base, LayoutSearch{}));
  EXPECT_FALSE(fastest_layout(lora, p, 16, 16, base, LayoutSearch{}).has_value());
}

TEST(LayoutSearch, SaysWhyWhenTheLayoutsThatFitCannotBeSimulated) {
  // Llama2-70B LoRA on 8 H100s, asked to converge in a million times the RCP's samples (some 3e9
  // sequences, 4e8 steps of about 3.7 s: 1.4e9 s, beyond the clock's 2^63 ps, about 106 days).
  // TP1 does not fit (the search meets its out_of_memory first, before any step), and every layout
  // that fits runs past the clock. The search used to return the out_of_memory layout, as if
  // nothing fitted; it says what stopped the layouts that do.
  Workload w = testing::shipped_workload("llama2_70b_lora");
  for (ConvergencePoint& c : w.convergence.points) c.mean *= 1e6;
  const Platform p = testing::shipped_platform("dgx_h100");
  ParallelSpec base = w.parallelism.for_accelerators(8);
  base.micro_batch.reset();
  LayoutSearch one_node;
  one_node.pipeline = {1};
  try {
    const auto e = fastest_layout(w, p, 8, 8, base, one_node, Fidelity::analytic);
    ADD_FAILURE() << "the search returned " << (e ? e->layout.describe() + " " + e->status : "nothing");
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("at 8 accelerators, no layout that fits could be simulated at the analytic fidelity: "),
              std::string::npos) << what;
  }
  // The same search at the RCP's samples finds its layout.
  const auto usual = fastest_layout(testing::shipped_workload("llama2_70b_lora"), p, 8, 8, base, one_node);
  ASSERT_TRUE(usual && usual->ok());
}

TEST(LayoutSearch, APipelineWhereNothingWithoutOneFitsNoneWhereItOnlyAddsItsBubble) {
  // Llama2-70B LoRA held to TP1 on 8 H100s: 69 GB of FP8 weights with the 6 GiB reserve and any
  // CP's share of the activations do not fit 80 GB; a pipeline splits the layers, so the search
  // takes the fastest of PP2, 4, 8, each with the micro-batches that fit. With TP4 allowed (it
  // fits without recompute), the pipelines are tried too and lose: their bubble is all they add.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  ParallelSpec base = w.parallelism.for_accelerators(8);
  base.fix_sizes({1, 1, 1});
  base.micro_batch.reset();
  EXPECT_EQ(estimate_training(w, p, 8, 8, [&] { ParallelSpec s = base; s.micro_batch = 1; return s; }()).status,
            "out_of_memory");
  LayoutSearch tp1;
  tp1.tensor = {1};
  const auto piped = fastest_layout(w, p, 8, 8, base, tp1);
  ASSERT_TRUE(piped && piped->ok());
  EXPECT_GT(piped->layout.pp, 1) << piped->layout.describe();
  EXPECT_EQ(piped->layout_basis, "searched");
  LayoutSearch free;
  const auto flat = fastest_layout(w, p, 8, 8, base, free);
  ASSERT_TRUE(flat && flat->ok());
  EXPECT_EQ(flat->layout.pp, 1) << flat->layout.describe();
}

TEST(LayoutSearch, AnImplementationsMicroBatchesAreTheOnlyOnesTried) {
  // Llama2-70B LoRA on 8 B200s at global batch 32: the recipe TP1 CP2 runs 8 micro-batches of one
  // sequence a replica. Declared TP2 CP1, a replica's 8 sequences fit in micro-batches of 2 of the
  // B200's 192 GB, the largest that fits and so the one tried without a limit. NeMo's packed
  // sequences take one a micro-batch (the workload's search: {micro_batch: [1]}): with the limit
  // the declared layout runs mb1, and so do the search's winner and runner-up.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_b200");
  ParallelSpec base = w.parallelism.for_accelerators(8);
  ASSERT_TRUE(base.search.has_value());
  EXPECT_EQ(base.search->micro_batch, std::vector<int>{1});
  const auto limited = fastest_layout(w, p, 8, 32, base, *base.search);
  ASSERT_TRUE(limited && limited->ok());
  EXPECT_EQ(limited->layout.micro_batch, 1) << limited->layout.describe();
  EXPECT_NE(limited->runner_up.find(" mb1 "), std::string::npos) << limited->runner_up;
  ParallelSpec tp2 = base;
  tp2.fix_sizes({2, 1, 1});
  tp2.micro_batch.reset();
  tp2.declared = true;
  const auto free = fastest_layout(w, p, 8, 32, tp2, LayoutSearch{});
  ASSERT_TRUE(free && free->ok());
  EXPECT_EQ(free->layout.describe(), "TP2 CP1 PP1 DP4 mb2 x4 ZeRO-1");
  const auto held = fastest_layout(w, p, 8, 32, tp2, *base.search);
  ASSERT_TRUE(held && held->ok());
  EXPECT_EQ(held->layout.describe(), "TP2 CP1 PP1 DP4 mb1 x8 ZeRO-1");
}

TEST(LayoutSearch, ARecipeWithAPipelineDoesNotStopThePipelineSearch) {
  // Llama 3.1 405B on 16,384 H200s: nothing without a pipeline fits, the recipe TP8 PP16 does.
  // Pipelines are searched where no layout without one fits, the recipe's own pipeline no reason
  // to stop: the search compares other pipelines (and says which came second).
  const Workload w = testing::shipped_workload("llama3_405b_pretrain");
  const Platform p = testing::shipped_platform("dgx_h200");
  const ParallelSpec base = w.parallelism.for_accelerators(16384);
  const auto e = fastest_layout(w, p, 16384, 2048, base, base.search.value_or(LayoutSearch{}));
  ASSERT_TRUE(e && e->ok());
  EXPECT_GT(e->layout.pp, 1);
  EXPECT_FALSE(e->runner_up.empty()) << e->layout.describe();
}

TEST(LayoutSearch, TensorParallelismDividesTheHeadsAndTheKeyValueGroups) {
  // Megatron-core divides the attention heads and the key-value groups by TP (attention.py):
  // Llama2-70B has 64 heads in 8 groups, so TP8 is its widest; TP16 within a 72-GPU NVLink domain
  // is refused, not simulated.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  EXPECT_EQ(unsupported_split(w, 8, 1, 1), "");
  EXPECT_NE(unsupported_split(w, 16, 1, 1).find("64 attention heads and 8 key-value groups do not split over 16"),
            std::string::npos)
      << unsupported_split(w, 16, 1, 1);
  const Platform nvl72 = testing::shipped_platform("gb200_nvl72");
  const ParallelSpec base = w.parallelism.for_accelerators(512);
  const auto e = fastest_layout(w, nvl72, 512, 64, base, LayoutSearch{});
  ASSERT_TRUE(e && e->ok());
  EXPECT_LE(e->layout.tp, 8) << e->layout.describe();
}

TEST(LayoutSearch, EveryPartOfAPipelineHoldsALayer) {
  // Llama2-70B pre-training is 82 layer instances (the embedding, 80 decoder layers, the head):
  // 82 pipeline parts at most, virtual stages counted, refused as a layout that cannot be (it was
  // an error of the simulation, exit 1, or an out-of-memory row for a stage of no layers).
  const Workload w = testing::shipped_workload("llama2_70b_pretrain");
  EXPECT_EQ(unsupported_split(w, 1, 1, 82), "");
  EXPECT_EQ(unsupported_split(w, 1, 1, 83), "PP83 needs at least 83 layers to place, llama2_70b_pretrain has 82");
  EXPECT_EQ(unsupported_split(w, 1, 1, 4, 20), "");
  EXPECT_EQ(unsupported_split(w, 1, 1, 4, 21),
            "PP4 x 21 virtual stages needs at least 84 layers to place, llama2_70b_pretrain has 82");
}

TEST(LayoutSearch, NeverTriesASplitTheWorkloadDescribesNoTrafficFor) {
  // Stable Diffusion's UNet has no GEMM that TP splits, no CP exchange and no pipeline boundary:
  // unsupported_split refuses each, and an estimate at TP2 says why instead of making TP free.
  const Workload sd = testing::shipped_workload("stable_diffusion");
  EXPECT_EQ(unsupported_split(sd, 1, 1, 1), "");
  EXPECT_NE(unsupported_split(sd, 2, 1, 1).find("no GEMM that tensor parallelism splits"), std::string::npos);
  EXPECT_NE(unsupported_split(sd, 1, 2, 1).find("no context-parallel exchange"), std::string::npos);
  EXPECT_NE(unsupported_split(sd, 1, 1, 2).find("no pipeline boundary"), std::string::npos);
  ParallelSpec tp2;
  tp2.tensor = 2;
  const TrainingEstimate e = estimate_training(sd, testing::shipped_platform("dgx_h100"), 8, 256, tp2);
  EXPECT_EQ(e.status, "invalid_layout");
  // BERT describes Megatron's TP traffic and its pipeline boundaries, but no CP exchange; its
  // implementation splits nothing, so the search keeps it data parallel.
  const Workload bert = testing::shipped_workload("bert");
  EXPECT_EQ(unsupported_split(bert, 2, 1, 2), "");
  EXPECT_NE(unsupported_split(bert, 1, 2, 1), "");
  const auto b = fastest_layout(bert, testing::shipped_platform("dgx_h100"), 64, 4608, bert.parallelism.for_accelerators(64),
                                *bert.parallelism.for_accelerators(64).search);
  ASSERT_TRUE(b && b->ok());
  EXPECT_EQ(b->layout.tp * b->layout.cp * b->layout.pp, 1);
}

}  // namespace sp::models

namespace sp::models {

TEST(LayoutSearch, RecomputesOnlyWhatMemoryForcesAndInterleavesWhereItShortensTheStep) {
  // Eight layers of 1 ms forward and 2 ms backward a sample, each keeping 20 GB of activations a
  // sample and handing on 0.1 GB, on one 80 GB GPU with a batch of 4: even one sample's 160 GB of
  // activations do not fit; full recompute keeps 0.8 + 20 GB a sample, so micro-batches of 2 fit
  // (41.6 GB; of 4, 83.2 do not), and its step is 4 samples x 8 x (1 + 2 + 1) ms = 128 ms.
  // Selective recompute saves nothing here (no attention op), so the search, given [none,
  // selective, full], takes full.
  Platform p = testing::simple_platform();
  p.accelerator.memory_capacity = Bytes(80e9);
  Workload w = testing::eight_layer_workload();
  w.layers[0].activations = Bytes(20e9);
  w.layers[0].pipeline_boundary = Bytes(1e8);
  w.convergence.points = {{4, 1000, 0, 1, true}};  // the search compares times to train
  w.evaluation.timed = false;
  w.runs_per_result = 1;
  LayoutSearch limits;
  limits.tensor = limits.context = limits.pipeline = {1};
  limits.recompute = {Recompute::none, Recompute::selective, Recompute::full};
  const auto one = fastest_layout(w, p, 1, 4, ParallelSpec{}, limits);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->layout.describe(), "TP1 CP1 PP1 DP1 mb2 x2 recompute=full");
  EXPECT_NEAR(to_seconds(one->step.step) * 1e3, 128, 1e-6);
  // Without recompute in the search nothing fits.
  limits.recompute.clear();
  EXPECT_FALSE(fastest_layout(w, p, 1, 4, ParallelSpec{}, limits) && fastest_layout(w, p, 1, 4, ParallelSpec{}, limits)->ok());
  // On two GPUs with activations of 5 GB a layer and 2e9 parameters a layer (2 B weights and 2 B
  // gradients: 64 GB for the model), no layout without a pipeline fits (64 + 40 GB), PP2 does
  // (32 + 40 GB, two micro-batches in flight on the first stage either way): 36 ms as 1F1B, 30 ms
  // interleaved (the bubble halved), and the search, given interleavings [1, 2], takes v2.
  w.layers[0].activations = Bytes(5e9);
  w.layers[0].pipeline_boundary = Bytes(1);  // transfers of microseconds (0.1 GB would take 1 ms each)
  w.layers[0].parameters = w.layers[0].trainable_parameters = 2'000'000'000;
  w.memory.weight_bytes_per_parameter = Bytes(2);
  w.memory.optimizer_bytes_per_trainable_parameter = Bytes(0);  // no optimizer states, for round numbers
  w.gradient_bytes_per_parameter = Bytes(2);
  w.gradient_bucket = Bytes(1e12);
  limits.pipeline = {1, 2};
  limits.virtual_stages = {1, 2};
  ParallelSpec base;
  base.micro_batch = 1;
  const auto two = fastest_layout(w, p, 2, 2, base, limits);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->layout.describe(), "TP1 CP1 PP2 v2 DP1 mb1 x2") << two->status << ": " << two->message;
  EXPECT_NEAR(to_seconds(two->step.step - two->step.optimizer) * 1e3, 30, 0.1);
  // A pipeline is searched beside layouts without one: where DP2 fits only by recomputing.
  // With 4e9 frozen parameters a layer (64 GB of bf16 weights; one trainable parameter each, so
  // no gradients to reduce) and recompute allowed, DP2 does not fit without recompute (64 + 40 GB)
  // and fits with full recompute (64 GB and one layer's 5 GB recomputed at a time), taking
  // 1 sample x 8 x (1 + 2 + 1) = 32 ms; PP2 (32 + 40 GB) with four virtual
  // stages (one layer a chunk) needs no recompute and takes m (f + b) + (p - 1)(f + b) / v =
  // 2 x 12 + 12 / 4 = 27 ms, more than the 10 % by which the recipe (DP2) is kept.
  w.layers[0].parameters = 4'000'000'000;
  w.layers[0].trainable_parameters = 1;
  limits.virtual_stages = {1, 2, 4};
  limits.recompute = {Recompute::none, Recompute::selective, Recompute::full};
  ParallelSpec flat = base;
  flat.fix_sizes({1, 1, 1});
  flat.recompute = Recompute::full;
  const TrainingEstimate dp2 = estimate_training(w, p, 2, 2, flat);
  ASSERT_TRUE(dp2.ok()) << dp2.message;
  EXPECT_NEAR(to_seconds(dp2.step.step - dp2.step.optimizer) * 1e3, 32, 0.1);
  flat.recompute = Recompute::none;
  EXPECT_EQ(estimate_training(w, p, 2, 2, flat).status, "out_of_memory");
  const auto piped = fastest_layout(w, p, 2, 2, base, limits);
  ASSERT_TRUE(piped && piped->ok());
  EXPECT_EQ(piped->layout.describe(), "TP1 CP1 PP2 v4 DP1 mb1 x2") << piped->status << ": " << piped->message;
  EXPECT_EQ(piped->layout_basis, "searched");
  EXPECT_NEAR(to_seconds(piped->step.step - piped->step.optimizer) * 1e3, 27, 0.1);
}

TEST(LayoutSearch, APublishedRowKeepsItsRecipeWhereTheModelWouldPreferAnother) {
  // Llama2-70B LoRA on 64 H100 at GBS 8: NVIDIA's TP4 CP2, as every v4.1 submission on 64 H100 ran
  // it. Asked for the layout a row ran (LayoutChoice::recipe), the search keeps it whatever else is
  // faster; on one node, where TP1 CP2 does not fit an 80 GB H100, the recipe's `otherwise`.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const auto ran = [&](int n, LayoutChoice c) {
    return fastest_layout(w, p, n, 8, w.parallelism.for_accelerators(n), LayoutSearch{}, Fidelity::analytic,
                          LayoutFallback::any, c);
  };
  const auto recipe = ran(64, LayoutChoice::recipe), fastest = ran(64, LayoutChoice::fastest);
  ASSERT_TRUE(recipe && recipe->ok() && fastest && fastest->ok());
  EXPECT_EQ(recipe->layout.describe(), "TP4 CP2 PP1 DP8 mb1 x1 ZeRO-1");
  EXPECT_EQ(recipe->layout_basis, "recipe");
  EXPECT_GE(recipe->time_to_train, fastest->time_to_train);
  const auto node = ran(8, LayoutChoice::recipe);
  ASSERT_TRUE(node && node->ok());
  EXPECT_EQ(node->layout.describe(), "TP4 CP1 PP1 DP2 mb1 x4 ZeRO-1");
}

TEST(LayoutSearch, ALayoutWithMorePartsThanLayersIsRefusedNotThrownOutOfTheSearch) {
  // Eight layers on 8 GPUs, the recipe PP8 (a layer a stage); PP8 with two virtual stages needs
  // 16 parts. Its step cannot be built: the search, pruning it against the recipe, must say so
  // through the candidate (unsimulated) and go on, not throw from the bound.
  Platform p = testing::simple_platform();
  p.accelerator.memory_capacity = Bytes(80e9);
  Workload w = testing::eight_layer_workload();
  w.convergence.points = {{8, 1000, 0, 1, true}};
  w.evaluation.timed = false;
  w.runs_per_result = 1;
  ParallelSpec base;
  base.fix_sizes({1, 1, 8});
  base.micro_batch = 1;
  LayoutSearch limits;
  limits.tensor = limits.context = {1};
  limits.pipeline = {8};
  limits.virtual_stages = {1, 2};
  std::optional<TrainingEstimate> e;
  ASSERT_NO_THROW(e = fastest_layout(w, p, 8, 8, base, limits));
  ASSERT_TRUE(e);
  ASSERT_TRUE(e->ok()) << e->status << ": " << e->message;
  EXPECT_EQ(e->layout.describe(), "TP1 CP1 PP8 DP1 mb1 x8");
}

}  // namespace sp::models
