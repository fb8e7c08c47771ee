// The `transformer:` key of a workload file: an architecture, its trainable set and its kernels'
// precisions (transformer.hpp says what each means).
#include <string>

#include <fmt/format.h>

#include "models/workloads/transformer.hpp"

namespace sp::models {

namespace {

std::int64_t positive(const config::ConfigNode& n, const char* key) { return n.at(key).as_count(); }

// A dimension past any model's by orders of magnitude is a slip (a unit, an extra digit), and
// would only exhaust memory or overflow a parameter count later: refused where it is written.
std::int64_t dimension(const config::ConfigNode& n, const char* key, std::int64_t most) {
  const std::int64_t v = positive(n, key);
  if (v > most) n.at(key).fail("at most " + std::to_string(most) + " (larger than any model by far)");
  return v;
}

// Whether the key of `n` names `second` of its two values (`first` when absent), refused naming both.
bool is_second(const config::ConfigNode& n, const char* key, const char* first, const char* second, bool absent = false) {
  const auto v = n.find(key);
  if (!v) return absent;
  const std::string s = v->as_string();
  if (s != first && s != second) v->fail("unknown " + std::string(key) + " '" + s + "'", std::string("valid: ") + first + ", " + second);
  return s == second;
}

// `attention: fused | unfused`, or {implementation, precision, context_parallel_precision, softmax}
// as an attention op takes them.
void parse_attention(const config::ConfigNode& a, TransformerSpec& t) {
  std::string implementation = "fused";
  if (a.is_map()) {
    a.expect_only({"implementation", "precision", "context_parallel_precision", "softmax"});
    if (auto i = a.find("implementation")) implementation = i->as_string();
    if (auto p = a.find("precision")) t.attention_precisions.precision = parse_precision(*p);
    if (auto p = a.find("context_parallel_precision")) parse_context_parallel_precision(*p, t.attention_precisions);
  } else {
    implementation = a.as_string();
  }
  if (implementation != "fused" && implementation != "unfused") {
    (a.is_map() ? a.at("implementation") : a).fail("unknown attention '" + implementation + "'", "valid: fused (flash), unfused");
  }
  t.unfused_attention = t.attention_precisions.unfused = implementation == "unfused";
  if (auto p = a.is_map() ? a.find("softmax") : std::nullopt) parse_softmax(*p, t.attention_precisions);
}

TransformerSpec::Lora parse_lora(const config::ConfigNode& n, const TransformerSpec& t) {
  n.expect_only({"rank", "targets", "dropout", "precision"});
  TransformerSpec::Lora l;
  l.rank = positive(n, "rank");
  if (l.rank > t.hidden) n.at("rank").fail("exceeds hidden (" + std::to_string(t.hidden) + "): no low-rank adapter");
  const config::ConfigNode targets = n.at("targets");
  for (const auto& e : targets.elements()) {
    const std::string v = e.as_string();
    bool* flag = v == "qkv" ? &l.qkv : v == "o" ? &l.o : v == "mlp" ? &l.mlp : nullptr;
    if (flag == nullptr) e.fail("unknown LoRA target '" + v + "'", "valid: qkv, o, mlp");
    if (*flag) e.fail("target '" + v + "' named twice");
    *flag = true;
  }
  if (!(l.qkv || l.o || l.mlp)) targets.fail("needs at least one target: qkv, o, mlp");
  if (auto d = n.find("dropout")) l.dropout = d->as_bool();
  if (auto p = n.find("precision")) l.precision = parse_precision(*p);
  return l;
}

}  // namespace


TransformerSpec parse_transformer(const config::ConfigNode& n) {
  n.expect_only({"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "activation", "norm", "bias",
                 "vocabulary", "sequence", "tied_embeddings", "attention", "position", "elementwise", "dropout",
                 "lora", "activation_input"});
  TransformerSpec t;
  const std::int64_t layers = positive(n, "layers");
  if (layers > 100'000) n.at("layers").fail("at most 100000 layers");
  t.layers = static_cast<int>(layers);
  // Bounds about 50 times past the largest published dense models (hidden 18,432 and FFN 73,728
  // in Megatron's 1T configuration, Narayanan et al. 2021 Table 1; 128 heads; 128 K-token
  // contexts and vocabularies), so that the parameter count stays far inside 64 bits.
  t.hidden = dimension(n, "hidden", 1 << 20);
  t.heads = dimension(n, "heads", 1 << 16);
  t.kv_heads = n.has("kv_heads") ? dimension(n, "kv_heads", 1 << 16) : t.heads;
  if (t.heads % t.kv_heads != 0) n.at("kv_heads").fail("must divide heads (" + std::to_string(t.heads) + ")");
  if (n.has("head_dim")) {
    t.head_dim = dimension(n, "head_dim", 1 << 16);
  } else {
    if (t.hidden % t.heads != 0) n.at("heads").fail("must divide hidden, or give head_dim");
    t.head_dim = t.hidden / t.heads;
  }
  t.ffn = dimension(n, "ffn", 1 << 22);
  t.vocabulary = dimension(n, "vocabulary", 1 << 24);
  t.sequence = dimension(n, "sequence", 1 << 24);
  // Every dimension within bounds can still multiply into an absurd model: at most 10^15
  // weights (a thousand times the largest trained), counted in double before any int64 sum.
  const double h = static_cast<double>(t.hidden), attention = static_cast<double>(t.heads * t.head_dim);
  const double kv = static_cast<double>(t.kv_heads * t.head_dim);
  const double weights = static_cast<double>(t.layers) * (h * (attention + 2 * kv) + attention * h + 3 * h * static_cast<double>(t.ffn)) +
                         2 * h * static_cast<double>(t.vocabulary);
  if (weights > 1e15) {
    n.at("layers").fail(fmt::format("the architecture has {:.3g} weights: at most 1e15 (a thousand times the largest trained)", weights));
  }
  if (is_second(n, "activation", "swiglu", "gelu")) t.activation = TransformerSpec::Activation::gelu;
  if (is_second(n, "norm", "rmsnorm", "layernorm")) t.norm = TransformerSpec::Norm::layernorm;
  if (auto b = n.find("bias")) t.bias = b->as_bool();
  if (auto e = n.find("tied_embeddings")) t.tied_embeddings = e->as_bool();
  if (auto a = n.find("attention")) parse_attention(*a, t);
  if (is_second(n, "position", "rope", "learned")) t.position = TransformerSpec::Position::learned;
  t.fused_elementwise = is_second(n, "elementwise", "eager", "fused");
  if (auto d = n.find("dropout")) t.dropout = d->as_bool();
  if (auto l = n.find("lora")) t.lora = parse_lora(*l, t);
  if (auto a = n.find("activation_input")) {
    const std::string v = a->as_string();
    if (v == "fp8") {
      t.fp8_activation_input = Fp8Store::always;
    } else if (v == "fp8_where_needed") {
      t.fp8_activation_input = Fp8Store::where_needed;
    } else if (v != "bf16") {
      a->fail("unknown activation_input '" + v + "'", "valid: bf16, fp8, fp8_where_needed");
    }
  }
  return t;
}

}  // namespace sp::models
