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

TEST(Ops, FusedAttentionNeverMovesItsScoresThroughMemory) {
  // Stable Diffusion's largest self-attention: 5 heads of 64 over 4,096 queries and keys, one
  // sample, forward (2 products). Each product is a 4096 x 64 GEMM with an inner 4,096 (the keys)
  // per head. Arithmetic on the toy (5e12 FLOP/s a unit): 32 tiles of 128 x 64 a head, 160 in 2
  // waves of 100 units, 2 x 2 x 128 x 64 x (4096 + 64) / 5e12 = 27.263 us (split-K is slower: 4
  // waves of 2,112 k steps plus 13.1 us of fp32 partial sums). The scores (queries x keys, the
  // product's A) live in registers and shared memory (FlashAttention, Dao et al. 2022,
  // arXiv 2205.14135: never materialised in HBM); memory sees K or V (4096 x 64 x 2 B) and the
  // output (4096 x 64 x 2 B) a head: 5 x 1,048,576 B at 0.8 TB/s = 6.55 us, so the product is
  // compute-bound, and the kernel costs 2 us of latency + 2 x 27.263 us. Counting the 4096 x 4096
  // scores as traffic (33.6 MB a head) would make it 2 + 2 x 216.3 us, bound by HBM bandwidth,
  // and an H200 (4.8 TB/s) 30 % faster than an H100 (3.35) at attention on the same die.
  Op attn = op(OpKind::attention, "st0_self");
  attn.heads = 5, attn.head_dim = 64, attn.queries = 4096;
  Shard s;
  s.tokens_per_sample = 4096;
  const Kernel k = expand(attn, s, Pass::forward, "bf16").at(0);
  Accelerator a = testing::toy_accelerator();
  a.compute.attention_serial = {1, 1};  // products at the GEMM rate (the next test prices the rest)
  const double product_us = 2 * 2 * 128 * 64 * (4096.0 + 64) / 5e12 * 1e6;
  EXPECT_NEAR(testing::us(kernel_time(k, a)), 2 + 2 * product_us, 1e-6);
  // Memory bandwidth does not enter: halving it leaves the kernel as it is.
  a.memory_bandwidth = BytesPerSecond(0.5e12);
  EXPECT_NEAR(testing::us(kernel_time(k, a)), 2 + 2 * product_us, 1e-6);
}

TEST(Ops, SoftmaxExponentialsRunOnTheMultiFunctionUnits) {
  // The same attention on a toy whose multi-function units exponentiate 1e12 values a second
  // (an H100 SXM5: 16 a clock x 132 SMs x 1.83 GHz = 3.87e12, FlashAttention-3, arXiv
  // 2407.08608, sec. 3.2). Forward forms each of the 4,096 x 4,096 x 5 = 83,886,080 scores' P once:
  // 83.886 us of exponentials against 2 x 27.263 us of products.
  //   serial (each warp exponentiates between its products, FlashAttention-2): 2 + 54.526 + 83.886 us;
  //   overlapped (FlashAttention-3's ping-pong, cuDNN 9): 2 + max(54.526, 83.886) us.
  // Backward runs 2 kernels of 2.5 products each; the main one recomputes P: 41.943 us a kernel
  // on average, so serial 2 x (2 + 2.5 x 27.263 + 41.943) us.
  Op attn = op(OpKind::attention, "st0_self");
  attn.heads = 5, attn.head_dim = 64, attn.queries = 4096;
  Shard s;
  s.tokens_per_sample = 4096;
  Accelerator a = testing::toy_accelerator();
  a.special_function_rate = FlopsPerSecond(1e12);
  a.compute.attention_serial = a.compute.attention_overlapped = {1, 1};
  const double product_us = 2 * 2 * 128 * 64 * (4096.0 + 64) / 5e12 * 1e6;
  const double exp_us = 4096.0 * 4096 * 5 / 1e12 * 1e6;
  const Kernel forward = expand(attn, s, Pass::forward, "bf16").at(0);
  EXPECT_DOUBLE_EQ(forward.exponentials, 4096.0 * 4096 * 5);
  EXPECT_NEAR(testing::us(kernel_time(forward, a)), 2 + 2 * product_us + exp_us, 1e-6);
  const Kernel backward = expand(attn, s, Pass::backward, "bf16").at(0);
  EXPECT_NEAR(testing::us(kernel_time(backward, a)), 2 * (2 + 2.5 * product_us + exp_us / 2), 1e-6);
  attn.softmax_overlapped = true;
  EXPECT_NEAR(testing::us(kernel_time(expand(attn, s, Pass::forward, "bf16").at(0), a)), 2 + exp_us, 1e-6);
  // Where the products take longer (head_dim 256: 4 x the FLOPs a score), the exponentials hide.
  attn.head_dim = 256;
  const Kernel wide = expand(attn, s, Pass::forward, "bf16").at(0);
  Accelerator no_units = a;
  no_units.special_function_rate = FlopsPerSecond(0);  // not described: charged nothing
  EXPECT_NEAR(testing::us(kernel_time(wide, a)), testing::us(kernel_time(wide, no_units)), 1e-6);
  attn.softmax_overlapped = false, attn.head_dim = 64;
  EXPECT_NEAR(testing::us(kernel_time(expand(attn, s, Pass::forward, "bf16").at(0), no_units)), 2 + 2 * product_us,
              1e-6);
  // The products run at the measured share of the GEMM rate that attention kernels reach, by
  // kind and pass (flash-attn 2 on an H100: 0.55 forward, 0.47 backward; cuDNN 9: 0.73, 0.71):
  // serial forward 2 + 54.526 / 0.55 + 83.886 us, overlapped backward 2 x (2 + max(68.157 / 0.71,
  // 41.943)) us.
  a.compute.attention_serial = {0.55, 0.47};
  a.compute.attention_overlapped = {0.73, 0.71};
  EXPECT_NEAR(testing::us(kernel_time(expand(attn, s, Pass::forward, "bf16").at(0), a)),
              2 + 2 * product_us / 0.55 + exp_us, 1e-6);
  attn.softmax_overlapped = true;
  EXPECT_NEAR(testing::us(kernel_time(expand(attn, s, Pass::backward, "bf16").at(0), a)),
              2 * (2 + std::max(2.5 * product_us / 0.71, exp_us / 2)), 1e-6);
}

TEST(Ops, AnAttentionSaysHowItsSoftmaxRuns) {
  const auto parse = [](const char* yaml) { return parse_op(config::load_string(yaml, "op.yaml")); };
  EXPECT_FALSE(parse("{attention: a, heads: 8, head_dim: 64}").softmax_overlapped);
  EXPECT_FALSE(parse("{attention: a, heads: 8, head_dim: 64, softmax: serial}").softmax_overlapped);
  EXPECT_TRUE(parse("{attention: a, heads: 8, head_dim: 64, softmax: overlapped}").softmax_overlapped);
  const std::string bad = input_error_message([&] { parse("{attention: a, heads: 8, head_dim: 64, softmax: fast}"); });
  EXPECT_NE(bad.find("op.yaml:1"), std::string::npos) << bad;
  EXPECT_NE(bad.find("unknown softmax 'fast'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("serial, overlapped"), std::string::npos) << bad;
  // An unfused attention's softmax is a memory pass over its scores: the key would say nothing.
  const std::string unfused =
      input_error_message([&] { parse("{attention: a, heads: 8, head_dim: 64, implementation: unfused, softmax: serial}"); });
  EXPECT_NE(unfused.find("op.yaml:1"), std::string::npos) << unfused;
  EXPECT_NE(unfused.find("unfused attention's softmax"), std::string::npos) << unfused;
}

TEST(Ops, ContextParallelRingRunsOneAttentionKernelPerStep) {
  // CP2 on 8192 causal tokens: each rank's 4096 queries meet 4096 keys per ring step, 2 steps;
  // a work unit holds queries x head_dim (128) and streams the keys, half of them under the causal
  // mask: a 4096 x 128 GEMM with an inner 2048; forward FLOPs 2 products x 2 x 4096 x 4096 x 128 x
  // heads x 0.5 (causal) x 2 steps.
  Op attn = op(OpKind::attention, "self");
  attn.heads = 64, attn.head_dim = 128, attn.causal = true;
  Shard s;
  s.tokens_per_sample = 8192, s.cp = 2;
  const Kernel k = expand(attn, s, Pass::forward, "bf16").at(0);
  EXPECT_EQ(k.count, 2);
  EXPECT_EQ(k.shape.m, 4096);
  EXPECT_EQ(k.shape.n, 128);
  EXPECT_EQ(k.shape.k, 2048);
  EXPECT_DOUBLE_EQ(k.model_flops.value(), 2.0 * 2 * 4096 * 4096 * 128 * 64 * 0.5 * 2);
  // One exponential a score a kernel forms: 4096 queries x 2048 unmasked keys x 64 heads, and
  // backward the main kernel's recompute spread over its 2 kernels a step.
  EXPECT_DOUBLE_EQ(k.exponentials, 4096.0 * 2048 * 64);
  EXPECT_DOUBLE_EQ(expand(attn, s, Pass::backward, "bf16").at(0).exponentials, 4096.0 * 2048 * 64 / 2);
  // Where CP splits it, attention may run at another precision than where the sequence is whole
  // (NVIDIA's v4.1 Llama recipe: FP8 attention without CP, BF16 with it).
  attn.precision = "fp8";
  attn.context_parallel_precision = "bf16";
  EXPECT_EQ(expand(attn, s, Pass::forward, "fp8").at(0).dtype, "bf16");
  s.cp = 1;
  EXPECT_EQ(expand(attn, s, Pass::forward, "fp8").at(0).dtype, "fp8");
  // And per architecture, where a recipe differs on it (the v4.1 B200 preview kept FP8 attention
  // at CP2): {default: bf16, blackwell: fp8}, parsed from the workload file's form.
  attn = parse_op(config::load_string(
      "{attention: self, heads: 64, head_dim: 128, causal: true, precision: fp8,"
      " context_parallel_precision: {default: bf16, blackwell: fp8}}", "ops.yaml"));
  s.cp = 2;
  s.family = "hopper";
  EXPECT_EQ(expand(attn, s, Pass::forward, "fp8").at(0).dtype, "bf16");
  s.family = "blackwell";
  EXPECT_EQ(expand(attn, s, Pass::forward, "fp8").at(0).dtype, "fp8");
  s.cp = 1;
  s.family = "hopper";
  EXPECT_EQ(expand(attn, s, Pass::forward, "fp8").at(0).dtype, "fp8");
  // Half of the causal FLOPs of the whole sequence, 4 x 8192^2 x 8192 / 2, on each of the 2 ranks.
  EXPECT_DOUBLE_EQ(k.model_flops.value(), 4.0 * 8192 * 8192 * 8192 / 2 / 2);
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

namespace sp::models {

TEST(Ops, RingAttentionMergesEachStepsPartialResult) {
  // Llama2-70B's attention at CP2 on one sample of 8192 causal tokens, TP1: each rank holds 4096
  // queries of 64 heads x 128 = 33,554,432 output elements (bf16, 2 B) and K, V of 8 heads:
  // 2 x 4096 x 8 x 128 = 8,388,608 elements. Causal with load balancing, over the ranks
  // 1 + 0.75 x (2 - 1) = 1.75 steps' worth of merges.
  //   forward:  zeroing (1 x 2 B) + 1.75 x (read both, write out: 3 x 2 B) = 12.5 B an output
  //             element: 419,430,400 B in 1 + 2 x 2 = 5 kernels;
  //   backward: dQ 1.75 x 6 B an output element (352,321,536 B) and dKV (5 x 1.75 + 2) x 2 B = 21.5 B
  //             a K/V element (180,355,072 B): 532,676,608 B in 1 + 3 x 2 = 7 kernels.
  Op attn = op(OpKind::attention, "self");
  attn.heads = 64, attn.kv_heads = 8, attn.head_dim = 128, attn.causal = true;
  Shard s;
  s.tokens_per_sample = 8192, s.cp = 2;
  const std::vector<Kernel> fwd = expand(attn, s, Pass::forward, "bf16"), bwd = expand(attn, s, Pass::backward, "bf16");
  ASSERT_EQ(fwd.size(), 2u);
  ASSERT_EQ(bwd.size(), 2u);
  EXPECT_EQ(fwd[1].kind, Kernel::Kind::stream);
  EXPECT_TRUE(fwd[1].as_run);
  EXPECT_DOUBLE_EQ(fwd[1].bytes.value(), 419430400.0);
  EXPECT_EQ(fwd[1].count, 5);
  EXPECT_DOUBLE_EQ(bwd[1].bytes.value(), 532676608.0);
  EXPECT_EQ(bwd[1].count, 7);
  // FP8 attention merges in fp32: twice the bytes. Without CP nothing is merged.
  Op fp8 = attn;
  fp8.precision = "fp8";
  EXPECT_DOUBLE_EQ(expand(fp8, s, Pass::forward, "fp8")[1].bytes.value(), 2 * 419430400.0);
  s.cp = 1;
  EXPECT_EQ(expand(attn, s, Pass::forward, "bf16").size(), 1u);
  // TransformerEngine's own kernels, described as it runs them: software_efficiency, the fusion of
  // plain PyTorch's passes, leaves them (and the attention) alone. On simple_platform (1 TB/s, no
  // kernel latency) the forward merges take 419.4304 us whatever the factor.
  s.cp = 2;
  const Accelerator a = testing::simple_platform().accelerator;
  Workload w = testing::two_layer_workload(1, 1);
  LayerGroup l = w.layers[0];
  l.ops = {attn};
  const LayerCompute one = layer_compute(l, w, a, s, "fp16");
  w.software_efficiency = 4;
  const LayerCompute four = layer_compute(l, w, a, s, "fp16");
  EXPECT_EQ(one.forward.time.ps(), four.forward.time.ps());
  EXPECT_NEAR(testing::us(one.forward.memory_bound), 419.4304, 1e-6);
}

}  // namespace sp::models
