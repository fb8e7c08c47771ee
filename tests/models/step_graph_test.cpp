// The step as an op graph built from workloads: fat-tree leaves, the fidelities, host time,
// recompute, interleaving, sequence parallelism, each against a case worked by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/compute/compute_model.hpp"
#include "models/compute/launch.hpp"
#include "models/step/step_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

TEST(FatTree, OversubscriptionSlowsARingThatCrossesLeavesByTheClosedForm) {
  // 8 nodes, 2 per leaf, 4:1: each leaf's uplinks carry 2 nodes' NICs / 4 = half a node's NICs,
  // while a ring crosses each leaf once with a whole node's traffic: the scale-out term runs at
  // min(1, 2 / (4 x 1)) = 1/2 of its bandwidth. A tree crosses (8 - 2) / 8 x 2 = 1.5 nodes' worth
  // per leaf: 2 / (4 x 1.5) = 1/3. Alone on the network the flow fidelity gives the same.
  Platform p = testing::shipped_platform("dgx_h100");
  const Group g = packed_group(p.topology, 64);
  const Bytes n(1 << 30);
  const auto ring = [&](const Platform& q) {
    return *cost_terms(q, g, CollectiveOp::all_reduce, Algorithm::ring, Protocol::simple);
  };
  const CostTerms flat = ring(p);
  p.topology.tiers[1].nodes_per_leaf = 2;
  p.topology.tiers[1].oversubscription = 4;
  const CostTerms blocked = ring(p);
  ASSERT_EQ(flat.bandwidth.size(), blocked.bandwidth.size());
  const BandwidthTerm& out = blocked.bandwidth.back();
  EXPECT_EQ(out.tier, 1u);
  EXPECT_DOUBLE_EQ(out.spine_share, 0.5);
  EXPECT_DOUBLE_EQ(out.bandwidth.value(), flat.bandwidth.back().bandwidth.value() / 2);
  const CostTerms tree = *cost_terms(p, g, CollectiveOp::all_reduce, Algorithm::tree, Protocol::simple);
  EXPECT_DOUBLE_EQ(tree.bandwidth.back().spine_share, 1.0 / 3.0);
  const Duration analytic = time_collective(p, g, CollectiveOp::all_reduce, n, {Algorithm::ring, Protocol::simple},
                                            Fidelity::analytic)
                                .time;
  const Duration flow =
      time_collective(p, g, CollectiveOp::all_reduce, n, {Algorithm::ring, Protocol::simple}, Fidelity::flow).time;
  EXPECT_EQ(analytic.ps(), blocked.time(n).ps());
  EXPECT_NEAR(to_seconds(flow) / to_seconds(analytic), 1.0, 1e-9);
  EXPECT_GT(to_seconds(analytic), 1.5 * to_seconds(flat.time(n)));  // the NICs bound the ring
}

TEST(StepFidelity, FlowAgreesWithAnalyticWhenNothingSharesALinkAndNotWhenSomethingDoes) {
  // BERT on 16 DGX H100 GPUs: one DP stream, its buckets one after another, nothing else on the
  // NICs: the two fidelities give the same step. Llama2 LoRA TP4 CP2 on 64: TP all-gathers and
  // CP exchanges cross each GPU's NVLink port at once: the flows share it and the step differs.
  const Platform p = testing::shipped_platform("dgx_h100");
  const Workload bert = testing::shipped_workload("bert");
  const ParallelLayout b = testing::layout(p, 16, 768, bert.parallelism.for_accelerators(16));
  const StepResult ba = simulate_step(bert, p, b, 16, Fidelity::analytic);
  const StepResult bf = simulate_step(bert, p, b, 16, Fidelity::flow);
  EXPECT_NEAR(to_seconds(bf.step) / to_seconds(ba.step), 1.0, 1e-9);
  const Workload llama = testing::shipped_workload("llama2_70b_lora");
  const ParallelLayout l = testing::layout(p, 64, 8, llama.parallelism.for_accelerators(64));
  const StepResult la = simulate_step(llama, p, l, 64, Fidelity::analytic);
  const StepResult lf = simulate_step(llama, p, l, 64, Fidelity::flow);
  EXPECT_GT(to_seconds(lf.tensor_parallel), 1.01 * to_seconds(la.tensor_parallel));
}

TEST(StepModel, TheStepIsItsComputeInterferenceWaitsAndStragglers) {
  // On the stage that ends last the compute stream is always busy or waiting for something, so
  // the parts add up to the step, for every workload's v4.1 layout at 64 GPUs.
  const Platform p = testing::shipped_platform("dgx_h100");
  for (const char* name : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"}) {
    const Workload w = testing::shipped_workload(name);
    const std::int64_t gbs = typical_global_batch(w, 64, 64 / 8);
    const ParallelLayout l = testing::layout(p, 64, gbs, w.parallelism.for_accelerators(64));
    const StepResult r = simulate_step(w, p, l, 64);
    const Duration parts = r.forward + r.backward + r.optimizer + r.interference + r.exposed_communication +
                           r.bubble + r.straggler + r.host;
    EXPECT_EQ(parts.ps(), r.step.ps()) << name;
    Duration critical;
    for (const Duration& d : r.critical) critical += d;
    EXPECT_EQ(critical.ps(), (r.step - r.host).ps()) << name;  // a path with no gaps, the slowest rank's
    EXPECT_GT(r.straggler, Duration::zero()) << name;
  }
}

TEST(StepModel, TheHostTimePerStepAddsToTheStep) {
  // The two-layer workload on one 1 PFLOP/s GPU: 2 ms forward, 3 ms backward with CUDA graphs.
  // 4 ms of host time per step (batch handoff, eager set-up, a synchronisation) runs before the
  // graph and the accelerator waits for it: 5 + 4 = 9 ms, compute unchanged.
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(0, 1);
  const ParallelLayout l = testing::layout(p, 1, 1);
  const StepResult without = simulate_step(w, p, l, 1);
  w.host_per_step = milliseconds(4);
  const StepResult with = simulate_step(w, p, l, 1);
  EXPECT_EQ(with.host.ps(), milliseconds(4).ps());
  EXPECT_EQ((with.step - without.step).ps(), milliseconds(4).ps());
  EXPECT_EQ((with.forward + with.backward).ps(), milliseconds(5).ps());
  // The workload file's key, in the compute block; a negative time names file, line and key.
  std::string text = config::read_text_file(std::string(SP_SOURCE_DIR) + "/models/workloads/bert.yaml");
  const std::string key = "host_per_step: \"1 ms\"";
  const std::size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  const auto parsed = [&](const std::string& value) {
    std::string t = text;
    t.replace(at, key.size(), "host_per_step: \"" + value + "\"");
    return parse_workload(config::load_string(t, "bert.yaml"));
  };
  EXPECT_EQ(parsed("2 ms").host_per_step.ps(), milliseconds(2).ps());
  try {
    parsed("-1 ms");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bert.yaml:" + std::to_string(line)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host_per_step"), std::string::npos) << e.what();
  }
}

TEST(StepModel, AnEagerStepWaitsForTheHostToDispatchItsKernels) {
  // One GPU of 1 PFLOP/s, no kernel latency: two layers of one 1 ms GEMM forward, the first
  // frozen (input gradient only, 1 ms), the second trained (input and weight gradient, 1 ms
  // each). With CUDA graphs: 2 ms forward, 3 ms backward. Dispatched eagerly at 3 ms per kernel
  // (device end, host end):
  //   forward 1: max(1, 3 + 1, 3 + 1) = 4 ms, host at 3
  //   forward 2: max(4 + 1, 3 + 3 + 1, 3 + 3 + 1) = 7 ms, host at 6: 3 ms
  //   backward 2 (two kernels): max(7 + 2, 6 + 3 + 2, 6 + 6 + 1) = 13 ms, host at 12: 6 ms
  //   backward 1: max(13 + 1, 12 + 3 + 1, 12 + 3 + 1) = 16 ms: 3 ms; 9 ms backward in all
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(0, 1);
  const ParallelLayout l = testing::layout(p, 1, 1);
  StepResult r = simulate_step(w, p, l, 1);
  EXPECT_EQ(r.forward.ps(), milliseconds(2).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(3).ps());
  w.dispatch_per_kernel = parse_launch(config::load_string("l: {mode: eager, dispatch: \"3 ms\"}\n", "s.yaml").at("l"));
  r = simulate_step(w, p, l, 1);
  EXPECT_EQ(r.forward.ps(), milliseconds(7).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(9).ps());
  // `eager` alone means the measured PyTorch cost; a typo names the valid values.
  EXPECT_EQ(parse_launch(config::load_string("l: eager\n", "s.yaml").at("l")), eager_dispatch());
  EXPECT_EQ(parse_launch(config::load_string("l: cuda_graphs\n", "s.yaml").at("l")), Duration::zero());
  try {
    parse_launch(config::load_string("l: eagre\n", "s.yaml").at("l"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda_graphs, eager"), std::string::npos) << e.what();
  }
}

}  // namespace sp::models

namespace sp::models {

TEST(StepModel, FullRecomputeRunsEachForwardAgainBeforeItsBackward) {
  // The two-layer workload, both layers trained, one sample on one 1 PFLOP/s GPU: forward 1 ms a
  // layer, backward 2 ms (input and weight gradients): 6 ms. Full recompute runs each layer's
  // forward again before its backward: 4 ms of forward, 4 of backward, 8 ms in all (Korthikanti
  // et al.'s Table 4, 22B layer: backward 11.9 ms -> 19.5 ms, the forward's 7.7 added).
  const Platform p = testing::simple_platform();
  const Workload w = testing::two_layer_workload(1, 1);
  ParallelSpec spec;
  const StepResult plain = simulate_step(w, p, testing::layout(p, 1, 1, spec), 1);
  EXPECT_EQ(plain.step.ps(), milliseconds(6).ps());
  spec.recompute = Recompute::full;
  const ParallelLayout full = testing::layout(p, 1, 1, spec);
  EXPECT_EQ(full.describe(), "TP1 CP1 PP1 DP1 mb1 x1 recompute=full");
  const StepResult r = simulate_step(w, p, full, 1);
  EXPECT_EQ(r.forward.ps(), milliseconds(4).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(4).ps());
  EXPECT_EQ(r.step.ps(), milliseconds(8).ps());
  // Nothing to recompute selectively without an attention op.
  spec.recompute = Recompute::selective;
  EXPECT_EQ(simulate_step(w, p, testing::layout(p, 1, 1, spec), 1).step.ps(), milliseconds(6).ps());
}

TEST(StepModel, FullRecomputeRerunsOnlyTheCheckpointedLayers) {
  // The same 6 ms step with the second layer outside the checkpointed block (as Megatron's output
  // layer is): only the first layer's forward runs again, 3 ms of forward, 4 of backward, 7 ms.
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(1, 1);
  w.layers[1].checkpointed = false;
  ParallelSpec spec;
  spec.recompute = Recompute::full;
  const StepResult r = simulate_step(w, p, testing::layout(p, 1, 1, spec), 1);
  EXPECT_EQ(r.forward.ps(), milliseconds(3).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(4).ps());
  EXPECT_EQ(r.step.ps(), milliseconds(7).ps());
}

TEST(StepModel, SelectiveRecomputeAddsTheAttentionCoresForwardToTheBackward) {
  // The second layer also runs a causal attention of 8 heads of 128 over its 5000 tokens; selective
  // recompute runs that op's forward again in the backward and nothing else.
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(1, 1);
  Op attention;
  attention.kind = OpKind::attention;
  attention.name = "core";
  attention.heads = attention.kv_heads = 8;
  attention.head_dim = 128;
  attention.causal = true;
  w.layers[1].ops.push_back(attention);
  LayerGroup core = w.layers[1];
  core.ops = {attention};
  Shard one;
  one.tokens_per_sample = w.tokens_per_sample;
  const Duration a = layer_compute(core, w, p.accelerator, one).forward.time;
  ASSERT_GT(a, Duration::zero());
  ParallelSpec spec;
  const StepResult plain = simulate_step(w, p, testing::layout(p, 1, 1, spec), 1);
  spec.recompute = Recompute::selective;
  const StepResult r = simulate_step(w, p, testing::layout(p, 1, 1, spec), 1);
  EXPECT_EQ((r.backward - plain.backward).ps(), a.ps());
  EXPECT_EQ(r.forward.ps(), plain.forward.ps());
  EXPECT_EQ((r.step - plain.step).ps(), a.ps());
}

}  // namespace sp::models

namespace sp::models {

TEST(StepModel, InterleavingDividesThePipelineBubbleByTheVirtualStages) {
  // Eight identical layers, 1 ms forward and 2 ms backward each (one 1 TFLOP GEMM at 1 PFLOP/s,
  // input and weight gradients), on two stages with two micro-batches of one sample. 1F1B: a stage
  // holds four layers, f = 4 ms and b = 8 ms a micro-batch, and the step is (m + p - 1)(f + b) =
  // 3 x 12 = 36 ms: 24 of work, a bubble of (p - 1)(f + b) = 12. Interleaved with v = 2 (each stage
  // two chunks of two layers): the bubble is (p - 1)(f + b) / v = 6 ms, the step 30 ms (Narayanan
  // et al. SC'21, section 2.2.2). The transfers (a byte each, within the node) add microseconds.
  const Platform p = testing::simple_platform();
  Workload w = testing::eight_layer_workload();
  ParallelSpec spec;
  spec.pipeline = 2;
  spec.micro_batch = 1;
  const StepResult plain = simulate_step(w, p, testing::layout(p, 2, 2, spec), 2);
  EXPECT_NEAR(to_seconds(plain.step) * 1e3, 36, 0.1);
  EXPECT_NEAR(to_seconds(plain.bubble) * 1e3, 12, 0.1);
  spec.virtual_stages = 2;
  const ParallelLayout inter = testing::layout(p, 2, 2, spec);
  EXPECT_EQ(inter.describe(), "TP1 CP1 PP2 v2 DP1 mb1 x2");
  const StepResult r = simulate_step(w, p, inter, 2);
  EXPECT_NEAR(to_seconds(r.step) * 1e3, 30, 0.1);
  EXPECT_NEAR(to_seconds(r.bubble) * 1e3, 6, 0.1);
  EXPECT_EQ((r.forward + r.backward).ps(), (plain.forward + plain.backward).ps());  // the same work
  // 70 micro-batches: the step is simulated at 64 and 66 (whole groups of PP2) and extrapolated,
  // the same as the whole graph (m v (f_c + b_c) + (p - 1)(f + b) / v = 70 x 12 + 6 = 846 ms).
  const ParallelLayout many = testing::layout(p, 2, 70, spec);
  const Execution whole = execute_step(build_step_graph(w, p, many), p, Fidelity::analytic);
  const StepResult extrapolated = simulate_step(w, p, many, 2);
  EXPECT_NEAR(to_seconds(extrapolated.step) * 1e3, 846, 0.2);
  EXPECT_NEAR(to_seconds(extrapolated.step - extrapolated.straggler), to_seconds(whole.end - SimTime::zero()), 1e-6);
  // With sequence parallelism a stage's first compute waits for TP all-gathers, which wait for
  // the pipeline's receive: the wait before the all-gathers start is still bubble (at least the
  // (p - 1)(f + b) = 12 ms above, plus the all-gathers' share on the last stage's fill), and
  // exposed TP time never exceeds the TP collectives' own busy time.
  spec.virtual_stages = 1;
  spec.tensor = 2;
  spec.overlap_tensor_parallel = false;  // Megatron's: compute waits for its TP collectives
  w.layers[0].tp_tensor = Bytes(1e6);
  w.layers[0].tp_all_gathers = w.layers[0].tp_reduce_scatters = 2;
  const StepResult tp = simulate_step(w, p, testing::layout(p, 4, 2, spec), 4);
  EXPECT_GE(to_seconds(tp.bubble) * 1e3, 12);
  EXPECT_GT(tp.exposed_tensor_parallel, Duration::zero());
  EXPECT_LE(tp.exposed_tensor_parallel, tp.tensor_parallel);
  spec.tensor = 1;
  spec.virtual_stages = 2;
  // Interleaving needs a pipeline and whole groups of PP micro-batches.
  std::string why;
  spec.pipeline = 1;
  EXPECT_FALSE(resolve_layout(spec, p.topology, 2, 2, why));
  EXPECT_EQ(why, "2 virtual stages need a pipeline (PP > 1)");
  spec.pipeline = 2;
  EXPECT_FALSE(resolve_layout(spec, p.topology, 2, 3, why));
  EXPECT_EQ(why, "interleaving needs whole groups of PP2 micro-batches, not 3");
}

}  // namespace sp::models

namespace sp::models {

namespace {

// A memory-bound pass outside the TP region: 1 MB a token forward, 2 MB backward, one kernel each.
Op norm_op() {
  Op norm;
  norm.kind = OpKind::elementwise;
  norm.name = "norm";
  norm.forward_bytes_per_token = Bytes(1e6);
  norm.backward_bytes_per_token = Bytes(2e6);
  norm.forward_kernels = norm.backward_kernels = 1;
  return norm;
}

}  // namespace

TEST(StepModel, WithoutSequenceParallelismNormsRunWholeAndTpReducesByAllReduce) {
  // A memory-bound pass outside the TP region, 1 MB a token forward and 2 MB backward over 5000
  // tokens at 1 TB/s: 5 and 10 ms on one GPU. Under TP2 with sequence parallelism each rank runs
  // it on half the tokens (2.5 + 5 ms); without, on all of them (5 + 10 ms): 7.5 ms more a step.
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(1, 1);
  w.layers[1].ops.push_back(norm_op());
  ParallelSpec spec;
  spec.tensor = 2;
  const StepResult sp = simulate_step(w, p, testing::layout(p, 2, 1, spec), 2);
  spec.sequence_parallel = false;
  const ParallelLayout plain = testing::layout(p, 2, 1, spec);
  EXPECT_EQ(plain.describe(), "TP2 CP1 PP1 DP1 mb1 x1 noSP");
  const StepResult no = simulate_step(w, p, plain, 2);
  EXPECT_NEAR(to_seconds(no.step - sp.step) * 1e3, 7.5, 1e-6);
  // With a TP tensor (two all-gathers and two reduce-scatters a pass under SP), the layer's
  // communication becomes two all-reduces after its compute each pass, no all-gather before.
  w.layers[1].tp_tensor = Bytes(1e8);
  w.layers[1].tp_all_gathers = w.layers[1].tp_reduce_scatters = 2;
  const StepGraph g = build_step_graph(w, p, plain);
  int all_reduce = 0, other = 0;
  for (const GraphOp& op : g.ops) {
    if (op.phase != Phase::tp_comm) continue;
    (g.comms[static_cast<std::size_t>(op.comm)].terms.op == CollectiveOp::all_reduce ? all_reduce : other)++;
  }
  EXPECT_EQ(all_reduce, 4);  // forward 2, backward 2
  EXPECT_EQ(other, 0);
}

TEST(StepModel, EachLayersMemoryBoundShareAndEachCollectivesHbmTimeReachTheGraph) {
  // The norm of the test above under TP2 with sequence parallelism, alone in the second layer: its
  // compute ops stream all their time (share 1, simple_platform has no kernel latency), the first
  // layer's GEMM none (share 0), the optimizer streams its states (1); each collective carries
  // collective_memory_time of its algorithm, group and size.
  const Platform p = testing::simple_platform();
  Workload w = testing::two_layer_workload(1, 1);
  w.layers[1].ops = {norm_op()};
  w.layers[1].tp_tensor = Bytes(1e8);
  w.layers[1].tp_all_gathers = w.layers[1].tp_reduce_scatters = 2;
  ParallelSpec spec;
  spec.tensor = 2;
  const StepGraph g = build_step_graph(w, p, testing::layout(p, 2, 1, spec));
  int norms = 0, gemms = 0, optimizers = 0, comms = 0;
  for (const GraphOp& op : g.ops) {
    if (op.comm >= 0) {
      const GraphComm& c = g.comms[static_cast<std::size_t>(op.comm)];
      EXPECT_EQ(c.memory_time, collective_memory_time(p, c.terms.algorithm, c.terms.op, c.group.ranks(), c.bytes));
      EXPECT_GT(c.memory_time, Duration{});
      ++comms;
    } else if (op.phase == Phase::optimizer) {
      EXPECT_EQ(op.memory_share, 1.0);
      ++optimizers;
    } else if (op.layer >= 0) {
      const std::string& layer = g.layers[static_cast<std::size_t>(op.layer)];
      const bool norm = layer == w.layers[1].name;
      EXPECT_NEAR(op.memory_share, norm ? 1.0 : 0.0, 1e-12) << layer;
      ++(norm ? norms : gemms);
    }
  }
  EXPECT_GT(comms, 0);
  EXPECT_EQ(norms, 2);  // forward and backward
  EXPECT_GT(gemms, 0);
  EXPECT_EQ(optimizers, 1);
}

}  // namespace sp::models
