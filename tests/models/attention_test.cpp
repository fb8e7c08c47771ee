// Attention as the compute model runs it (models/workloads/ops.cpp): fused kernels keep their
// scores on chip, the softmax's exponentials take the multi-function units, and context
// parallelism runs one kernel per ring step and merges their partial results; each against a
// case worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"
#include "test_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {

using testing::op;

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
