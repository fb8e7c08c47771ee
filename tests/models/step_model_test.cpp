#include <gtest/gtest.h>

#include <cmath>

#include "models/collective/collective.hpp"
#include "models/step/buckets.hpp"
#include "models/step/step_model.hpp"
#include "models/step/stragglers.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

using testing::layer;

// Per sample each layer takes 1 ms forward on the test accelerator and 2 ms backward when it
// trains (input and weight gradients), 1 ms when it does not (input gradient only). With the
// first layer frozen and batch 1: forward 2 ms, backward 3 ms (the second layer's 2 ms first).
// Pure data parallel over 8 ranks of one node, one sample each (global batch 8).

TEST(StepModel, TinyGradientsHideBehindBackward) {
  // Only the second layer (backward first) has gradients: 1 parameter = 2 bytes, ready after
  // 2 ms of backward; its all-reduce (14 us + tiny) ends long before backward does at 3 ms.
  const Workload w = testing::two_layer_workload(0, 1);
  const Platform p = testing::simple_platform();
  const StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.forward.ps(), milliseconds(2).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(3).ps());
  EXPECT_EQ(r.exposed_communication.ps(), 0);
  EXPECT_EQ(r.step.ps(), milliseconds(5).ps());
  EXPECT_GT(r.communication.ps(), microseconds(14).ps());
  EXPECT_EQ(r.buckets, 1);
}

TEST(StepModel, LargeGradientsAreExposedAsTheClosedFormSays) {
  // Each layer has 0.5e9 parameters = 1 GB of fp16 gradients, one bucket each (cap 1 GB).
  // All-reduce of 1 GB on 8 ranks: c = 14 us + 1.75 * 10 ms = 17.514 ms.
  // Bucket 1 (second layer) ready at 2 ms of backward -> comm 2 .. 19.514 ms.
  // Bucket 2 (first layer) ready at 4 ms -> waits -> comm 19.514 .. 37.028 ms.
  // Step = forward 2 ms + 37.028 ms = 39.028 ms; exposed = 39.028 - 2 - 4 = 33.028 ms.
  Workload w = testing::two_layer_workload(500'000'000, 500'000'000);
  w.gradient_bucket = Bytes(1e9);
  const Platform p = testing::simple_platform();
  const StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  const Duration c = seconds(14e-6 + 1.75 * 1e9 / 100e9);
  EXPECT_EQ(r.buckets, 2);
  EXPECT_EQ(r.communication.ps(), (c * 2).ps());
  EXPECT_EQ(r.step.ps(), (milliseconds(4) + c * 2).ps());
  EXPECT_EQ(r.exposed_communication.ps(), (r.step - milliseconds(6)).ps());
}

TEST(StepModel, OptimizerRunsAfterBackwardAndCommunication) {
  // 1000 trainable parameters x 1e6 B of traffic each = 1 GB at 1 TB/s = 1 ms of optimizer.
  Workload w = testing::two_layer_workload(0, 1000);
  w.optimizer_traffic_per_parameter = Bytes(1e6);
  const Platform p = testing::simple_platform();
  const StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.optimizer.ps(), milliseconds(1).ps());
  EXPECT_EQ(r.step.ps(), milliseconds(6).ps());
}

TEST(StepModel, ComputeIsTheKernelsOfTheLayout) {
  // Batch 4 per rank: the GEMMs have 4 x 4096 rows, 4 TFLOP per layer forward: 8 ms forward,
  // backward (1 + 2) x 4 = 12 ms. The MFU of the compute is 1 (every FLOP at peak).
  const Workload w = testing::two_layer_workload(0, 1);
  const Platform p = testing::simple_platform();
  const StepResult r = simulate_step(w, p, testing::layout(p, 8, 32), 8);
  EXPECT_EQ(r.forward.ps(), milliseconds(8).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(12).ps());
  EXPECT_NEAR(r.compute_efficiency, 1.0, 1e-9);
}

TEST(StepModel, SoftwareFactorsDivideTheWorkTheyCover) {
  // One sample per rank: forward 2 x 1 ms of GEMMs, backward 3 ms. The workload's software
  // efficiency covers element-wise work only, and these layers have none: no change at 2. A
  // software stack twice as fast (efficiency_scale 2) halves all of it: 1 ms and 1.5 ms.
  Workload w = testing::two_layer_workload(0, 1);
  w.software_efficiency = 2;
  Platform p = testing::simple_platform();
  StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.forward.ps(), milliseconds(2).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(3).ps());
  w.software_efficiency = 1;
  p.accelerator.efficiency_scale = 2;
  r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.forward.ps(), milliseconds(1).ps());
  EXPECT_EQ(r.backward.ps(), microseconds(1500).ps());
}

TEST(StepModel, PipelineRunsOneFOneBInMPlusPMinusOneSlots) {
  // Four frozen layers of 1 ms forward and 1 ms backward per sample on PP4 (one layer a stage),
  // 8 micro-batches of 1, transfers of 1 B taking 0.01 ns: 1F1B fills and drains the pipeline in
  // (m + p - 1) = 11 slots of F + B = 2 ms, 22 ms, of which stage 0 computes 16 ms and waits 6 ms
  // for the other stages: the bubble, (p - 1) / (m + p - 1) of the step.
  Workload w = testing::two_layer_workload(0, 0);
  w.layers[0].pipeline_boundary = Bytes(1);
  w.layers = {w.layers[0], w.layers[0], w.layers[0], w.layers[0]};
  Platform p = testing::simple_platform();
  p.protocols[static_cast<int>(Protocol::simple)].step = {Duration::zero(), Duration::zero()};
  ParallelSpec pp;
  pp.pipeline = 4;
  pp.micro_batch = 1;
  const ParallelLayout lay = testing::layout(p, 8, 16, pp);  // DP 2, 8 micro-batches each
  ASSERT_EQ(lay.micro_batches, 8);
  const StepResult r = simulate_step(w, p, lay, 8);
  EXPECT_NEAR(r.step.ps(), milliseconds(22).ps(), 1000);  // the 1 B transfers: ps each
  EXPECT_EQ(r.forward.ps(), milliseconds(8).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(8).ps());
  EXPECT_NEAR(r.bubble.ps(), milliseconds(6).ps(), 1000);
  EXPECT_NEAR(r.bubble / r.step, 3.0 / 11.0, 1e-6);
}

TEST(StepModel, EachPipelineSendCarriesItsStagesBoundaryTensor) {
  // Two frozen 1 ms layers on PP2 (one a stage), 4 micro-batches of 1 on 8 ranks: stage 0 hands
  // on the first layer's boundary, 1 GB a sample, the second layer's (2 GB) is never sent. Stage 0
  // and stage 1 sit in one node (pipeline peers 4 ranks apart, a 100 GB/s scale-up link, 1 us a
  // step): every send, forward and backward, moves 1 GB in 10 ms + 1 us; stage 1 (the receiver
  // forward, the sender backward) has 4 of them on its pipeline stream: 40.004 ms.
  Workload w = testing::two_layer_workload(0, 0);
  w.layers[0].pipeline_boundary = Bytes(1e9);
  w.layers[1].pipeline_boundary = Bytes(2e9);
  const Platform p = testing::simple_platform();
  ParallelSpec pp;
  pp.pipeline = 2;
  pp.micro_batch = 1;
  const ParallelLayout lay = testing::layout(p, 8, 16, pp);  // DP 4, 4 micro-batches each
  ASSERT_EQ(lay.micro_batches, 4);
  StepTrace trace;
  simulate_step(w, p, lay, 8, Fidelity::analytic, &trace);
  int sends = 0;
  for (std::size_t i = 0; i < trace.graph.ops.size(); ++i) {
    const GraphOp& op = trace.graph.ops[i];
    if (op.phase != Phase::pp_send) continue;
    ++sends;
    EXPECT_EQ(op.peer, op.stage == 0 ? 1 : 0);
    EXPECT_DOUBLE_EQ(trace.graph.comms[static_cast<std::size_t>(op.comm)].bytes.value(), 1e9);
    EXPECT_EQ(op.work.ps(), (milliseconds(10) + microseconds(1)).ps());
  }
  EXPECT_EQ(sends, 8);  // 4 forward from stage 0, 4 backward from stage 1
  // Without a boundary after the first layer no stage may end there.
  w.layers[0].pipeline_boundary = Bytes(0);
  EXPECT_THROW(simulate_step(w, p, lay, 8), ModelError);
}

TEST(StepModel, FlowGivesEachPipelineStageLinksOfItsOwn) {
  // Llama2-70B LoRA at TP8 PP4 on 64 H100s: each stage's ranks have their own NVLink ports and
  // NICs, so the stages' TP all-gathers and gradient reductions do not share a link; alone on the
  // network the flow fidelity then gives the closed forms' step (it was 19 % slower when all
  // stages' collectives shared one link per tier).
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  ParallelSpec s = w.parallelism.for_accelerators(64);
  s.fix_sizes({8, 1, 4});
  const ParallelLayout lay = testing::layout(p, 64, 8, s);
  const StepResult analytic = simulate_step(w, p, lay, 64, Fidelity::analytic);
  const StepResult flow = simulate_step(w, p, lay, 64, Fidelity::flow);
  EXPECT_NEAR(to_seconds(flow.step) / to_seconds(analytic.step), 1.0, 0.005);
}

TEST(StepModel, ManyMicroBatchesAreExtrapolatedFromTheFirstOnesExactly) {
  // Gradient accumulation over a huge batch: each micro-batch adds the same forward and backward,
  // so the step of m > 64 micro-batches is the step of 64 plus (m - 64) times what the 64th added.
  // Checked against the graph at 63 and 64 (both simulated whole) for m = 100 and 10^6 (which a
  // graph of every micro-batch could not hold: memory grew with the global batch).
  const Workload w = testing::two_layer_workload(0, 1);
  const Platform p = testing::simple_platform();
  ParallelSpec spec;
  spec.micro_batch = 1;
  const auto step_at = [&](std::int64_t m) { return simulate_step(w, p, testing::layout(p, 8, 8 * m, spec), 8); };
  const StepResult at63 = step_at(63), at64 = step_at(64);
  const Duration each = at64.step - at63.step;
  EXPECT_GT(each, Duration::zero());
  const StepResult at100 = step_at(100);
  EXPECT_EQ(at100.step.ps(), (at64.step + each * 36).ps());
  EXPECT_EQ(at100.forward.ps(), (at64.forward + (at64.forward - at63.forward) * 36).ps());
  EXPECT_NEAR(at100.compute_efficiency, at64.compute_efficiency, 1e-9);
  const StepResult huge = step_at(1'000'000);
  EXPECT_EQ(huge.step.ps(), (at64.step + each * (1'000'000 - 64)).ps());
  EXPECT_LE(huge.events, 2 * at64.events);  // simulated at 64 and 65 micro-batches, not a million
}

TEST(StepModel, StragglersCostSigmaTimesComputeTimesTheExpectedMaximum) {
  // sigma 2 %, 8 ranks: E[max of 8 normals] = 1.4236; compute 5 ms (1 ms forward, 2 + 2 ms
  // backward, nothing to hide behind) -> 5 x 0.02 x 1.4236 ms, inside the step.
  const Workload w = testing::two_layer_workload(0, 1);
  Platform p = testing::simple_platform();
  p.compute_jitter = 0.02;
  StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_NEAR(to_seconds(r.straggler), 5e-3 * 0.02 * 1.4236, 1e-7);
  EXPECT_EQ((r.step - r.straggler).ps(), milliseconds(5).ps());
  // The spread between GPUs and the jitter are independent normals: sigma = sqrt(1.5^2 + 2^2) % =
  // 2.5 %. One rank waits for nobody.
  p.gpu_speed_spread = 0.015;
  r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_NEAR(to_seconds(r.straggler), 5e-3 * 0.025 * 1.4236, 1e-7);
  EXPECT_NEAR(straggler_factor(p, 8), 0.025 * 1.4236, 1e-5);
  EXPECT_EQ(straggler_factor(p, 1), 0.0);
}

TEST(StepModel, AShortPipelineStageAbsorbsItsOwnSlowGpu) {
  // 16 ranks in two pipeline stages of 8. Equal stages (5 ms each): the slowest of all 16 sets the
  // pace, sigma E[M_16] = 0.02 x 1.7660. The first stage at 4 ms of the second's 5: its ranks would
  // need to be 25 % slow (12 sigma) to overtake, so only the second stage's 8 count:
  // sigma E[M_8] = 0.02 x 1.4236. A single stage is the closed form of N.
  Platform p = testing::simple_platform();
  p.gpu_speed_spread = 0.02;
  EXPECT_NEAR(straggler_factor(p, 16, {milliseconds(5), milliseconds(5)}), 0.02 * max_of_normals(16).mean, 1e-7);
  EXPECT_NEAR(straggler_factor(p, 16, {milliseconds(4), milliseconds(5)}), 0.02 * 1.42360, 1e-5);
  EXPECT_EQ(straggler_factor(p, 16, {milliseconds(5)}), straggler_factor(p, 16));
}

TEST(StepModel, TheSimulatedPipelineChargesTheLongStagesSlowestRank) {
  // Two frozen layers on PP2 over 8 ranks (DP4, 4 micro-batches of 1): stage 0 computes 1 ms
  // forward and 1 ms backward a micro-batch, stage 1 twice that (two teraflop GEMMs). With a 2 %
  // spread stage 0's ranks never catch up with stage 1 (50 sigma), so every operation is longer by
  // 0.02 E[M_4] = 0.02 x 1.029375 (stage 1's 4 ranks), not 0.02 E[M_8] = 0.02 x 1.423600. The
  // stage that ends last is stage 0 (the drain): its 8 ms of compute pay 0.16470 ms.
  Workload w = testing::two_layer_workload(0, 0);
  w.layers[0].pipeline_boundary = Bytes(1);
  w.layers[1].ops = {testing::teraflop_gemm(), testing::teraflop_gemm()};
  w.layers[1].forward = Flops(2e12);
  w.layers[1].backward = Flops(2e12);
  Platform p = testing::simple_platform();
  p.gpu_speed_spread = 0.02;
  ParallelSpec pp;
  pp.pipeline = 2;
  pp.micro_batch = 1;
  const ParallelLayout lay = testing::layout(p, 8, 16, pp);
  ASSERT_EQ(lay.micro_batches, 4);
  const StepResult r = simulate_step(w, p, lay, 8);
  EXPECT_EQ((r.forward + r.backward).ps(), milliseconds(8).ps());
  EXPECT_NEAR(to_seconds(r.straggler), 8e-3 * 0.02 * 1.029375, 1e-9);
}

TEST(StepModel, AStragglerHidesWhereCollectivesWaitAnyway) {
  // The slowest rank's extra compute is simulated in the graph: where the step waits for a long
  // gradient all-reduce after the backward, only the part of the stretch that delays the
  // reduction's start shows. Two layers, 1 + 2 ms then 1 + 2 ms, large gradients (exposed); the
  // stretch of 5 ms x sigma M_N delays the last bucket's start by as much, and the step by the
  // same: it cannot hide behind its own reduction, which starts only when the backward ends.
  Workload w = testing::two_layer_workload(1'000'000'000, 1'000'000'000);
  Platform p = testing::simple_platform();
  const StepResult even = simulate_step(w, p, testing::layout(p, 16, 16), 16);
  p.gpu_speed_spread = 0.02;
  const StepResult slow = simulate_step(w, p, testing::layout(p, 16, 16), 16);
  const double stretch = 0.02 * max_of_normals(16).mean;
  EXPECT_NEAR(to_seconds(slow.straggler), to_seconds(even.forward + even.backward + even.optimizer) * stretch, 1e-9);
  EXPECT_GT(slow.step, even.step);
  EXPECT_LE(slow.step - even.step, slow.straggler);
}

TEST(StepModel, DistributedOptimizerMovesWhatAnAllReduceMoves) {
  // ZeRO-1 replaces each all-reduce by a reduce-scatter, and gathers the parameters after the
  // update: bytes over the bottleneck (p-1)/p n + (p-1)/p n = 2(p-1)/p n, the all-reduce's.
  const Platform p = testing::simple_platform();
  const Group g = packed_group(p.topology, 8);
  const auto ar = cost_terms(p, g, CollectiveOp::all_reduce, Algorithm::ring, Protocol::simple);
  const auto rs = cost_terms(p, g, CollectiveOp::reduce_scatter, Algorithm::ring, Protocol::simple);
  const auto ag = cost_terms(p, g, CollectiveOp::all_gather, Algorithm::ring, Protocol::simple);
  EXPECT_DOUBLE_EQ(rs->bandwidth[0].bytes_factor + ag->bandwidth[0].bytes_factor, ar->bandwidth[0].bytes_factor);
  // And its optimizer touches 1/8 of the states: 1000 parameters x 1e6 B / 8 ranks = 125 us.
  Workload w = testing::two_layer_workload(0, 1000);
  w.optimizer_traffic_per_parameter = Bytes(1e6);
  ParallelSpec zero;
  zero.distributed_optimizer = Sharding::global;
  const StepResult r = simulate_step(w, p, testing::layout(p, 8, 8, zero), 8);
  EXPECT_EQ(r.optimizer.ps(), microseconds(125).ps());
}

TEST(StepModel, LoraMovesOnlyItsAdapterGradients) {
  // Llama2-70B LoRA at TP4: each GPU reduces its quarter of the 44,564,480 adapter parameters in
  // bf16: 44,564,480 x 2 B / 4 = 22,282,240 B per step, in one bucket (Megatron-core's default at
  // DP8: max(40 M, 1 M x 8) = 40 M parameters, 80 MB in bf16); the frozen 69 B parameters
  // (138 GB in bf16) never move.
  const Workload w = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const ParallelLayout lay = testing::layout(p, 64, 8, w.parallelism.for_accelerators(64));
  EXPECT_EQ(lay.describe(), "TP4 CP2 PP1 DP8 mb1 x1 ZeRO-1");
  std::vector<std::pair<int, Bytes>> produced;  // every instance, backward order, TP-sharded
  int instance = 0;
  for (auto l = w.layers.rbegin(); l != w.layers.rend(); ++l) {
    for (int r = 0; r < l->repeat; ++r) {
      produced.emplace_back(instance++, w.gradient_bytes_per_parameter * (static_cast<double>(l->trainable_parameters) / 4));
    }
  }
  double bytes = 0;
  EXPECT_DOUBLE_EQ(w.gradient_bucket_for(8).value(), 80e6);
  EXPECT_DOUBLE_EQ(w.gradient_bucket_for(128).value(), 256e6);  // 1 M x DP 128 = 128 M, above 40 M
  EXPECT_TRUE(std::isinf(w.gradient_bucket_for(8, 1, 0).value()));  // a later stage: one bucket
  EXPECT_TRUE(std::isinf(w.gradient_bucket_for(8, 0, 1).value()));  // a later chunk: one bucket
  for (const BucketPlan::Bucket& b : plan_buckets(produced, w.gradient_bucket_for(8)).buckets) bytes += b.bytes.value();
  EXPECT_DOUBLE_EQ(bytes, 44'564'480.0 * 2 / 4);
  const StepResult r = simulate_step(w, p, lay, 64);
  EXPECT_EQ(r.buckets, 1);
  // TP all-gathers and reduce-scatters run every layer: 80 layers x 8 per pass-pair.
  EXPECT_GT(r.tensor_parallel.ps(), 0);
}

// Llama2-70B pre-training at TP8 PP4: the first stage holds the embedding (32,000 x 8,192 =
// 262,144,000) and 20 layers of 855,654,400 parameters (q and o 8,192^2, k and v 8,192 x 1,024,
// SwiGLU 3 x 8,192 x 28,672, two norms 8,192): 17,375,232,000 over TP8 = 2,171,904,000 a rank,
// 8.69 GB of fp32 gradients. Megatron-core's buckets of max(40 M, 1 M x DP) parameters cut it
// into CEIL(8.69 GB / 160 MB) = 55 at DP32 and CEIL(8.69 GB / 2,048 MB) = 5 at DP512; the later
// stages, which Megatron-core does not bucket, reduce theirs as one.
TEST(StepModel, MegatronBucketsGrowWithTheDataParallelGroupOnTheFirstStageOnly) {
  const Workload w = testing::shipped_workload("llama2_70b_pretrain");
  const Platform p = testing::shipped_platform("dgx_h100");
  ParallelSpec spec = w.parallelism.for_accelerators(1024);
  spec.tensor = 8;
  spec.context = 1;
  spec.pipeline = 4;
  spec.micro_batch = 1;
  spec.virtual_stages = 1;
  EXPECT_EQ(simulate_step(w, p, testing::layout(p, 1024, 1024, spec), 1024).buckets, 55);
  EXPECT_EQ(simulate_step(w, p, testing::layout(p, 16384, 1024, spec), 16384).buckets, 5);
  const std::vector<std::pair<int, Bytes>> stage = {{1, Bytes(3e6)}, {0, Bytes(3e6)}};
  EXPECT_EQ(plan_buckets({BucketSegment{stage, Bytes(2e6)}, BucketSegment{{{2, Bytes(5e6)}}, Bytes(1e300)}}).buckets.size(),
            4u);  // 2 MB, 2 MB, the 2 MB left of the first segment, then the second's 5 MB alone
  EXPECT_THROW(plan_buckets(stage, Bytes(0)), ModelError);
}

TEST(StepModel, AnEvaluationWaitsForTheTensorParallelCommunicationItDoesNotOverlap) {
  // Both layers pass 0.4 GB of hidden states per sample through 2 all-gathers and 2
  // reduce-scatters per pass, at TP4 inside the node (DP2, one sample per micro-batch). One ring
  // lap: 3 x 1 us + 3/4 x 0.4 GB / 100 GB/s = 3.003 ms each. An evaluation's forward of both
  // layers waits for:
  //  - nothing, where TP overlaps compute with or without gradients;
  //  - the 2 x 2 all-gathers, 12.012 ms, where the all-gathers' overlap needs gradients
  //    (TransformerEngine 1.x);
  //  - all 2 x 4, 24.024 ms, where TP never overlaps.
  // The training step is the same in the first two: training runs with gradients.
  Workload w = testing::two_layer_workload(0, 1);
  for (LayerGroup& l : w.layers) {
    l.tp_tensor = Bytes(0.4e9);
    l.tp_all_gathers = l.tp_reduce_scatters = 2;
  }
  const Platform p = testing::simple_platform();
  ParallelSpec tp4;
  tp4.tensor = 4;
  tp4.micro_batch = 1;
  const Duration lap = seconds(3e-6 + 0.75 * 0.4e9 / 100e9);
  const StepResult overlapped = simulate_step(w, p, testing::layout(p, 8, 2, tp4), 8);
  EXPECT_EQ(overlapped.evaluation_forward.waits.ps(), 0);
  tp4.evaluation_overlaps_all_gathers = false;
  const StepResult gated = simulate_step(w, p, testing::layout(p, 8, 2, tp4), 8);
  EXPECT_EQ(gated.evaluation_forward.waits.ps(), (lap * 4).ps());
  EXPECT_EQ(gated.step.ps(), overlapped.step.ps());
  EXPECT_EQ(gated.evaluation_forward.compute.ps(), overlapped.evaluation_forward.compute.ps());
  tp4.overlap_tensor_parallel = false;
  const StepResult serial = simulate_step(w, p, testing::layout(p, 8, 2, tp4), 8);
  EXPECT_EQ(serial.evaluation_forward.waits.ps(), (lap * 8).ps());
}

TEST(StepModel, AnEagerEvaluationWaitsForTheHostToDispatchItsKernels) {
  // Training replays graphs; the evaluation dispatches each kernel eagerly at 3 ms of host time.
  // One sample per micro-batch: each layer is one GEMM of 1 ms. From an idle host and device the
  // first GEMM is dispatched at 3 ms and ends at 4 ms, the second is dispatched at 6 ms and ends
  // at 7 ms: 2 ms computing, 5 ms waiting for the host. At 0.5 ms per kernel the host keeps
  // ahead after the first dispatch: 0.5 + 2 = 2.5 ms, 0.5 ms waiting.
  Workload w = testing::two_layer_workload(0, 1);
  const Platform p = testing::simple_platform();
  w.evaluation_costs.dispatch_per_kernel = milliseconds(3);
  StepResult r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.evaluation_forward.compute.ps(), milliseconds(2).ps());
  EXPECT_EQ(r.evaluation_forward.waits.ps(), milliseconds(5).ps());
  EXPECT_EQ(r.step.ps(), milliseconds(5).ps());  // training is not dispatched eagerly
  w.evaluation_costs.dispatch_per_kernel = microseconds(500);
  r = simulate_step(w, p, testing::layout(p, 8, 8), 8);
  EXPECT_EQ(r.evaluation_forward.waits.ps(), microseconds(500).ps());
}

TEST(StepModel, LlamasEvaluationWaitsForItsAllGathersAndItsHost) {
  // The shipped file at TP4 CP2 on DGX H100s: without the eager dispatch, an evaluation forward
  // waits for exactly its 80 layers x 2 all-gathers of the micro-batch's hidden states split by
  // CP (134,217,728 B / 2) over the TP group, and the one before the vocabulary-parallel lm_head,
  // one NCCL selection each; with the file's dispatch
  // it waits longer still (the host, not the GPUs, bounds it), and training's step is the same.
  const Workload file = testing::shipped_workload("llama2_70b_lora");
  const Platform p = testing::shipped_platform("dgx_h100");
  const ParallelLayout lay = testing::layout(p, 64, 8, file.parallelism.for_accelerators(64));
  ASSERT_EQ(lay.describe(), "TP4 CP2 PP1 DP8 mb1 x1 ZeRO-1");
  ASSERT_FALSE(lay.evaluation_overlaps_all_gathers);
  Workload graphs = file;
  graphs.evaluation_costs.dispatch_per_kernel = Duration::zero();
  const Duration gather = select_collective(p, lay.tp_group, CollectiveOp::all_gather, Bytes(134217728.0 / 2)).time;
  const StepResult without_host = simulate_step(graphs, p, lay, 64);
  EXPECT_EQ(without_host.evaluation_forward.waits.ps(), (gather * 161).ps());
  const StepResult eager = simulate_step(file, p, lay, 64);
  EXPECT_GT(eager.evaluation_forward.waits, without_host.evaluation_forward.waits);
  EXPECT_EQ(eager.evaluation_forward.compute.ps(), without_host.evaluation_forward.compute.ps());
  EXPECT_EQ(eager.step.ps(), without_host.step.ps());
}

TEST(Buckets, ALargeInstanceFillsSeveralAndTheRestClosesLast) {
  // Backward order: instance 1 (300 B) then instance 0 (100 B); cap 150 B. Instance 1 fills two
  // buckets, reduced after its backward; instance 0's 100 B form the last one, after its own.
  const BucketPlan p = plan_buckets({{1, Bytes(300)}, {0, Bytes(100)}}, Bytes(150));
  ASSERT_EQ(p.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(p.buckets[0].bytes.value(), 150);
  EXPECT_EQ(p.buckets[0].closes_at, 1);
  EXPECT_EQ(p.buckets[1].closes_at, 1);
  EXPECT_DOUBLE_EQ(p.buckets[2].bytes.value(), 100);
  EXPECT_EQ(p.buckets[2].closes_at, 0);
  EXPECT_EQ(p.first.at(1), 0u);
  EXPECT_EQ(p.first.at(0), 2u);
}

TEST(Buckets, SmallInstancesShareABucket) {
  // Three instances of 10 B in a 25 B bucket: the first closes at the third instance (30 B
  // produced), the 5 B left close with it as the last bucket.
  const BucketPlan p = plan_buckets({{2, Bytes(10)}, {1, Bytes(10)}, {0, Bytes(10)}}, Bytes(25));
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0].closes_at, 0);
  EXPECT_DOUBLE_EQ(p.buckets[1].bytes.value(), 5);
  EXPECT_EQ(p.buckets[1].closes_at, 0);
  EXPECT_EQ(p.first.at(2), 0u);
  EXPECT_EQ(p.first.at(0), 0u);
}

TEST(Buckets, FrozenInstancesProduceNothing) {
  // Backward runs the frozen instance 1 first: no bytes, no bucket; instance 0's 20 B close last.
  const BucketPlan p = plan_buckets({{1, Bytes(0)}, {0, Bytes(20)}}, Bytes(1e6));
  ASSERT_EQ(p.buckets.size(), 1u);
  EXPECT_DOUBLE_EQ(p.buckets[0].bytes.value(), 20);
  EXPECT_EQ(p.buckets[0].closes_at, 0);
  EXPECT_EQ(p.first.count(1), 0u);
}

}  // namespace sp::models
