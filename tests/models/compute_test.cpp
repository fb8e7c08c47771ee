// The kernel-level compute model (models/compute): each mechanism against a case worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"
#include "test_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {

using testing::op;

TEST(Ops, ConvolutionsReadTheirInputOnceNotTheIm2colMatrix) {
  // A 3x3 convolution, 64 -> 64 channels at 100 x 100 output positions, one image, stride 1:
  // the implicit GEMM is m = 10,000, n = 64, k = 576. Arithmetic: 79 tiles of 128 x 64 in one
  // wave of the toy's 100 units, 2 x 128 x 64 x (576 + 64) / 5e12 = 2.10 us. Its im2col A is
  // 10,000 x 576 x 2 B = 11.5 MB, but memory holds the input once: 10,000 x 64 x 2 B = 1.28 MB;
  // with the weight (576 x 64 x 2 B = 73.7 KB) and the output (1.28 MB), 2.634 MB at 0.8 TB/s
  // = 3.29 us, so the kernel is memory-bound at 2 + 3.29 us (the im2col bytes would say 17.2 us).
  const auto conv = config::load_string("{conv: c, in: 64, out: 64, kernel: 3, positions: [10000]}", "op.yaml");
  const Op o = parse_op(conv);
  EXPECT_DOUBLE_EQ(o.input_reuse, 9.0);
  Shard s;
  s.parameters = 36864;
  const std::vector<Kernel> forward = expand(o, s, Pass::forward, "bf16");
  ASSERT_EQ(forward.size(), 1u);
  const double bytes = (10000.0 * 64 + 576.0 * 64) * 2 + 10000.0 * 64 * 2;
  EXPECT_NEAR(testing::us(kernel_time(forward[0], testing::toy_accelerator())), 2 + bytes / 0.8e12 * 1e6, 1e-3);
  // Backward: the input gradient writes the input's shape (its C is the im2col view), the weight
  // gradient reads it (its B is).
  const std::vector<Kernel> backward = expand(o, s, Pass::backward, "bf16");
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_DOUBLE_EQ(backward[0].shape.c_reuse, 9.0);
  EXPECT_DOUBLE_EQ(backward[0].shape.n, 576.0);
  EXPECT_DOUBLE_EQ(backward[1].shape.b_reuse, 9.0);
  EXPECT_DOUBLE_EQ(backward[1].shape.k, 10000.0);
  // Stride 2 skips three quarters of the windows' starts: a 3x3 window then repeats an input
  // element 9 / 4 times; a 1x1 convolution never repeats one.
  EXPECT_DOUBLE_EQ(parse_op(config::load_string("{conv: c, in: 8, out: 8, kernel: 3, stride: 2, positions: [4]}", "o"))
                       .input_reuse,
                   2.25);
  EXPECT_DOUBLE_EQ(parse_op(config::load_string("{conv: c, in: 8, out: 8, kernel: 1, stride: 2, positions: [4]}", "o"))
                       .input_reuse,
                   1.0);
}

TEST(Ops, NchwConvolutionOverUnalignedPositionsIsStrided) {
  // A 1x1 convolution 64 -> 64 over 2,500 positions of one sample in NCHW: the positions are
  // the contiguous run, 2,500 x 2 B is not a multiple of 16 B, so the GEMM has no vector access.
  // m = 2,500, n = k = 64: 20 tiles of 128 x 64 in one wave, 2 x 128 x 64 x (64 + 64) / 5e12 =
  // 0.42 us of arithmetic; it moves (2,500 x 64 + 64 x 64) x 2 B in and 2,500 x 64 x 2 B out,
  // 648,192 B, at a quarter of 0.8 TB/s: 3.241 us, + 2 us latency. At 2,496 positions (a
  // multiple of 8) or in channels-last it is an ordinary GEMM: 647,168 B at 0.8 TB/s = 0.809 us.
  Accelerator a = testing::toy_accelerator();
  a.compute.strided_access_fraction = 0.25;
  const auto first = [&](const char* yaml) {
    return expand(parse_op(config::load_string(yaml, "op.yaml")), Shard{}, Pass::forward, "bf16").at(0);
  };
  const Kernel odd = first("{conv: c, in: 64, out: 64, kernel: 1, positions: [2500], layout: nchw}");
  EXPECT_TRUE(odd.shape.strided);
  EXPECT_NEAR(testing::us(kernel_time(odd, a)), 2 + 648192 / 0.2e12 * 1e6, 1e-6);
  const Kernel even = first("{conv: c, in: 64, out: 64, kernel: 1, positions: [2496], layout: nchw}");
  EXPECT_FALSE(even.shape.strided);
  EXPECT_NEAR(testing::us(kernel_time(even, a)), 2 + 647168 / 0.8e12 * 1e6, 1e-6);
  EXPECT_FALSE(first("{conv: c, in: 64, out: 64, kernel: 1, positions: [2500]}").shape.strided);
  // A 3x3 one in NCHW runs channels-last between cuDNN's transposes: its input (2,500 x 64, the
  // im2col view reduced by its 9 reuses) and output (2,500 x 64), 640 kB, read and written, in two
  // transpose launches of the library; then the GEMM, not strided. Its backward launches the weight
  // gradient inside the same op as the input gradient.
  const Op c3 = parse_op(config::load_string("{conv: c, in: 64, out: 64, kernel: 3, positions: [2500], layout: nchw}", "o"));
  const std::vector<Kernel> k = expand(c3, Shard{}, Pass::forward, "bf16");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kind, Kernel::Kind::stream);
  EXPECT_TRUE(k[0].access == Access::transpose && k[0].library_launch);
  EXPECT_DOUBLE_EQ(k[0].bytes.value(), 2 * (2500.0 * 64 + 2500.0 * 64) * 2);
  EXPECT_DOUBLE_EQ(k[0].count, 2.0);
  EXPECT_FALSE(k[1].shape.strided || k[1].library_launch);
  const std::vector<Kernel> b = expand(c3, Shard{}, Pass::backward, "bf16");
  ASSERT_EQ(b.size(), 4u);  // transposes, input gradient, transposes, weight gradient
  EXPECT_FALSE(b[1].library_launch);
  EXPECT_TRUE(b[3].library_launch);
}

TEST(ComputeModel, FusionDividesElementWiseWorkAndTheStackDividesAll) {
  // simple_platform's accelerator: 1 PFLOP/s, 1 TB/s, no latency, every efficiency 1. A trained
  // layer of one teraflop GEMM (1 ms forward; 1 ms input and 1 ms weight gradient backward) and
  // element-wise work of 1 GB forward and 2 GB backward per sample (1 ms and 2 ms at 1 TB/s).
  // software_efficiency 2 halves the element-wise part, efficiency_scale 0.5 doubles everything:
  //   forward  = 1 ms / 0.5 + 1 ms / (2 x 0.5) = 3 ms
  //   backward = 2 ms / 0.5 + 2 ms / (2 x 0.5) = 6 ms
  Accelerator a = testing::simple_platform().accelerator;
  a.efficiency_scale = 0.5;
  Workload w = testing::two_layer_workload(1, 1);
  w.software_efficiency = 2;
  LayerGroup l = w.layers[0];
  l.parameters = l.trainable_parameters = 100'000'000;  // the GEMM's 10,000 x 10,000 weight
  Op ew = op(OpKind::elementwise, "norm");
  ew.forward_bytes_per_sample = Bytes(1e9);
  ew.backward_bytes_per_sample = Bytes(2e9);
  ew.forward_kernels = ew.backward_kernels = 1;
  l.ops.push_back(ew);
  Shard s;
  s.tokens_per_sample = w.tokens_per_sample;
  const LayerCompute c = layer_compute(l, w, a, s);
  EXPECT_NEAR(to_seconds(c.forward.time), 3e-3, 1e-12);
  EXPECT_NEAR(to_seconds(c.backward.time), 6e-3, 1e-12);
  // Of which the element-wise kernels, bound by HBM (what communication's memory traffic slows,
  // step_executor.hpp): 1 ms and 2 ms.
  EXPECT_NEAR(to_seconds(c.forward.memory_bound), 1e-3, 1e-12);
  EXPECT_NEAR(to_seconds(c.backward.memory_bound), 2e-3, 1e-12);
  // A launch latency of 10 us lengthens every kernel, the norm's by 10 us / (2 x 0.5): its part of
  // the time becomes 1.01 ms, of which the streaming (what HBM contention slows) is still 1 ms.
  a.compute.kernel_latency = microseconds(10);
  const LayerCompute d = layer_compute(l, w, a, s);
  EXPECT_NEAR(to_seconds(d.forward.memory_bound), 1e-3, 1e-12);
  LayerGroup gemm_only = l;
  gemm_only.ops.pop_back();
  EXPECT_NEAR(to_seconds(d.forward.time - layer_compute(gemm_only, w, a, s).forward.time), 1.01e-3, 1e-12);
}

TEST(ComputeModel, AMemoRemembersItsOwnObjectsShardsAndNothingElse) {
  // Two layers of one teraflop GEMM a sample at 1 PFLOP/s without latency: 2 ms forward a layer at
  // a micro-batch of 2, 4 ms at 4; the same at half the efficiency scale (a changed copy of the
  // accelerator) 4 ms.
  const Accelerator a = testing::simple_platform().accelerator;
  const Workload w = testing::two_layer_workload(1, 1);
  ParallelLayout two;
  two.micro_batch = 2;
  ParallelLayout four = two;
  four.micro_batch = 4;
  Accelerator half = a;
  half.efficiency_scale = 0.5;
  const auto ms = [](const std::vector<LayerCompute>& c) { return to_seconds(c.at(1).forward.time) * 1e3; };
  EXPECT_NEAR(ms(instance_computes(w, a, two)), 2.0, 1e-9);
  EXPECT_EQ(InstanceComputeMemo::lookup(w, a, two), nullptr);  // no scope, nothing remembered
  {
    const InstanceComputeMemo memo(w, a);
    const std::vector<LayerCompute>* first = InstanceComputeMemo::lookup(w, a, two);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(InstanceComputeMemo::lookup(w, a, two), first);  // the same answer, not computed again
    EXPECT_NEAR(ms(instance_computes(w, a, two)), 2.0, 1e-9);
    EXPECT_NEAR(ms(instance_computes(w, a, four)), 4.0, 1e-9);  // another shard, its own entry
    EXPECT_NE(InstanceComputeMemo::lookup(w, a, four), first);
    // Another accelerator object (a changed copy) is not this scope's: computed as it is.
    EXPECT_EQ(InstanceComputeMemo::lookup(w, half, two), nullptr);
    EXPECT_NEAR(ms(instance_computes(w, half, two)), 4.0, 1e-9);
    {
      const InstanceComputeMemo inner(w, half);  // scopes nest: the inner one answers for its objects
      EXPECT_NE(InstanceComputeMemo::lookup(w, half, two), nullptr);
      EXPECT_EQ(InstanceComputeMemo::lookup(w, a, two), nullptr);
    }
    EXPECT_EQ(InstanceComputeMemo::lookup(w, a, two), first);  // the outer one again
  }
  EXPECT_EQ(InstanceComputeMemo::lookup(w, a, two), nullptr);
}

TEST(Launch, TheHostDispatchesKernelsOneAfterAnother) {
  // d = 10 us per kernel. Ten 30 us kernels: the device bounds it, 10 + 10 x 30 = 310 us (the
  // first one waits for its dispatch). Ten 2 us kernels: the host does, 10 x 10 + 2 = 102 us.
  const Duration d = microseconds(10);
  EXPECT_EQ(issued_time({{10, microseconds(30)}}, d), microseconds(310));
  EXPECT_EQ(issued_time({{10, microseconds(2)}}, d), microseconds(102));
  // Without dispatch cost (CUDA graphs) the kernels run back to back.
  EXPECT_EQ(issued_time({{10, microseconds(30)}, {10, microseconds(2)}}, Duration::zero()), microseconds(320));
  // One 100 us kernel, then twenty 1 us ones: the host dispatched kernels 2..10 while the long
  // one ran (it ends at 110 us, dispatches end at 10 + 20 x 10 = 210 us); the last short kernel
  // runs after its dispatch: 211 us. Kernel by kernel the same recurrence gives the same.
  IssueState s;
  issue(s, {{1, microseconds(100)}, {20, microseconds(1)}}, d);
  EXPECT_EQ(s.device, microseconds(211));
  EXPECT_EQ(s.host, microseconds(210));
  Duration host, device;
  for (int i = 0; i < 21; ++i) {
    host += d;
    device = std::max(host, device) + (i == 0 ? microseconds(100) : microseconds(1));
  }
  EXPECT_EQ(device, microseconds(211));
}

TEST(Launch, APassKeepsItsKernelsInOrderAndFusionRemovesSomeOfThem) {
  // The runs of a pass add up to its time, and fusion (software_efficiency 2) halves the
  // element-wise kernels, each as long as before.
  Workload w = testing::two_layer_workload(1, 1);
  LayerGroup l = w.layers[0];
  l.parameters = l.trainable_parameters = 100'000'000;
  Op ew = op(OpKind::elementwise, "norm");
  ew.forward_bytes_per_sample = Bytes(1e9);
  ew.backward_bytes_per_sample = Bytes(2e9);
  ew.forward_kernels = ew.backward_kernels = 4;
  l.ops.push_back(ew);
  w.software_efficiency = 2;
  Shard s;
  s.tokens_per_sample = w.tokens_per_sample;
  const LayerCompute c = layer_compute(l, w, testing::simple_platform().accelerator, s);
  ASSERT_EQ(c.forward.runs.size(), 2u);  // the GEMM, then the element-wise kernels
  EXPECT_DOUBLE_EQ(c.forward.runs[0].count, 1);
  EXPECT_DOUBLE_EQ(c.forward.runs[1].count, 2);  // 4 kernels, half of them fused away
  EXPECT_NEAR(testing::us(c.forward.runs[1].each), 250, 1e-6);  // 1 ms / 2 / 2 kernels
  Duration sum;
  for (const KernelRun& r : c.forward.runs) sum += scale(r.each, r.count);
  EXPECT_NEAR(testing::us(sum), testing::us(c.forward.time), 1e-3);
}

TEST(Ops, TensorParallelSplitsChangeTheShapes) {
  // A column-parallel GEMM (n split), a row-parallel one (k split), attention by heads and the
  // element-wise rest by tokens under sequence parallelism: TP4 on 2 x 1024 tokens.
  Op col = op(OpKind::gemm, "up");
  col.n = 4096, col.k = 1024, col.tp_split = TpSplit::n;
  Op row = op(OpKind::gemm, "down");
  row.n = 1024, row.k = 4096, row.tp_split = TpSplit::k;
  Op attn = op(OpKind::attention, "self");
  attn.heads = 16, attn.head_dim = 64;
  Op ew = op(OpKind::elementwise, "norms");
  ew.forward_bytes_per_token = Bytes(1000), ew.forward_kernels = 3;
  Shard s;
  s.samples = 2, s.tokens_per_sample = 1024, s.tp = 4;
  const Kernel c = expand(col, s, Pass::forward, "bf16").at(0);
  EXPECT_EQ(c.shape.m, 2048);
  EXPECT_EQ(c.shape.n, 1024);
  EXPECT_EQ(c.shape.k, 1024);
  const Kernel r = expand(row, s, Pass::forward, "bf16").at(0);
  EXPECT_EQ(r.shape.k, 1024);
  EXPECT_EQ(r.shape.n, 1024);
  const Kernel a = expand(attn, s, Pass::forward, "bf16").at(0);
  EXPECT_EQ(a.shape.batch, 4 * 2);  // 16 / 4 heads x 2 sequences
  EXPECT_EQ(a.shape.m, 1024);
  EXPECT_EQ(expand(ew, s, Pass::forward, "bf16").at(0).bytes.value(), 2048.0 * 1000 / 4);
  s.sequence_parallel = false;  // norms on every token of every TP rank
  EXPECT_EQ(expand(ew, s, Pass::forward, "bf16").at(0).bytes.value(), 2048.0 * 1000);
  ew.tensor_region = true;  // ... unless they act on TP-split activations
  EXPECT_EQ(expand(ew, s, Pass::forward, "bf16").at(0).bytes.value(), 2048.0 * 1000 / 4);
}

TEST(Ops, BackwardHasInputAndWeightGradientsUnlessFrozen) {
  // Forward C[m x n] = A[m x k] W[k x n]; backward dA = dC W^T (m x k, inner n) and
  // dW = A^T dC (n x k, inner m); frozen weights (LoRA's base) skip dW.
  Op g = op(OpKind::gemm, "q");
  g.n = 512, g.k = 256;
  Shard s;
  s.tokens_per_sample = 100;
  auto back = expand(g, s, Pass::backward, "bf16");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].shape.n, 256);
  EXPECT_EQ(back[0].shape.k, 512);
  EXPECT_EQ(back[1].shape.m, 512);
  EXPECT_EQ(back[1].shape.k, 100);
  g.frozen = true;
  EXPECT_EQ(expand(g, s, Pass::backward, "bf16").size(), 1u);
  s.backward = false;  // a frozen stem before every trainable layer
  EXPECT_TRUE(expand(g, s, Pass::backward, "bf16").empty());
}

TEST(Ops, ParseErrorsNameTheKey) {
  const auto bad = [](const std::string& yaml) {
    return input_error_message([&] { parse_op(config::load_string(yaml, "ops.yaml")); });
  };
  EXPECT_NE(bad("{gemm: q, n: 8}").find("k: missing required key"), std::string::npos) << bad("{gemm: q, n: 8}");
  EXPECT_NE(bad("{gemm: q, n: 8, k: 8, tp_split: m}").find("unknown split 'm'"), std::string::npos);
  EXPECT_NE(bad("{conv: c, in: 30, out: 64, kernel: 3, groups: 32, positions: [4]}").find("must divide"),
            std::string::npos);
  EXPECT_NE(bad("{gemm: q, attention: a, n: 8, k: 8}").find("exactly one of"), std::string::npos);
  EXPECT_NE(bad("{elementwise: e, kernels: {forward: 1, backward: 1}, region: middle}").find("unknown region"),
            std::string::npos);
  EXPECT_NE(bad("{elementwise: e, kernels: {forward: 1, backward: 1}, access: gather}").find("unknown access 'gather'"),
            std::string::npos);
  EXPECT_NE(bad("{conv: c, in: 8, out: 8, kernel: 1, positions: [4], layout: nhcw}").find("unknown layout 'nhcw'"),
            std::string::npos);
  EXPECT_NE(bad("{elementwise: e, kernels: {forward: 1, backward: 1}, blocks: 2.5}").find("whole number of blocks"),
            std::string::npos);
  const std::string per_family =
      bad("{attention: a, heads: 8, head_dim: 64, context_parallel_precision: {default: bf16, blackwell: fp4}}");
  EXPECT_NE(per_family.find("context_parallel_precision.blackwell"), std::string::npos) << per_family;
  EXPECT_NE(per_family.find("unknown precision 'fp4'"), std::string::npos) << per_family;
  // A map without a default would leave every other family at the op's own precision.
  const std::string no_default = bad("{attention: a, heads: 8, head_dim: 64, context_parallel_precision: {blackwell: fp8}}");
  EXPECT_NE(no_default.find("context_parallel_precision: needs a default precision"), std::string::npos) << no_default;
  const std::string empty = bad("{attention: a, heads: 8, head_dim: 64, context_parallel_precision: {}}");
  EXPECT_NE(empty.find("needs a default precision"), std::string::npos) << empty;
}

TEST(Workload, OpsMustAddUpToTheDocumentedFlops) {
  // The shipped files pass the check; one whose ops miss a GEMM is rejected at the layer's key.
  const Workload bert = testing::shipped_workload("bert");
  // QKV, out, FFN: 2 x 254 x (3072 + 1024 + 4096 + 4096) x 1024; attention 4 x 254^2 x 1024.
  EXPECT_DOUBLE_EQ(bert.layers[1].forward.value(), 2.0 * 254 * 12288 * 1024 + 4.0 * 254 * 254 * 1024);
  const std::string path = std::string(SP_SOURCE_DIR) + "/models/workloads/bert.yaml";
  std::string text = config::read_text_file(path);
  const std::string ffn = "      - {gemm: ffn_up, n: 4096, k: 1024, tp_split: n}\n";
  text.erase(text.find(ffn), ffn.size());
  try {
    parse_workload(config::load_string(text, "bert.yaml"));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[1].forward: the ops add up to"), std::string::npos) << e.what();
  }
}

TEST(Workload, FrozenLayersBeforeTheFirstTrainableRunNoBackward) {
  // LoRA: the frozen embedding needs no gradient; the frozen lm_head after trainable layers does.
  const Workload llama = testing::shipped_workload("llama2_70b_lora");
  EXPECT_FALSE(llama.layers.front().backward_pass);
  EXPECT_TRUE(llama.layers.back().backward_pass);
  EXPECT_DOUBLE_EQ(llama.layers.back().backward.value(), 4.294967296e12);  // input gradient only
}

}  // namespace sp::models
