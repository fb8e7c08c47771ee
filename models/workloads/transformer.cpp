#include "models/workloads/transformer.hpp"

#include <string>

namespace sp::models {

namespace {

constexpr double kBf16 = 2;  // bytes of an activation element as trained (hidden states, K and V)

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

std::int64_t positive(const config::ConfigNode& n, const char* key) { return n.at(key).as_count(); }

}  // namespace

TransformerSpec parse_transformer(const config::ConfigNode& n) {
  n.expect_only({"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "activation", "norm", "bias",
                 "vocabulary", "sequence", "tied_embeddings", "attention", "position", "elementwise", "dropout"});
  TransformerSpec t;
  const std::int64_t layers = positive(n, "layers");
  if (layers > 100'000) n.at("layers").fail("at most 100000 layers");
  t.layers = static_cast<int>(layers);
  t.hidden = positive(n, "hidden");
  t.heads = positive(n, "heads");
  t.kv_heads = n.has("kv_heads") ? positive(n, "kv_heads") : t.heads;
  if (t.heads % t.kv_heads != 0) n.at("kv_heads").fail("must divide heads (" + std::to_string(t.heads) + ")");
  if (n.has("head_dim")) {
    t.head_dim = positive(n, "head_dim");
  } else {
    if (t.hidden % t.heads != 0) n.at("heads").fail("must divide hidden, or give head_dim");
    t.head_dim = t.hidden / t.heads;
  }
  t.ffn = positive(n, "ffn");
  t.vocabulary = positive(n, "vocabulary");
  t.sequence = positive(n, "sequence");
  if (auto a = n.find("activation")) {
    const std::string v = a->as_string();
    if (v != "swiglu" && v != "gelu") a->fail("unknown activation '" + v + "'", "valid: swiglu, gelu");
    t.activation = v == "gelu" ? TransformerSpec::Activation::gelu : TransformerSpec::Activation::swiglu;
  }
  if (auto m = n.find("norm")) {
    const std::string v = m->as_string();
    if (v != "rmsnorm" && v != "layernorm") m->fail("unknown norm '" + v + "'", "valid: rmsnorm, layernorm");
    t.norm = v == "layernorm" ? TransformerSpec::Norm::layernorm : TransformerSpec::Norm::rmsnorm;
  }
  if (auto b = n.find("bias")) t.bias = b->as_bool();
  if (auto e = n.find("tied_embeddings")) t.tied_embeddings = e->as_bool();
  if (auto a = n.find("attention")) {
    const std::string v = a->as_string();
    if (v != "fused" && v != "unfused") a->fail("unknown attention '" + v + "'", "valid: fused (flash), unfused");
    t.unfused_attention = v == "unfused";
  }
  if (auto p = n.find("position")) {
    const std::string v = p->as_string();
    if (v != "rope" && v != "learned") p->fail("unknown position '" + v + "'", "valid: rope, learned");
    t.position = v == "learned" ? TransformerSpec::Position::learned : TransformerSpec::Position::rope;
  }
  if (auto e = n.find("elementwise")) {
    const std::string v = e->as_string();
    if (v != "fused" && v != "eager") e->fail("unknown elementwise '" + v + "'", "valid: fused, eager");
    t.fused_elementwise = v == "fused";
  }
  if (auto d = n.find("dropout")) t.dropout = d->as_bool();
  return t;
}

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

std::int64_t transformer_parameters(const TransformerSpec& t) {
  const std::int64_t norm = (t.norm == TransformerSpec::Norm::rmsnorm ? 1 : 2) * t.hidden;
  const std::int64_t table = t.vocabulary * t.hidden;
  return table + position_parameters(t) + t.layers * decoder_layer_parameters(t) + norm +
         (t.tied_embeddings ? 0 : table);
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
  embedding.parameters = embedding.trainable_parameters = t.vocabulary * t.hidden + position_parameters(t);
  // A lookup writes each token's row; backward scatters its gradient into the table. Learned
  // positions: a second lookup (2 B an element) and the add (read two rows, write one: 6 B).
  embedding.ops = {pass("lookup", d * kBf16, 1, false)};
  if (t.position == TransformerSpec::Position::learned) embedding.ops.push_back(pass("positions", 4 * d * kBf16, 2, false));
  embedding.pipeline_boundary = hidden_state;

  LayerGroup layer;
  layer.name = "decoder_layer";
  layer.repeat = t.layers;
  layer.parameters = layer.trainable_parameters = decoder_layer_parameters(t);
  // Two norms and two residual adds on d, outside the tensor-parallel region (sequence parallel).
  layer.ops.push_back(pass("norms_residuals", 2 * (norm_bytes + residual_bytes) * d, 2 * (norm_kernels + residual_kernels), false));
  layer.ops.push_back(gemm("q", t.heads * t.head_dim, t.hidden, TpSplit::n));
  layer.ops.push_back(gemm("k", t.kv_heads * t.head_dim, t.hidden, TpSplit::n));
  layer.ops.push_back(gemm("v", t.kv_heads * t.head_dim, t.hidden, TpSplit::n));
  Op attention;
  attention.kind = OpKind::attention;
  attention.name = "self";
  attention.heads = static_cast<double>(t.heads);
  attention.kv_heads = static_cast<double>(t.kv_heads);
  attention.head_dim = static_cast<double>(t.head_dim);
  attention.causal = true;
  attention.unfused = t.unfused_attention;
  layer.ops.push_back(attention);
  layer.ops.push_back(gemm("o", t.hidden, t.heads * t.head_dim, TpSplit::k));
  if (swiglu) {
    layer.ops.push_back(gemm("gate", t.ffn, t.hidden, TpSplit::n));
    layer.ops.push_back(gemm("up", t.ffn, t.hidden, TpSplit::n));
    layer.ops.push_back(gemm("down", t.hidden, t.ffn, TpSplit::k));
  } else {
    layer.ops.push_back(gemm("fc1", t.ffn, t.hidden, TpSplit::n));
    layer.ops.push_back(gemm("fc2", t.hidden, t.ffn, TpSplit::k));
  }
  // Inside the TP region: RoPE on q and k (10 kernels eager, 2 fused), the GQA expansion and
  // transpose copies of q, k and v (3), the activation: SwiGLU eager silu (4 B) and product (6 B),
  // fused 6 B; GeLU eager its bias add and itself (8 B, 2 kernels), fused 4 B. The GEMMs' own
  // bias adds are fused into their epilogues by cuBLASLt: no pass.
  const bool rope = t.position == TransformerSpec::Position::rope;
  const double rope_bytes = rope ? 26 * (q + kv) : 0, copies = 8 * q;
  const double act = (swiglu ? (fused ? 6 : 10) : (fused ? 4 : 8)) * f;
  const double kernels = (rope ? (fused ? 2 : 10) : 0) + 3 + (fused ? 1 : 2);
  layer.ops.push_back(pass(rope ? "rope_activation" : "activation", rope_bytes + copies + act, kernels, true));
  layer.attention_activations = t.unfused_attention ? Bytes(5 * static_cast<double>(t.heads) * s * s) : Bytes(0);
  layer.activations = Bytes(34 * s * d) + layer.attention_activations;
  layer.tp_tensor = hidden_state;
  layer.tp_all_gathers = 2;
  layer.tp_reduce_scatters = 2;
  layer.cp_exchange = Bytes(2 * s * kv * kBf16);
  layer.pipeline_boundary = hidden_state;

  LayerGroup head;
  head.name = "final_norm_and_lm_head";
  const std::int64_t norm_params = (t.norm == TransformerSpec::Norm::rmsnorm ? 1 : 2) * t.hidden;
  // Tied: the head's weight is the embedding's, counted there; its GEMMs run here all the same.
  head.parameters = head.trainable_parameters = norm_params + (t.tied_embeddings ? 0 : t.vocabulary * t.hidden);
  head.ops = {pass("final_norm", norm_bytes * d, norm_kernels, false), gemm("lm_head", t.vocabulary, t.hidden, TpSplit::n)};
  // Cross-entropy in fp32 over the vocabulary, vocabulary-parallel under TP.
  Op loss = pass("loss", 14 * vocab, 6, true);
  loss.backward_bytes_per_token = Bytes(20 * vocab);
  loss.backward_kernels = 6;
  head.ops.push_back(loss);
  head.activations = Bytes(s * vocab * kBf16);  // the logits
  head.tp_tensor = hidden_state;                // the final norm's output, gathered before the head
  head.tp_all_gathers = 1;
  head.pipeline_boundary = hidden_state;  // as every hand-written head: its TP tensor
  return {embedding, layer, head};
}

}  // namespace sp::models
