// A transformer from its architecture against hand counts: parameters (Llama 3 405B's published
// size, GPT's 12 d^2 + 13 d per layer), FLOPs per token (6 x the GEMM weights plus attention's
// term), and the file errors.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/training/memory.hpp"
#include "models/workloads/transformer.hpp"
#include "tests/models/test_fixtures.hpp"
#include "sim/config/loader.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {
namespace {

Workload parse(const std::string& transformer, const std::string& extra = "",
               const std::string& bucket = "gradient_bucket: \"40 MB\"") {
  const std::string yaml = "name: t\nmlperf_benchmark: \"\"\ndescription: d\nsample: s\nprecision: bf16\n"
                           "gradient_bytes_per_parameter: \"4 B\"\n" + bucket + "\n"
                           "optimizer_traffic_per_parameter: \"12 B\"\n"
                           "compute: {software_efficiency: 2.0, software_efficiency_range: [0.5, 10.0]}\n"
                           "transformer: " + transformer + "\n" + extra +
                           "dataset: {train_samples: 1000}\n"
                           "evaluation: {timed: false, samples: 1, interval: {epochs: 1}}\n"
                           "convergence: {unit: samples, points: [{global_batch: 8, mean: 1000, stdev: 0, runs: 1, pruned: true}]}\n"
                           "memory: {weight_bytes_per_parameter: \"2 B\", optimizer_bytes_per_trainable_parameter: \"12 B\", reserved: \"1 GiB\"}\n"
                           "runs_per_result: 1\ntypical_global_batch: {8: 8}\n";
  return parse_workload(config::load_string(yaml, "test.yaml"));
}

const std::string kLlama405b =
    "{layers: 126, hidden: 16384, heads: 128, kv_heads: 8, ffn: 53248, vocabulary: 128256, sequence: 8192}";

TEST(Transformer, Llama3_405bHasItsPublishedSize) {
  // Per layer: q and o 16384^2 each, k and v 16384 x 1024 each, SwiGLU 3 x 16384 x 53248, two
  // RMSNorms 2 x 16384: 536,870,912 + 33,554,432 + 2,617,245,696 + 32,768 = 3,187,703,808.
  // Model: 126 layers + embedding and untied head 2 x 128,256 x 16,384 + final norm 16,384
  // = 401,650,679,808 + 4,202,692,608 + 16,384 = 405,853,388,800 ("405B").
  const Workload w = parse(kLlama405b);
  ASSERT_EQ(w.layers.size(), 3u);
  EXPECT_EQ(w.layers[1].repeat, 126);
  EXPECT_EQ(w.layers[1].parameters, 3'187'703'808);
  EXPECT_EQ(w.total_parameters(), 405'853'388'800);
  EXPECT_EQ(w.trainable_parameters(), w.total_parameters());
  EXPECT_EQ(w.tokens_per_sample, 8192);
  // Full recompute checkpoints the decoder layers alone, as Megatron's transformer block does.
  EXPECT_FALSE(w.layers[0].checkpointed);
  EXPECT_TRUE(w.layers[1].checkpointed);
  EXPECT_FALSE(w.layers[2].checkpointed);
}

TEST(Transformer, ALayersFlopsPerTokenAreSixTimesItsWeightsPlusAttention) {
  // Forward + backward per token of a decoder layer: 6 x its GEMM weights (3,187,671,040, the
  // norms have no GEMM) + attention 3 x forward's 2 s q (causal: half of 4 s q), s = 8192,
  // q = 128 x 128 = 16384: 6 x 3,187,671,040 + 3 x 2 x 8192 x 16384 = 19,931,332,608
  // FLOP per token.
  const Workload w = parse(kLlama405b);
  const LayerGroup& l = w.layers[1];
  const double per_token = (l.forward.value() + l.backward.value()) / 8192;
  EXPECT_NEAR(per_token, 6.0 * 3'187'671'040 + 3.0 * 2 * 8192 * 16384, 1);
  EXPECT_NEAR(l.backward.value(), 2 * l.forward.value(), 1);
  // The head: 6 x 128,256 x 16,384 per token; the embedding's lookup has no FLOPs.
  EXPECT_NEAR((w.layers[2].forward + w.layers[2].backward).value() / 8192, 6.0 * 128256 * 16384, 1);
  EXPECT_EQ(w.layers[0].forward.value(), 0);
}

TEST(Transformer, AGptLayerWithBiasesIsTwelveDSquaredPlusThirteenD) {
  // GPT (Megatron's Selene runs): multi-head attention, a 4d GeLU FFN, biases, LayerNorms:
  // 4 d^2 + 4 d (q, k, v, o and biases) + 8 d^2 + 5 d (fc1, fc2 and biases) + 4 d (two LayerNorms
  // with their biases) = 12 d^2 + 13 d; d = 6144 (the 22B model): 452,984,832 + 79,872.
  const Workload w = parse(
      "{layers: 48, hidden: 6144, heads: 64, ffn: 24576, activation: gelu, norm: layernorm, bias: true, "
      "vocabulary: 51200, sequence: 2048, tied_embeddings: true}");
  EXPECT_EQ(w.layers[1].parameters, 12LL * 6144 * 6144 + 13 * 6144);
  // Tied: the table once (51,200 x 6,144), the final LayerNorm 2 d.
  EXPECT_EQ(w.total_parameters(), 48 * (12LL * 6144 * 6144 + 13 * 6144) + 51200LL * 6144 + 2 * 6144);
  // Its head still runs the GEMM against the table: 2 x 51,200 x 6,144 forward FLOPs a token.
  EXPECT_NEAR(w.layers[2].forward.value() / 2048, 2.0 * 51200 * 6144, 1);
}

const Op& op_named(const LayerGroup& l, const std::string& name) {
  for (const Op& op : l.ops) {
    if (op.name == name) return op;
  }
  throw std::logic_error("no op " + name);
}

TEST(Transformer, FusedElementwiseKernelsMoveWhatTheyReadAndWriteOnce) {
  // GPT 22B layer, d = 6144, f = 24576, LayerNorm, dropout, learned positions (no RoPE).
  // Eager: two LayerNorms of ~40 B an element in 8 kernels each, two residual adds (6 B) each
  // with a dropout pass (5 B, 2 kernels): 2 x (40 + 6 + 5) = 102 B x d a token in 2 x (8 + 3) = 22
  // kernels. Fused: LayerNorm reads and writes bf16 (4 B), bias-dropout-add reads two and writes
  // one plus a 1-byte mask (7 B): 2 x (4 + 7) = 22 B x d in 4 kernels. Backward twice either way.
  const std::string gpt = "{layers: 48, hidden: 6144, heads: 64, ffn: 24576, activation: gelu, norm: layernorm, "
                          "bias: true, vocabulary: 51200, sequence: 2048, position: learned, dropout: true, ";
  const Workload eager = parse(gpt + "elementwise: eager}");
  const Workload fused = parse(gpt + "elementwise: fused}");
  const Op& e = op_named(eager.layers[1], "norms_residuals");
  const Op& f = op_named(fused.layers[1], "norms_residuals");
  EXPECT_DOUBLE_EQ(e.forward_bytes_per_token.value(), 102.0 * 6144);
  EXPECT_DOUBLE_EQ(e.forward_kernels, 22);
  EXPECT_DOUBLE_EQ(f.forward_bytes_per_token.value(), 22.0 * 6144);
  EXPECT_DOUBLE_EQ(f.forward_kernels, 4);
  EXPECT_DOUBLE_EQ(f.backward_bytes_per_token.value(), 2 * 22.0 * 6144);
  // Inside the TP region, no RoPE: transpose copies 8 q (3 kernels) and GeLU with its bias, eager
  // 8 B x f in 2 kernels, fused 4 B x f in 1: 8 x 6144 + 8 x 24576 = 245,760 B; 49,152 + 98,304.
  EXPECT_DOUBLE_EQ(op_named(eager.layers[1], "activation").forward_bytes_per_token.value(), 8.0 * 6144 + 8.0 * 24576);
  EXPECT_DOUBLE_EQ(op_named(eager.layers[1], "activation").forward_kernels, 5);
  EXPECT_DOUBLE_EQ(op_named(fused.layers[1], "activation").forward_bytes_per_token.value(), 8.0 * 6144 + 4.0 * 24576);
  EXPECT_DOUBLE_EQ(op_named(fused.layers[1], "activation").forward_kernels, 4);
  // Learned positions: a 2048 x 6144 table more in the embedding; per token its row is looked up
  // (written, 2 B an element, as the token's lookup counts) and added (read two, write one: 6 B).
  EXPECT_EQ(fused.layers[0].parameters, 51200LL * 6144 + 2048LL * 6144);
  EXPECT_DOUBLE_EQ(op_named(fused.layers[0], "positions").forward_bytes_per_token.value(), 8.0 * 6144);
  // The default stays Llama's: RoPE, eager, no dropout: 2 x (36 + 6) d in 18 kernels.
  const Workload llama = parse(kLlama405b);
  EXPECT_DOUBLE_EQ(op_named(llama.layers[1], "norms_residuals").forward_bytes_per_token.value(), 84.0 * 16384);
  EXPECT_DOUBLE_EQ(op_named(llama.layers[1], "norms_residuals").forward_kernels, 18);
}

TEST(Transformer, UnfusedAttentionRunsTheScoresAsGemmsAndPassesAndKeepsThem) {
  // 22B's layer (64 heads of 96, s = 2048) unfused, one sample on one GPU: forward Q K^T and P V
  // as batched GEMMs of 64 heads (2048 x 2048 x 96 and 2048 x 96 x 2048), and between them the
  // softmax and dropout over 64 x 2048^2 scores at 9 B each (2.42 GB); backward four GEMMs and
  // 11 B a score. Kept for the backward: 32 s d (Korthikanti et al.'s 34 s d less the two hidden
  // dropout masks this layer has not) + 5 a s^2 = 402.7 MB + 1342.2 MB a sequence, of which
  // selective recompute keeps only the first (Korthikanti et al. 2023, section 4.2).
  const Workload w = parse(
      "{layers: 48, hidden: 6144, heads: 64, ffn: 24576, activation: gelu, norm: layernorm, bias: true, "
      "vocabulary: 51200, sequence: 2048, tied_embeddings: true, attention: unfused}");
  const LayerGroup& l = w.layers[1];
  const Op* attention = nullptr;
  for (const Op& op : l.ops) attention = op.kind == OpKind::attention ? &op : attention;
  ASSERT_TRUE(attention);
  Shard one;
  one.tokens_per_sample = 2048;
  const auto fwd = expand(*attention, one, Pass::forward, "bf16");
  ASSERT_EQ(fwd.size(), 3u);
  EXPECT_EQ(fwd[0].shape.m, 2048);
  EXPECT_EQ(fwd[0].shape.n, 2048);
  EXPECT_EQ(fwd[0].shape.k, 96);
  EXPECT_EQ(fwd[0].shape.batch, 64);
  EXPECT_DOUBLE_EQ(fwd[1].bytes.value(), 9.0 * 64 * 2048 * 2048);
  EXPECT_EQ(fwd[2].shape.n, 96);
  const auto bwd = expand(*attention, one, Pass::backward, "bf16");
  ASSERT_EQ(bwd.size(), 5u);
  EXPECT_DOUBLE_EQ(bwd[2].bytes.value(), 11.0 * 64 * 2048 * 2048);
  EXPECT_DOUBLE_EQ(l.activations.value(), 32.0 * 2048 * 6144 + 5.0 * 64 * 2048 * 2048);
  EXPECT_DOUBLE_EQ(l.attention_activations.value(), 5.0 * 64 * 2048 * 2048);
  // One GPU, one sample: selective recompute keeps 48 x 1342.2 MB less.
  const Platform p = testing::simple_platform();
  ParallelSpec spec;
  const Bytes plain = estimate_memory(w, p.accelerator, testing::layout(p, 1, 1, spec)).activations;
  spec.recompute = Recompute::selective;
  const Bytes selective = estimate_memory(w, p.accelerator, testing::layout(p, 1, 1, spec)).activations;
  EXPECT_NEAR((plain - selective).value(), 48 * 5.0 * 64 * 2048 * 2048, 1);
}

TEST(Transformer, KeptActivationsAreKorthikantisCountTensorByTensor) {
  // Korthikanti et al. 2023, section 4.1, a GPT layer with dropout (q = kv = d, f = 4 d, GeLU):
  // attention 11 s d (input 2, Q K V 6, output 2, dropout mask 1), MLP 19 s d (input 2, GeLU input
  // 8, fc2 input 8, mask 1), two LayerNorms' inputs 4 s d: 34 s d.
  TransformerSpec gpt;
  gpt.hidden = 6144;
  gpt.heads = 64;
  gpt.kv_heads = 64;
  gpt.head_dim = 96;
  gpt.ffn = 4 * 6144;
  gpt.activation = TransformerSpec::Activation::gelu;
  gpt.dropout = true;
  EXPECT_DOUBLE_EQ(kept_bytes_per_token(gpt), 34.0 * 6144);
  // Of which the sequence region, which TP splits only under sequence parallelism (Korthikanti's
  // Table 2: 10 s b h + 24 s b h / t without it): the norms' inputs 4, the attention and MLP
  // inputs 2 + 2, the dropout masks 1 + 1.
  EXPECT_DOUBLE_EQ(kept_bytes(gpt).sequence, 10.0 * 6144);
  EXPECT_DOUBLE_EQ(kept_bytes(gpt).tp_replicated, 0.0);
  // Llama 2 70B (d 8192, GQA kv = 1024, SwiGLU f = 28672, no dropout): norms 4 d, attention input
  // 2 d, Q K V 2 (8192 + 2048) = 2.5 d, output 2 d, MLP input 2 d, SwiGLU's gate and up 4 f = 14 d,
  // down's input 2 f = 7 d: 33.5 d.
  TransformerSpec llama;
  llama.hidden = 8192;
  llama.heads = 64;
  llama.kv_heads = 8;
  llama.head_dim = 128;
  llama.ffn = 28672;
  EXPECT_DOUBLE_EQ(kept_bytes_per_token(llama), 33.5 * 8192);
  EXPECT_DOUBLE_EQ(kept_bytes(llama).sequence, 8.0 * 8192);  // norms 4, attention and MLP inputs 2 + 2
  // Its LoRA (qkv and o adapted, adapter dropout): the frozen GEMMs keep no input; the qkv adapter
  // its dropped input and mask (3 d), o's 3 q = 3 d beside the attention output flash attention
  // keeps; the MLP only SwiGLU's input: 4 + 3 + 2.5 + 2 + 3 + 14 = 28.5 d; SwiGLU's input in fp8
  // saves 7 d (21.5 d). The qkv adapter gets the norm's output gathered over TP (NeMo's
  // return_layernorm_output_gathered): its 3 d are kept whole on every TP rank; the sequence
  // region keeps only the norms' inputs.
  llama.lora = TransformerSpec::Lora{16, true, true, false, true, "bf16"};
  const KeptBytes lora = kept_bytes(llama);
  EXPECT_DOUBLE_EQ(lora.total, 28.5 * 8192);
  EXPECT_DOUBLE_EQ(lora.total - lora.fp8_saving, 21.5 * 8192);
  EXPECT_DOUBLE_EQ(lora.tp_replicated, 3.0 * 8192);
  EXPECT_DOUBLE_EQ(lora.sequence, 4.0 * 8192);
}

const std::string kLlama2LoRA =
    "{layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672, vocabulary: 32000, sequence: 8192, "
    "attention: {implementation: fused, precision: fp8, context_parallel_precision: {default: bf16, blackwell: fp8}}, "
    "lora: {rank: 16, targets: [qkv, o], dropout: true, precision: bf16}, activation_input: fp8}";

TEST(Transformer, LoraFreezesTheBaseAndTrainsRankRAdaptersBesideIt) {
  // MLPerf's Llama2-70B LoRA: r = 16 on the fused qkv projection (8192 -> 10240) and on o
  // (8192 -> 8192): 16 x (8192 + 10240) + 16 x (8192 + 8192) = 294,912 + 262,144 = 557,056 a layer,
  // 44,564,480 in all; the base 855,654,400 a layer, the embedding and untied head 32,000 x 8,192
  // each and the final norm 8,192, all frozen.
  const Workload w = parse(kLlama2LoRA);
  const LayerGroup& l = w.layers[1];
  EXPECT_EQ(l.trainable_parameters, 557'056);
  EXPECT_EQ(l.parameters, 855'654'400 + 557'056);
  EXPECT_EQ(w.trainable_parameters(), 80LL * 557'056);
  EXPECT_EQ(w.total_parameters(), 80LL * (855'654'400 + 557'056) + 2LL * 32000 * 8192 + 8192);
  EXPECT_EQ(w.layers[0].trainable_parameters, 0);
  EXPECT_FALSE(w.layers[0].backward_pass);  // frozen and first: the lookup runs forward only
  EXPECT_EQ(w.layers[2].trainable_parameters, 0);
  for (const char* base : {"q", "k", "v", "o", "gate", "up", "down"}) EXPECT_TRUE(op_named(l, base).frozen) << base;
  EXPECT_TRUE(op_named(w.layers[2], "lm_head").frozen);
  // A replicated beside a column-parallel GEMM, B split as it; beside the row-parallel o the other way.
  EXPECT_EQ(op_named(l, "lora_qkv_a").tp_split, TpSplit::none);
  EXPECT_EQ(op_named(l, "lora_qkv_b").tp_split, TpSplit::n);
  EXPECT_EQ(op_named(l, "lora_o_a").tp_split, TpSplit::k);
  EXPECT_EQ(op_named(l, "lora_o_b").tp_split, TpSplit::none);
  EXPECT_EQ(op_named(l, "lora_o_b").precision, "bf16");
  // Per sequence (s = 8192): forward 2 x 855,638,016 s (the GEMM weights) + causal attention
  // 2 s^2 q + the adapters 2 x 557,056 s = 15.127411687424 TFLOP; backward only the frozen GEMMs'
  // input gradients (their forward again), attention twice its forward, the adapters twice theirs
  // = 16.236050120704 TFLOP: the totals the hand-written file documented.
  EXPECT_NEAR(l.forward.value(), 15.127411687424e12, 1e3);
  EXPECT_NEAR(l.backward.value(), 16.236050120704e12, 1e3);
  // Element-wise, eager: two RMSNorms (36 B, 8 kernels) and residual adds (6 B) on d, the qkv
  // adapter's input dropout (5 B, 1): 2 x 42 x 8192 + 5 x 8192 = 729,088 B in 19 kernels. In the
  // TP region: RoPE 26 x 9216, copies 8 x 8192, SwiGLU 10 x 28672, the adapters' scaled adds
  // 10 x 10240 and 10 x 8192 (2 kernels each), o's input dropout 5 x 8192: 817,152 B in 20.
  EXPECT_DOUBLE_EQ(op_named(l, "norms_residuals").forward_bytes_per_token.value(), 729'088);
  EXPECT_DOUBLE_EQ(op_named(l, "norms_residuals").forward_kernels, 19);
  EXPECT_DOUBLE_EQ(op_named(l, "rope_activation").forward_bytes_per_token.value(), 817'152);
  EXPECT_DOUBLE_EQ(op_named(l, "rope_activation").forward_kernels, 20);
  // Kept for backward: 28.5 d a token, 21.5 d with SwiGLU's input in fp8 where a layout needs it
  // (KeptActivations above); the qkv adapter's 3 d on every TP rank whole, the norms' inputs 4 d
  // in the sequence region.
  EXPECT_DOUBLE_EQ(l.activations.value(), 28.5 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(l.fp8_activation_saving.value(), 7.0 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(l.tp_replicated_activations.value(), 3.0 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(l.sequence_activations.value(), 4.0 * 8192 * 8192);
  // FP8 attention where the sequence is whole, BF16 under CP, FP8 under CP on Blackwell.
  const Op& attention = op_named(l, "self");
  EXPECT_EQ(attention.precision, "fp8");
  EXPECT_EQ(attention.context_parallel_precision, "bf16");
  EXPECT_EQ(attention.context_parallel_precision_by_family.at("blackwell").precision, "fp8");
}

TEST(Transformer, FileErrorsNameTheirKey) {
  const std::string small = "{layers: 2, hidden: 96, heads: 8, ffn: 400, vocabulary: 10, sequence: 8";
  struct Case {
    std::string transformer, extra, expected;
  };
  const std::vector<Case> cases = {
      {"{layers: 2, hidden: 100, heads: 3, ffn: 400, vocabulary: 10, sequence: 8}", "",
       "transformer.heads: must divide hidden, or give head_dim"},
      {"{layers: 2, hidden: 96, heads: 8, kv_heads: 3, ffn: 400, vocabulary: 10, sequence: 8}", "",
       "transformer.kv_heads: must divide heads (8)"},
      {small + ", activation: relu}", "", "transformer.activation: unknown activation 'relu' (valid: swiglu, gelu)"},
      {small + "}", "tokens_per_sample: 4\n", "tokens_per_sample: differs from transformer.sequence (8)"},
      {small + "}", "layers: []\n", "layers: give either layers or transformer, not both"},
      {small + ", lora: {rank: 4, targets: [qkv, ffn]}}", "",
       "transformer.lora.targets[1]: unknown LoRA target 'ffn' (valid: qkv, o, mlp)"},
      {small + ", lora: {rank: 4, targets: [o, o]}}", "", "transformer.lora.targets[1]: target 'o' named twice"},
      {small + ", lora: {rank: 200, targets: [o]}}", "", "transformer.lora.rank: exceeds hidden (96)"},
      {small + ", lora: {rank: 4, targets: []}}", "", "transformer.lora.targets: needs at least one target"},
      {small + ", activation_input: fp4}", "", "transformer.activation_input: unknown activation_input 'fp4'"},
      {small + ", attention: {implementation: sparse}}", "",
       "transformer.attention.implementation: unknown attention 'sparse'"},
      {small + ", attention: {precision: fp4}}", "", "transformer.attention.precision: unknown precision 'fp4'"},
      {small + ", attention: {softmax: fast}}", "", "transformer.attention.softmax: unknown softmax 'fast'"},
      {small + ", attention: {implementation: unfused, softmax: serial}}", "",
       "transformer.attention.softmax: an unfused attention's softmax is a pass over its scores in memory"},
      // A slipped digit is refused at its key, not found as an exhausted memory (hidden 10^9 made
      // a 16 GB allocation) or an overflowed parameter count: each dimension is bounded, and so is
      // their product: 100,000 layers of hidden d = 2^20 (8 heads, as many KV heads, of d / 8) with
      // FFN f = 2^22 hold 10^5 x (4 d^2 + 3 d f) = 1.76e18 weights.
      {"{layers: 2, hidden: 1000000000, heads: 8, ffn: 400, vocabulary: 10, sequence: 8}", "",
       "transformer.hidden: at most 1048576 (larger than any model by far)"},
      {"{layers: 2, hidden: 96, heads: 8, ffn: 400, vocabulary: 100000000, sequence: 8}", "",
       "transformer.vocabulary: at most 16777216"},
      {"{layers: 100000, hidden: 1048576, heads: 8, ffn: 4194304, vocabulary: 10, sequence: 8}", "",
       "transformer.layers: the architecture has 1.76e+18 weights: at most 1e15"},
      {small + "}", "clock_boost_one_node: -1\n", "clock_boost_one_node: expected a boost setting from 0 (none) to 100"},
  };
  for (const Case& c : cases) {
    const std::string message = input_error_message([&] { parse(c.transformer, c.extra); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.transformer << " " << c.extra << ": " << message;
  }
}

// A bucket is a size, or Megatron-core's rule in parameters that grows with the data-parallel
// group: max(40 M, 1 M x DP) parameters of 4 B gradients are 160 MB at DP 32, 2,048 MB at DP 512.
TEST(Transformer, AGradientBucketIsASizeOrMegatronsRuleGrowingWithTheDataParallelGroup) {
  const auto with = [](const std::string& bucket) {
    return [bucket] { return parse(kLlama405b, "", bucket); };
  };
  const Workload megatron = with("gradient_bucket: {parameters: 40000000, per_data_parallel_rank: 1000000}")();
  EXPECT_DOUBLE_EQ(megatron.gradient_bucket_for(32).value(), 160e6);
  EXPECT_DOUBLE_EQ(megatron.gradient_bucket_for(512).value(), 2048e6);
  EXPECT_DOUBLE_EQ(with("gradient_bucket: \"40 MB\"")().gradient_bucket_for(512).value(), 40e6);
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: {parameters: 40000000, per_rank: 1}")(); })
                .find("per_rank"), std::string::npos);
  // "40" meant as 40 M, a byte-sized bucket, a list: each a message, never millions of buckets.
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: {parameters: 40}")(); })
                .find("at least 100000 parameters"), std::string::npos);
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: \"1 B\"")(); }).find("at least 1 MB"),
            std::string::npos);
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: [1, 2]")(); }).find("per_data_parallel_rank"),
            std::string::npos);
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: {parameters: 40000000, per_data_parallel_rank: -1}")(); })
                .find("must not be negative"), std::string::npos);
  EXPECT_NE(input_error_message([&] { (void)with("gradient_bucket: {per_data_parallel_rank: 1}")(); })
                .find("parameters"), std::string::npos);
}

}  // namespace
}  // namespace sp::models
