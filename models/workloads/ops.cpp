#include "models/workloads/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sp::models {

namespace {

std::string dtype_of(const Op& op, const Shard& s, const std::string& workload_precision) {
  if (s.cp > 1) {
    if (auto it = op.context_parallel_precision_by_family.find(s.family);
        it != op.context_parallel_precision_by_family.end()) {
      return it->second.precision;
    }
    if (!op.context_parallel_precision.empty()) return op.context_parallel_precision;
  }
  if (!op.precision.empty()) return op.precision;
  // FP8 training keeps attention in 16-bit (TransformerEngine's default in the v4.1 submissions).
  if (op.kind == OpKind::attention && workload_precision == "fp8") return "bf16";
  return workload_precision;
}

void add_gemm(std::vector<Kernel>& out, GemmShape shape, const std::string& dtype) {
  Kernel g;
  g.kind = Kernel::Kind::gemm;
  g.shape = shape;
  g.dtype = dtype;
  g.model_flops = g.shape.flops();
  out.push_back(g);
}

// GEMMs and convolutions: forward C = A W; backward the input gradient dA = dC W^T and the weight
// gradient dW = A^T dC, each the same FLOPs as the forward. A convolution's A (and dA) is the
// im2col view of its input: in memory input_reuse times smaller.
void expand_matmul(const Op& op, const Shard& s, Pass pass, const std::string& dtype, std::vector<Kernel>& out) {
  double n = op.n, k = op.k;
  if (op.tp_split == TpSplit::n) n /= s.tp;
  if (op.tp_split == TpSplit::k) k /= s.tp;
  std::vector<double> rows = op.rows_per_sample;
  if (rows.empty()) rows.push_back(s.tokens_per_sample);
  for (double per_sample : rows) {
    const double m = per_sample * s.samples / s.cp;
    const double r = op.input_reuse;
    // NCHW: a sample's positions are the contiguous run; 16-byte vectors need a multiple of them.
    const double vector = 16 / element_bytes(dtype);
    const bool strided = op.nchw_gemm && std::fmod(per_sample, vector) != 0;
    const auto shape = [&](double gm, double gn, double gk, double ra, double rb, double rc) {
      GemmShape g{gm, gn, gk, op.groups, ra, rb, rc};
      g.strided = strided;
      return g;
    };
    // Each of the three products touches the same two activations: the whole input and the output
    // (or their gradients).
    const Bytes activations((m * n + m * k * op.input_scale) * op.groups * element_bytes(dtype));
    const auto gemm = [&](GemmShape g) {
      if (op.nchw && !op.nchw_gemm) out.push_back(nchw_transposes(activations, dtype));  // channels-last
      add_gemm(out, g, dtype);
      if (op.nchw_gemm) out.back().nchw_activation_bytes = activations;
    };
    if (pass == Pass::forward) {
      gemm(shape(m, n, k, r, 1, 1));
      continue;
    }
    if (op.input_gradient) gemm(shape(m, k, n, 1, 1, r));
    if (s.trains_weights && !op.frozen) {
      const bool second = op.kind == OpKind::conv && op.input_gradient;
      gemm(shape(n, k, m, 1, r, 1));
      // One convolution-backward op launches both gradients' kernels.
      if (second) out.back().library_launch = true;
    }
  }
}

// Fused (flash) attention: forward runs Q K^T and P V (2 products), backward recomputes Q K^T and
// forms dV, dP, dQ, dK (5). Each work unit holds a tile of queries and its head_dim-wide output
// and streams the keys through (FlashAttention's loop): a GEMM of queries x head_dim whose inner
// dimension is the keys, half of them under a causal mask. Ring attention (CP) runs one kernel
// per ring step over a K/V chunk.
// Unfused attention: the scores of every head as an s x s matrix. Forward: Q K^T, the fused
// scale-mask-softmax (reads and writes the scores, 2 B each in fp16/bf16) and the dropout (reads
// the probabilities, writes them and a 1-byte mask), then P V: 9 B a score. Backward: dV = P^T dO,
// dP = dO V^T, the dropout's and the softmax's gradients (read mask, dP and P, write dS: 11 B a
// score) and dQ = dS K, dK = dS^T Q. A causal mask is applied, the masked half still computed.
void expand_unfused_attention(const Op& op, const Shard& s, Pass pass, const std::string& dtype,
                              std::vector<Kernel>& out) {
  const double heads = std::max(1.0, op.heads / s.tp);
  const double sequence = op.queries > 0 ? op.queries : s.tokens_per_sample;
  const double queries = sequence / s.cp;
  const double keys = op.keys > 0 ? op.keys : sequence;
  const double batch = heads * s.samples;
  const double scores = queries * keys * batch;
  const auto matmul = [&](double m, double n, double k) { add_gemm(out, GemmShape{m, n, k, batch}, dtype); };
  const auto stream = [&](double bytes_per_score, double kernels) {
    Kernel k;
    k.kind = Kernel::Kind::stream;
    k.bytes = Bytes(bytes_per_score * scores);
    k.count = kernels;
    k.dtype = dtype;
    out.push_back(k);
  };
  if (pass == Pass::forward) {
    matmul(queries, keys, op.head_dim);  // Q K^T
    stream(9, 2);                        // scale-mask-softmax, dropout
    matmul(queries, op.head_dim, keys);  // P V
    return;
  }
  matmul(keys, op.head_dim, queries);  // dV = P^T dO
  matmul(queries, keys, op.head_dim);  // dP = dO V^T
  stream(11, 2);                       // dropout and softmax gradients
  matmul(queries, op.head_dim, keys);  // dQ = dS K
  matmul(keys, op.head_dim, queries);  // dK = dS^T Q
}

// Ring attention merges each step's partial result, as TransformerEngine's AttnFuncWithCPAndKVP2P
// does (transformer_engine/pytorch/attention.py, v1.10 in NVIDIA's 24.09 containers): forward, the
// output zeroed, then per step out += out_step x exp(lse_step - lse) (read both, write out) and the
// log-sum-exp merged; backward, per step dQ += dQ_step and dK, dV concatenated into dKV then added
// into the ring's dKV buffer, and K, V copied once into the P2P buffer. Under a causal mask with
// its load balancing, a step with a later rank's keys merges half the queries: over the ranks,
// 1 + 0.75 (cp - 1) steps' worth. Elements of 2 B; FP8 merges in fp32 (4 B). `q_rows` is queries x
// heads on the rank, `keys` the keys a step brings.
Kernel ring_merges(const Op& op, const Shard& s, Pass pass, const std::string& dtype, double q_rows, double keys) {
  const double e = dtype == "fp8" ? 4.0 : 2.0;
  const double q = q_rows * op.head_dim * s.samples;
  const double kv_heads = std::max(1.0, (op.kv_heads > 0 ? op.kv_heads : op.heads) / s.tp);
  const double kv = 2.0 * keys * kv_heads * op.head_dim * s.samples;
  const double steps = op.causal ? 1.0 + 0.75 * (s.cp - 1) : s.cp;
  Kernel m;
  m.kind = Kernel::Kind::stream;
  m.dtype = dtype;
  m.as_run = true;
  if (pass == Pass::forward) {
    m.bytes = Bytes(q * e * (1.0 + 3.0 * steps));
    m.count = 1.0 + 2.0 * s.cp;  // the zeroing, then a merge of the output and one of the lse a step
  } else {
    m.bytes = Bytes(q * e * 3.0 * steps + kv * e * (5.0 * steps + 2.0));
    m.count = 1.0 + 3.0 * s.cp;  // the copy, then dQ's add, dKV's concatenation and add a step
  }
  return m;
}

void expand_attention(const Op& op, const Shard& s, Pass pass, const std::string& dtype, std::vector<Kernel>& out) {
  if (op.unfused) return expand_unfused_attention(op, s, pass, dtype, out);
  const double heads = std::max(1.0, op.heads / s.tp);
  const double sequence = op.queries > 0 ? op.queries : s.tokens_per_sample;
  const double queries = sequence / s.cp;
  const double keys = (op.keys > 0 ? op.keys : sequence) / s.cp;  // self-attention: the queries' sequence
  const double causal = op.causal ? 0.5 : 1.0;
  Kernel a;
  a.kind = Kernel::Kind::attention;
  a.shape = GemmShape{queries, op.head_dim, keys * causal, heads * s.samples};
  // The product's A operand is the score tile (queries x keys), formed and consumed on chip: it
  // never reaches HBM (FlashAttention's point). Only K or V (B) and the output (C) are traffic.
  a.shape.a_reuse = std::numeric_limits<double>::infinity();
  a.dtype = dtype;
  a.count = s.cp;
  a.work = pass == Pass::forward ? 2.0 : 5.0;
  // One exponential a score: forward forms P = exp(S - m); backward recomputes it once.
  a.exponentials = a.shape.m * a.shape.k * a.shape.batch;
  a.softmax_overlapped = op.softmax_overlapped;
  a.backward = pass == Pass::backward;
  const Flops forward = a.shape.flops() * (2.0 * s.cp);  // Q K^T and P V over every ring step
  a.model_flops = pass == Pass::forward ? forward : forward * 2.0;
  if (pass == Pass::backward) a.count = 2.0 * s.cp;  // the main kernel and its dQ/dK/dV post-pass
  if (pass == Pass::backward) a.work /= 2.0;         // ... the work split over them
  if (pass == Pass::backward) a.exponentials /= 2.0;  // ... the recompute in the main one
  out.push_back(a);
  if (s.cp > 1) out.push_back(ring_merges(op, s, pass, dtype, queries * heads, keys));
}

}  // namespace

Kernel nchw_transposes(Bytes activations, const std::string& dtype) {
  Kernel t;
  t.kind = Kernel::Kind::stream;
  t.access = Access::transpose;
  t.bytes = activations * 2.0;
  t.count = 2;
  t.dtype = dtype;
  t.library_launch = true;
  return t;
}

std::vector<Kernel> expand(const Op& op, const Shard& s, Pass pass, const std::string& workload_precision) {
  std::vector<Kernel> out;
  if (pass == Pass::backward && !s.backward) return out;
  const std::string dtype = dtype_of(op, s, workload_precision);
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::conv: expand_matmul(op, s, pass, dtype, out); break;
    case OpKind::attention: expand_attention(op, s, pass, dtype, out); break;
    case OpKind::elementwise: {
      const bool fwd = pass == Pass::forward;
      const double tokens = s.tokens_per_sample * s.samples / s.cp;
      Kernel k;
      k.kind = Kernel::Kind::stream;
      const double split = op.tensor_region || s.sequence_parallel ? s.tp : 1.0;
      k.bytes = ((fwd ? op.forward_bytes_per_token : op.backward_bytes_per_token) * tokens +
                 (fwd ? op.forward_bytes_per_sample : op.backward_bytes_per_sample) * (s.samples / s.cp)) /
                    split +
                (fwd ? op.forward_bytes_per_parameter : op.backward_bytes_per_parameter) * (s.parameters / s.tp);
      k.count = fwd ? op.forward_kernels : op.backward_kernels;
      k.access = op.strided ? Access::strided : Access::vector;
      k.blocks = fwd ? op.forward_blocks : op.backward_blocks;
      k.dtype = dtype;
      if (k.count > 0 || k.bytes.value() > 0) out.push_back(k);
      break;
    }
  }
  return out;
}

namespace {

void per_pass(const config::ConfigNode& n, Bytes& forward, Bytes& backward) {
  n.expect_only({"forward", "backward"});
  forward = n.at("forward").as_nonnegative_bytes();
  backward = n.at("backward").as_nonnegative_bytes();
}

TpSplit parse_split(const config::ConfigNode& n) {
  const std::string v = n.as_string();
  if (v == "n") return TpSplit::n;
  if (v == "k") return TpSplit::k;
  if (v == "none") return TpSplit::none;
  n.fail("unknown split '" + v + "'", "valid: n (column parallel), k (row parallel), none");
}

}  // namespace

std::string parse_precision(const config::ConfigNode& p) {
  const std::string v = p.as_string();
  if (v != "bf16" && v != "fp16" && v != "fp8") p.fail("unknown precision '" + v + "'", "valid: bf16, fp16, fp8");
  return v;
}

void parse_context_parallel_precision(const config::ConfigNode& p, Op& op) {
  if (!p.is_map()) {
    op.context_parallel_precision = parse_precision(p);
    return;
  }
  // {default: bf16, blackwell: fp8}: per accelerator family, `default` for the others
  if (!p.has("default")) p.fail("needs a default precision beside the families'", "e.g. {default: bf16, blackwell: fp8}");
  for (const auto& [family, v] : p.entries()) {
    if (family == "default") {
      op.context_parallel_precision = parse_precision(v);
      continue;
    }
    if (family.empty()) v.fail("an architecture family needs a name");
    op.context_parallel_precision_by_family[family] = {parse_precision(v), v.location(), v.path()};
  }
}

void parse_softmax(const config::ConfigNode& n, Op& op) {
  if (op.unfused) n.fail("an unfused attention's softmax is a pass over its scores in memory", "drop softmax, or run it fused");
  const std::string v = n.as_string();
  if (v != "serial" && v != "overlapped") n.fail("unknown softmax '" + v + "'", "valid: serial, overlapped");
  op.softmax_overlapped = v == "overlapped";
}

Op parse_op(const config::ConfigNode& n) {
  Op op;
  const char* kinds[] = {"gemm", "conv", "attention", "elementwise"};
  int found = 0;
  for (int i = 0; i < 4; ++i) {
    if (n.has(kinds[i])) {
      op.kind = static_cast<OpKind>(i);
      op.name = n.at(kinds[i]).as_string();
      ++found;
    }
  }
  if (found != 1) n.fail("an op names exactly one of gemm, conv, attention, elementwise", "e.g. {gemm: qkv, n: 3072, k: 1024}");
  if (auto p = n.find("precision")) op.precision = parse_precision(*p);
  const auto count = [&](const char* key) { return static_cast<double>(n.at(key).as_positive_int()); };
  switch (op.kind) {
    case OpKind::gemm:
      n.expect_only({"gemm", "n", "k", "rows_per_sample", "tp_split", "frozen", "input_gradient", "precision"});
      op.n = count("n");
      op.k = count("k");
      if (auto r = n.find("rows_per_sample")) op.rows_per_sample.push_back(r->as_positive_number());
      break;
    case OpKind::conv: {
      n.expect_only({"conv", "in", "out", "kernel", "stride", "groups", "positions", "layout", "frozen",
                     "input_gradient", "precision"});
      if (auto l = n.find("layout")) {
        const std::string v = l->as_string();
        if (v != "nchw" && v != "nhwc") l->fail("unknown layout '" + v + "'", "valid: nhwc (channels last), nchw");
        op.nchw = v == "nchw";
      }
      const double in = count("in"), out = count("out");
      double kernel_area = 1;
      const config::ConfigNode kn = n.at("kernel");
      if (kn.is_sequence()) {
        for (const auto& d : kn.elements()) kernel_area *= static_cast<double>(d.as_positive_int());
      } else {
        kernel_area = static_cast<double>(kn.as_positive_int()) * static_cast<double>(kn.as_positive_int());
      }
      if (auto g = n.find("groups")) op.groups = static_cast<double>(g->as_positive_int());
      if (static_cast<std::int64_t>(in) % static_cast<std::int64_t>(op.groups) != 0 ||
          static_cast<std::int64_t>(out) % static_cast<std::int64_t>(op.groups) != 0) {
        n.at("groups").fail("must divide in and out channels");
      }
      op.n = out / op.groups;
      op.k = in / op.groups * kernel_area;
      const double stride = n.has("stride") ? static_cast<double>(n.at("stride").as_positive_int()) : 1.0;
      op.input_reuse = kernel_area / std::min(kernel_area, stride * stride);
      op.nchw_gemm = op.nchw && kernel_area == 1 && stride == 1 && op.groups == 1;
      op.input_scale = stride * stride / kernel_area;
      const config::ConfigNode pos = n.at("positions");
      for (const auto& p : pos.elements()) op.rows_per_sample.push_back(p.as_positive_number());
      if (op.rows_per_sample.empty()) pos.fail("needs the output positions (H x W) per sample, one per kernel");
      break;
    }
    case OpKind::attention:
      n.expect_only({"attention", "heads", "kv_heads", "head_dim", "causal", "queries", "keys", "precision",
                     "context_parallel_precision", "implementation", "softmax"});
      if (auto i = n.find("implementation")) {
        const std::string v = i->as_string();
        if (v != "fused" && v != "unfused") i->fail("unknown implementation '" + v + "'", "valid: fused (flash), unfused");
        op.unfused = v == "unfused";
      }
      if (auto p = n.find("context_parallel_precision")) parse_context_parallel_precision(*p, op);
      if (auto p = n.find("softmax")) parse_softmax(*p, op);
      op.heads = count("heads");
      op.kv_heads = n.has("kv_heads") ? count("kv_heads") : op.heads;
      op.head_dim = count("head_dim");
      if (auto c = n.find("causal")) op.causal = c->as_bool();
      if (auto q = n.find("queries")) op.queries = q->as_positive_number();
      if (auto k = n.find("keys")) op.keys = k->as_positive_number();
      break;
    case OpKind::elementwise: {
      n.expect_only({"elementwise", "region", "per_token", "per_sample", "per_parameter", "kernels", "access",
                     "blocks", "precision"});
      // Per pass and bounded: kernels are launched one by one (the co-location simulation runs
      // each), so a count beyond a real framework's is a typo; blocks are whole, 0 for plenty.
      const auto bounded = [](const config::ConfigNode& v, double most, bool integral, const std::string& what) {
        const double c = v.as_number();
        if (!(c >= 0 && c <= most && (!integral || c == std::floor(c)))) v.fail("needs " + what);
        return c;
      };
      const std::string blocks = "a whole number of blocks, 0 for plenty";
      if (auto b = n.find("blocks")) {  // N for both passes, or {forward: N, backward: M}
        if (b->is_map()) {
          b->expect_only({"forward", "backward"});
          op.forward_blocks = bounded(b->at("forward"), 1e9, true, blocks);
          op.backward_blocks = bounded(b->at("backward"), 1e9, true, blocks);
        } else {
          op.forward_blocks = op.backward_blocks = bounded(*b, 1e9, true, blocks);
        }
      }
      if (auto a = n.find("access")) {
        const std::string v = a->as_string();
        if (v != "vector" && v != "strided") a->fail("unknown access '" + v + "'", "valid: vector (default), strided");
        op.strided = v == "strided";
      }
      if (auto r = n.find("region")) {
        const std::string region = r->as_string();
        if (region != "tensor" && region != "sequence") r->fail("unknown region '" + region + "'", "valid: tensor, sequence");
        op.tensor_region = region == "tensor";
      }
      if (auto t = n.find("per_token")) per_pass(*t, op.forward_bytes_per_token, op.backward_bytes_per_token);
      if (auto t = n.find("per_sample")) per_pass(*t, op.forward_bytes_per_sample, op.backward_bytes_per_sample);
      if (auto t = n.find("per_parameter")) per_pass(*t, op.forward_bytes_per_parameter, op.backward_bytes_per_parameter);
      const config::ConfigNode k = n.at("kernels");
      k.expect_only({"forward", "backward"});
      const std::string kernels = "kernel counts between 0 and 100,000";
      op.forward_kernels = bounded(k.at("forward"), 1e5, false, kernels);
      op.backward_kernels = bounded(k.at("backward"), 1e5, false, kernels);
      break;
    }
  }
  if (op.kind == OpKind::gemm || op.kind == OpKind::conv) {
    if (auto f = n.find("frozen")) op.frozen = f->as_bool();
    if (auto g = n.find("input_gradient")) op.input_gradient = g->as_bool();
  }
  if (op.kind == OpKind::gemm) {
    if (auto t = n.find("tp_split")) op.tp_split = parse_split(*t);
  }
  return op;
}

}  // namespace sp::models
