#include "models/workloads/transformer.hpp"

#include <string>

namespace sp::models {

namespace {

constexpr double kFp32 = 4;  // bytes of an element kept in fp32 (the loss's softmax)
constexpr double kBf16 = 2;  // bytes of an activation element as trained (hidden states, K and V)
constexpr double kFp8 = 1;   // bytes of one kept in fp8 (TransformerEngine's fp8 activation store)

Op gemm(const std::string& name, std::int64_t n, std::int64_t k, TpSplit split) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = name;
  op.n = static_cast<double>(n);
  op.k = static_cast<double>(k);
  op.tp_split = split;
  return op;
}

Op pass(const std::string& name, double bytes_per_token, double kernels, bool tensor_region) {
  Op op;
  op.kind = OpKind::elementwise;
  op.name = name;
  op.forward_bytes_per_token = Bytes(bytes_per_token);
  op.backward_bytes_per_token = Bytes(2 * bytes_per_token);
  op.forward_kernels = kernels;
  op.backward_kernels = 2 * kernels;
  op.tensor_region = tensor_region;
  return op;
}

}  // namespace

std::int64_t decoder_layer_parameters(const TransformerSpec& t) {
  const std::int64_t d = t.hidden, q = t.heads * t.head_dim, kv = t.kv_heads * t.head_dim, f = t.ffn;
  const bool swiglu = t.activation == TransformerSpec::Activation::swiglu;
  std::int64_t p = d * q + 2 * d * kv + q * d + (swiglu ? 3 : 2) * d * f;
  if (t.bias) p += q + 2 * kv + d + (swiglu ? 2 : 1) * f + d;
  p += (t.norm == TransformerSpec::Norm::rmsnorm ? 2 : 4) * d;
  return p;
}

std::int64_t position_parameters(const TransformerSpec& t) {
  return t.position == TransformerSpec::Position::learned ? t.sequence * t.hidden : 0;
}

std::int64_t adapter_parameters(const TransformerSpec& t) {
  if (!t.lora) return 0;
  const std::int64_t d = t.hidden, q = t.heads * t.head_dim, kv = t.kv_heads * t.head_dim, f = t.ffn;
  const std::int64_t fc1 = t.activation == TransformerSpec::Activation::swiglu ? 2 * f : f;
  const std::int64_t r = t.lora->rank;
  std::int64_t p = 0;
  if (t.lora->qkv) p += r * (d + q + 2 * kv);
  if (t.lora->o) p += r * (q + d);
  if (t.lora->mlp) p += r * (d + fc1) + r * (f + d);
  return p;
}

std::int64_t transformer_parameters(const TransformerSpec& t) {
  const std::int64_t norm = (t.norm == TransformerSpec::Norm::rmsnorm ? 1 : 2) * t.hidden;
  const std::int64_t table = t.vocabulary * t.hidden;
  return table + position_parameters(t) + t.layers * (decoder_layer_parameters(t) + adapter_parameters(t)) + norm +
         (t.tied_embeddings ? 0 : table);
}

KeptBytes kept_bytes(const TransformerSpec& t) {
  const double d = static_cast<double>(t.hidden), f = static_cast<double>(t.ffn);
  const double q = static_cast<double>(t.heads * t.head_dim), kv = static_cast<double>(t.kv_heads * t.head_dim);
  const bool swiglu = t.activation == TransformerSpec::Activation::swiglu;
  const bool frozen = t.lora.has_value();
  // What a trained GEMM's weight gradient reads of its input x (wide): x itself; an adapter's A:
  // x, or its dropout's output and mask; a frozen GEMM: nothing.
  const auto gemm_input = [&](double wide, bool adapted) {
    if (!frozen) return kBf16 * wide;
    if (!adapted) return 0.0;
    return t.lora->dropout ? 3 * wide : kBf16 * wide;
  };
  const bool qkv = frozen && t.lora->qkv, o = frozen && t.lora->o, mlp = frozen && t.lora->mlp;
  KeptBytes k;
  // The sequence region: two norms' inputs, the attention and MLP inputs, two hidden dropout masks.
  // Under LoRA the qkv adapter takes the norm's output gathered over the TP group (NeMo's
  // mcore_mixins.py sets TransformerEngine's return_layernorm_output_gathered under sequence
  // parallelism when qkv's all-gather is not overlapped, NeMo's default tp_comm_overlap_disable_qkv),
  // so every TP rank keeps its dropped input and mask whole.
  k.sequence = 2 * kBf16 * d + gemm_input(d, mlp) + (t.dropout ? 2 * d : 0);
  if (qkv) {
    k.tp_replicated = gemm_input(d, true);
  } else {
    k.sequence += gemm_input(d, false);
  }
  const double act_input = swiglu ? 2 * f : f;
  double tensor = kBf16 * (q + 2 * kv);     // Q, K, V
  tensor += kBf16 * q;                      // the attention output (the o GEMM's input)
  if (o && t.lora->dropout) tensor += 3 * q;  // o's adapter: its dropout's output and mask
  tensor += kBf16 * act_input;              // the activation's input (bf16; fp8 saves half)
  tensor += gemm_input(f, mlp);             // the second MLP GEMM's input
  k.total = k.sequence + k.tp_replicated + tensor;
  k.fp8_saving = act_input * (kBf16 - kFp8);
  return k;
}

std::vector<LayerGroup> transformer_layers(const TransformerSpec& t) {
  const double d = static_cast<double>(t.hidden), s = static_cast<double>(t.sequence);
  const double q = static_cast<double>(t.heads * t.head_dim), kv = static_cast<double>(t.kv_heads * t.head_dim);
  const double f = static_cast<double>(t.ffn), vocab = static_cast<double>(t.vocabulary);
  const bool swiglu = t.activation == TransformerSpec::Activation::swiglu;
  const Bytes hidden_state(s * d * kBf16);
  const bool fused = t.fused_elementwise;
  // A norm: eager, fp32 upcast, square, mean, rsqrt, scale and downcast, one kernel each (LayerNorm
  // also subtracts the mean); fused, one kernel reading x and writing y in bf16.
  const double norm_bytes = fused ? 2 * kBf16 : t.norm == TransformerSpec::Norm::rmsnorm ? 36 : 40;
  const double norm_kernels = fused ? 1 : 8;
  // A residual add reads two bf16 tensors and writes one; dropout writes a 1-byte mask, fused into
  // the add (Megatron's bias-dropout-add) or a pass of its own (read, write, mask: 5 B, 2 kernels).
  const double residual_bytes = 3 * kBf16 + (t.dropout ? (fused ? 1 : 5) : 0);
  const double residual_kernels = 1 + (t.dropout && !fused ? 2 : 0);

  LayerGroup embedding;
  embedding.name = "embedding";
  embedding.parameters = t.vocabulary * t.hidden + position_parameters(t);
  embedding.trainable_parameters = t.lora ? 0 : embedding.parameters;  // LoRA: frozen, and no backward
  // A lookup writes each token's row; backward scatters its gradient into the table. Learned
  // positions: a second lookup (2 B an element) and the add (read two rows, write one: 6 B).
  embedding.ops = {pass("lookup", d * kBf16, 1, false)};
  if (t.position == TransformerSpec::Position::learned) embedding.ops.push_back(pass("positions", 4 * d * kBf16, 2, false));
  embedding.pipeline_boundary = hidden_state;
  embedding.checkpointed = false;  // outside Megatron's checkpointed transformer block

  LayerGroup layer;
  layer.name = "decoder_layer";
  layer.repeat = t.layers;
  const bool lora = t.lora.has_value();
  layer.parameters = decoder_layer_parameters(t) + adapter_parameters(t);
  layer.trainable_parameters = lora ? adapter_parameters(t) : layer.parameters;
  const std::int64_t qw = t.heads * t.head_dim, kvw = t.kv_heads * t.head_dim;
  const std::int64_t fc1_width = swiglu ? 2 * t.ffn : t.ffn;
  // An adapter's input dropout (read, write, mask: 5 B) on the sequence side or inside the TP
  // region, and its scaled output added (scale: 4 B, add: 6 B; fused: one 6 B pass).
  double adapter_in_sequence = 0, adapter_in_tensor = 0, adapter_kernels_sequence = 0, adapter_kernels_tensor = 0;
  const auto adapter = [&](const std::string& name, std::int64_t in, std::int64_t out, TpSplit split, bool input_in_tensor) {
    const std::int64_t r = t.lora->rank;
    // Column parallel (split n): A replicated, B split by its outputs; row parallel: A split by its inputs.
    Op a = gemm("lora_" + name + "_a", r, in, split == TpSplit::k ? TpSplit::k : TpSplit::none);
    Op b = gemm("lora_" + name + "_b", out, r, split == TpSplit::n ? TpSplit::n : TpSplit::none);
    a.precision = b.precision = t.lora->precision;
    layer.ops.push_back(a);
    layer.ops.push_back(b);
    if (t.lora->dropout) {
      (input_in_tensor ? adapter_in_tensor : adapter_in_sequence) += 5.0 * static_cast<double>(in);
      (input_in_tensor ? adapter_kernels_tensor : adapter_kernels_sequence) += 1;
    }
    adapter_in_tensor += (fused ? 6.0 : 10.0) * static_cast<double>(out);
    adapter_kernels_tensor += fused ? 1 : 2;
  };
  const auto base = [&](const std::string& name, std::int64_t n, std::int64_t k, TpSplit split) {
    Op g = gemm(name, n, k, split);
    g.frozen = lora;
    layer.ops.push_back(g);
  };
  base("q", qw, t.hidden, TpSplit::n);
  base("k", kvw, t.hidden, TpSplit::n);
  base("v", kvw, t.hidden, TpSplit::n);
  if (lora && t.lora->qkv) adapter("qkv", t.hidden, qw + 2 * kvw, TpSplit::n, false);
  Op attention = t.attention_precisions;
  attention.kind = OpKind::attention;
  attention.name = "self";
  attention.heads = static_cast<double>(t.heads);
  attention.kv_heads = static_cast<double>(t.kv_heads);
  attention.head_dim = static_cast<double>(t.head_dim);
  attention.causal = true;
  attention.unfused = t.unfused_attention;
  layer.ops.push_back(attention);
  base("o", t.hidden, qw, TpSplit::k);
  if (lora && t.lora->o) adapter("o", qw, t.hidden, TpSplit::k, true);
  if (swiglu) {
    base("gate", t.ffn, t.hidden, TpSplit::n);
    base("up", t.ffn, t.hidden, TpSplit::n);
  } else {
    base("fc1", t.ffn, t.hidden, TpSplit::n);
  }
  if (lora && t.lora->mlp) adapter("fc1", t.hidden, fc1_width, TpSplit::n, false);
  base(swiglu ? "down" : "fc2", t.hidden, t.ffn, TpSplit::k);
  if (lora && t.lora->mlp) adapter("fc2", t.ffn, t.hidden, TpSplit::k, true);
  // Two norms and two residual adds on d, outside the tensor-parallel region (sequence parallel).
  layer.ops.insert(layer.ops.begin(), pass("norms_residuals", 2 * (norm_bytes + residual_bytes) * d + adapter_in_sequence,
                                           2 * (norm_kernels + residual_kernels) + adapter_kernels_sequence, false));
  // Inside the TP region: RoPE on q and k (10 kernels eager, 2 fused), the GQA expansion and
  // transpose copies of q, k and v (3), the activation: SwiGLU eager silu (4 B) and product (6 B),
  // fused 6 B; GeLU eager its bias add and itself (8 B, 2 kernels), fused 4 B. The GEMMs' own
  // bias adds are fused into their epilogues by cuBLASLt: no pass.
  const bool rope = t.position == TransformerSpec::Position::rope;
  const double rope_bytes = rope ? 26 * (q + kv) : 0, copies = 8 * q;
  const double act = (swiglu ? (fused ? 6 : 10) : (fused ? 4 : 8)) * f;
  const double kernels = (rope ? (fused ? 2 : 10) : 0) + 3 + (fused ? 1 : 2) + adapter_kernels_tensor;
  layer.ops.push_back(pass(rope ? "rope_activation" : "activation", rope_bytes + copies + act + adapter_in_tensor, kernels, true));
  layer.attention_activations = t.unfused_attention ? Bytes(5 * static_cast<double>(t.heads) * s * s) : Bytes(0);
  const KeptBytes kept = kept_bytes(t);
  layer.activations = Bytes(kept.total * s) + layer.attention_activations;
  layer.sequence_activations = Bytes(kept.sequence * s);
  layer.tp_replicated_activations = Bytes(kept.tp_replicated * s);
  layer.fp8_activation_saving = t.fp8_activation_input == Fp8Store::never ? Bytes(0) : Bytes(kept.fp8_saving * s);
  layer.tp_tensor = hidden_state;
  layer.tp_all_gathers = 2;
  layer.tp_reduce_scatters = 2;
  layer.tp_column_gemms = {PlainTpGemms::kQkv, PlainTpGemms::kFc1};
  layer.tp_gemms_frozen = lora;
  layer.cp_exchange = Bytes(2 * s * kv * kBf16);
  layer.pipeline_boundary = hidden_state;

  LayerGroup head;
  head.name = "final_norm_and_lm_head";
  const std::int64_t norm_params = (t.norm == TransformerSpec::Norm::rmsnorm ? 1 : 2) * t.hidden;
  // Tied: the head's weight is the embedding's, counted there; its GEMMs run here all the same.
  head.parameters = norm_params + (t.tied_embeddings ? 0 : t.vocabulary * t.hidden);
  head.trainable_parameters = t.lora ? 0 : head.parameters;
  Op lm_head = gemm("lm_head", t.vocabulary, t.hidden, TpSplit::n);
  lm_head.frozen = t.lora.has_value();
  head.ops = {pass("final_norm", norm_bytes * d, norm_kernels, false), lm_head};
  // Cross-entropy in fp32 over the vocabulary, vocabulary-parallel under TP.
  Op loss = pass("loss", 14 * vocab, 6, true);
  loss.backward_bytes_per_token = Bytes(20 * vocab);
  loss.backward_kernels = 6;
  head.ops.push_back(loss);
  // Kept for the backward: Megatron's vocabulary-parallel cross-entropy upcasts its share of the
  // logits to fp32 and saves their softmax (NVIDIA/Megatron-LM megatron/core/tensor_parallel/
  // cross_entropy.py: vocab_parallel_logits.float(), save_for_backward(exp_logits, ...)), 4 B a
  // vocabulary entry, which TP splits; the final norm's input, and the head GEMM's input where its
  // weight trains, are hidden states in the sequence region.
  const Bytes head_inputs = hidden_state * (t.lora ? 1.0 : 2.0);
  head.activations = Bytes(s * vocab * kFp32) + head_inputs;
  head.sequence_activations = head_inputs;
  head.tp_tensor = hidden_state;                // the final norm's output, gathered before the head
  head.tp_all_gathers = 1;
  // Megatron's output layer never uses userbuffers (its all-gather runs before it, its input
  // gradient's reduce-scatter beside a weight gradient); taken as the layout's other
  // column-parallel GEMMs, 1 of 81 layers in Llama2-70B (under 0.05 % of a step).
  head.tp_gemms_frozen = t.lora.has_value();
  head.pipeline_boundary = hidden_state;  // as every hand-written head: its TP tensor
  head.checkpointed = false;              // outside Megatron's checkpointed transformer block
  return {embedding, layer, head};
}

}  // namespace sp::models
