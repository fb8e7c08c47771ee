// Which tensor-parallel collectives a layer's compute waits for (models/step/step_graph_layers.cpp,
// Builder::tp_exposure): the all-gathers of GEMMs run outside userbuffers, and the input-gradient
// reduce-scatters run in bulk where no weight-gradient GEMM hides them.
#include <gtest/gtest.h>

#include <cstdint>

#include "models/step/step_graph.hpp"
#include "models/step/step_model.hpp"
#include "test_fixtures.hpp"

namespace sp::models {
namespace {

// two_layer_workload(0, 1) on one TP4 group (4 ranks, one sample a step): the first layer has no
// TP and runs 1 ms each pass (its input gradient backward); the second is LoRA-like, its 1 ms GEMM
// frozen (backward 1 ms, the input gradient alone) while its adapters train. Its TP tensor,
// 10 MB, goes through 2 all-gathers (before "qkv" and "fc1") and 2 reduce-scatters each pass. One
// ring lap on
// simple_platform: 3 x 1 us + 3/4 x 10 MB / 100 GB/s = 78 us. Beside the compute, 4 laps (312 us)
// hide within a pass's 1 ms.
Workload lora_like() {
  Workload w = testing::two_layer_workload(0, 1);
  LayerGroup& l = w.layers[1];
  l.ops[0].frozen = true;
  l.tp_tensor = Bytes(1e7);
  l.tp_all_gathers = l.tp_reduce_scatters = 2;
  l.tp_column_gemms = {"qkv", "fc1"};
  l.tp_gemms_frozen = true;
  return w;
}

double step_us(const Workload& w, const ParallelSpec& spec) {
  const Platform p = testing::simple_platform();
  return testing::us(simulate_step(w, p, testing::layout(p, 4, 1, spec), 4).step);
}

ParallelSpec tp4() {
  ParallelSpec s;
  s.tensor = 4;
  s.micro_batch = 1;
  return s;
}

}  // namespace

TEST(TensorParallelOverlap, GemmsOutsideUserbuffersWaitForTheirAllGatherAndScatterInBulk) {
  // Everything overlapped: 1 + 1 ms forward, 1 + 1 ms backward (4,000 us). With qkv outside
  // userbuffers (Megatron's tp_comm_overlap_disable_qkv) its forward all-gather runs before the
  // layer's compute (+78 us) and, the qkv weights frozen, its input gradient's reduce-scatter
  // after the layer's backward, before the first layer's (+78 us): 4,156 us. fc1 as well: twice
  // that, 4,312 us.
  const Workload w = lora_like();
  ParallelSpec s = tp4();
  const double overlapped = step_us(w, s);
  EXPECT_NEAR(overlapped, 4000, 1e-3);
  s.tensor_parallel_not_overlapped = PlainTpGemms{true, false};
  EXPECT_NEAR(step_us(w, s), 4156, 1e-3);
  s.tensor_parallel_not_overlapped = PlainTpGemms{true, true};
  EXPECT_NEAR(step_us(w, s), 4312, 1e-3);
  // A hand-written layer names no GEMMs: the key leaves it as it was.
  Workload unnamed = w;
  unnamed.layers[1].tp_column_gemms.clear();
  EXPECT_NEAR(step_us(unnamed, s), 4000, 1e-3);
}

TEST(TensorParallelOverlap, BulkReduceScattersHideOnlyBehindAWeightGradient) {
  // In bulk, the backward's 2 reduce-scatters wait for the frozen layer's compute (+156 us:
  // 4,156 us); where the weights train (the second layer's backward runs 2 ms, its weight
  // gradient beside them) they hide, in bulk as pipelined (5,000 us).
  const Workload w = lora_like();
  ParallelSpec s = tp4();
  s.dgrad_reduce_scatter = DgradReduceScatter::bulk;
  EXPECT_NEAR(step_us(w, s), 4156, 1e-3);
  Workload trained = w;
  trained.layers[1].ops[0].frozen = false;
  trained.layers[1].tp_gemms_frozen = false;
  EXPECT_NEAR(step_us(trained, s), 5000, 1e-3);
  s.dgrad_reduce_scatter = DgradReduceScatter::pipelined;
  EXPECT_NEAR(step_us(trained, s), 5000, 1e-3);
  // bulk_under_context_parallel is pipelined at CP1: as pipelined, 4,000 us.
  s.dgrad_reduce_scatter = DgradReduceScatter::bulk_under_context_parallel;
  EXPECT_NEAR(step_us(w, s), 4000, 1e-3);
  // Bulk and qkv outside userbuffers: the forward's one all-gather and the backward's two
  // reduce-scatters (4,234 us), not three.
  s.dgrad_reduce_scatter = DgradReduceScatter::bulk;
  s.tensor_parallel_not_overlapped = PlainTpGemms{true, false};
  EXPECT_NEAR(step_us(w, s), 4234, 1e-3);
}

TEST(TensorParallelOverlap, WithoutSequenceParallelismTheUserbuffersKeysSayNothing) {
  // Userbuffers overlap TP only under sequence parallelism. Without it the layer all-reduces after
  // its row-parallel GEMMs forward and its column-parallel ones backward (no all-gathers): the
  // keys leave that as it was, every all-reduce beside the compute (4,000 us).
  const Workload w = lora_like();
  ParallelSpec s = tp4();
  s.sequence_parallel = false;
  EXPECT_NEAR(step_us(w, s), 4000, 1e-3);
  s.tensor_parallel_not_overlapped = PlainTpGemms{true, true};
  s.dgrad_reduce_scatter = DgradReduceScatter::bulk;
  EXPECT_NEAR(step_us(w, s), 4000, 1e-3);
}

TEST(TensorParallelOverlap, AnEvaluationWaitsForTheAllGathersOutsideUserbuffers) {
  // The evaluation's forward (no gradients) waits for qkv's all-gather, 78 us, where the
  // all-gathers otherwise overlap without gradients; for both (156 us) where they need gradients.
  const Workload w = lora_like();
  const Platform p = testing::simple_platform();
  ParallelSpec s = tp4();
  s.tensor_parallel_not_overlapped = PlainTpGemms{true, false};
  const auto waits = [&](const ParallelSpec& spec) {
    return testing::us(simulate_step(w, p, testing::layout(p, 4, 1, spec), 4).evaluation_forward.waits);
  };
  EXPECT_NEAR(waits(s), 78, 1e-3);
  s.evaluation_overlaps_all_gathers = false;
  EXPECT_NEAR(waits(s), 156, 1e-3);
}

TEST(TensorParallelOverlap, LlamasRecipeScattersInBulkAtContextParallelTwoAlone) {
  // NVIDIA's v4.1 Llama2 LoRA recipe: qkv outside userbuffers everywhere, the other input-gradient
  // reduce-scatter (fc1's) pipelined at TP4 CP1 and in bulk at TP4 CP2. In the graph, per decoder
  // layer and micro-batch: the forward's compute waits for 1 all-gather of its own (besides the
  // previous layer's, which every layer waits for); 1 reduce-scatter waits for the backward's
  // compute at CP1, 2 at CP2 (80 layers, one micro-batch each at 64 and 4 GPUs), and at CP2 the
  // frozen lm_head's one as well (161).
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const auto count = [&](int n, std::int64_t gbs, int& gathers_before, int& scatters_after) {
    ParallelSpec spec = w.parallelism.for_accelerators(n);
    // At 4 the recipe's TP1 CP2 does not fit an 80 GB H100; its alternative, TP4 CP1, is what ran.
    if (n == 4) spec.fix_sizes({4, 1, 1});
    const ParallelLayout lay = testing::layout(p, n, gbs, spec);
    const StepGraph g = build_step_graph(w, p, lay);
    gathers_before = scatters_after = 0;
    for (const GraphOp& op : g.ops) {
      for (std::uint32_t d : op.deps) {
        const GraphOp& before = g.ops[d];
        if (op.phase == Phase::forward && before.phase == Phase::tp_comm && before.layer == op.layer) ++gathers_before;
        if (op.phase == Phase::tp_comm && before.phase == Phase::backward && before.layer == op.layer) ++scatters_after;
      }
    }
    return lay.describe();
  };
  int gathers = 0, scatters = 0;
  EXPECT_EQ(count(64, 8, gathers, scatters), "TP4 CP2 PP1 DP8 mb1 x1 ZeRO-1");
  EXPECT_EQ(gathers, 80);
  EXPECT_EQ(scatters, 161);
  EXPECT_EQ(count(4, 1, gathers, scatters), "TP4 CP1 PP1 DP1 mb1 x1 ZeRO-1");
  EXPECT_EQ(gathers, 80);
  EXPECT_EQ(scatters, 80);
}

}  // namespace sp::models
