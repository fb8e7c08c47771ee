// A decoder-only transformer from its architecture: the `transformer:` key of a workload file
// instead of hand-written `layers:`. The layer groups (embedding, decoder layer x L, final norm
// and LM head) and their ops are generated with the vocabulary the hand-written files use
// (GEMMs by weight shape and TP split, fused attention, memory-bound passes by bytes per token), so
// the step graph, the layout search and the memory model treat them alike.
//
// Counts (per layer, d = hidden, q = heads x head_dim, kv = kv_heads x head_dim, f = ffn):
//   weights  d q + 2 d kv + q d + (3 or 2) d f  (SwiGLU: gate, up, down; GeLU: fc1, fc2)
//   biases   q + 2 kv + d + f (+ f for SwiGLU's up) + d       (when `bias: true`)
//   norms    2 d (RMSNorm) or 4 d (LayerNorm, with its bias)
// Forward FLOPs per token are 2 x the GEMM weights plus attention's 4 s q (2 s q causal); the
// backward is twice the forward where everything trains.
// The memory-bound passes' bytes per element, each with its kernel count, backward twice the
// forward (transformer.cpp names each kernel's reads and writes):
//   eager: norms ~36 B (RMSNorm) or ~40 B (LayerNorm) unfused in fp32, residual adds 6 B, dropout
//          5 B, RoPE ~26 B, SwiGLU 10 B, GeLU with its bias 8 B;
//   fused: norms 4 B, residual add 6 B (7 B with the dropout's mask), SwiGLU 6 B, bias-GeLU 4 B;
// cross-entropy ~14 B a logit forward and ~20 backward either way.
// Activations kept per layer and token, by the tensors backward reads (Korthikanti et al., MLSys
// 2023, section 4.1, whose GPT layer keeps 34 d bytes): the two norms' inputs 4 d; the attention
// input 2 d where q, k, v train; Q, K, V 2 (q + 2 kv); the attention output 2 q; each hidden
// dropout's mask d; the MLP input 2 d where it trains; the activation's input 2 f (GeLU) or 4 f
// (SwiGLU's gate and up), half that stored in fp8; the second MLP GEMM's input 2 f where it trains.
// Frozen GEMMs need no input; an adapter needs its input, or its dropout's output and mask (3 x).
// Unfused attention keeps 5 a s^2 more per sequence.
//
// LoRA (Hu et al., ICLR 2022): the base weights frozen, rank-r adapters A (in -> r) and B (r -> out)
// beside the GEMMs named, as NeMo builds them (one adapter on the fused q, k, v projection; o;
// the MLP's first GEMM, gate and up together, and its second): A replicated on the TP ranks where
// its GEMM is column parallel, split by k where row parallel; B the other way. Each adapter adds
// its output scaled (10 B an element eager, 6 fused, 2 kernels or 1) and, with adapter dropout, a
// dropout pass over its input (5 B, 1 kernel).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workloads/workload.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

struct TransformerSpec {
  int layers = 0;
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocabulary = 0, sequence = 0;
  enum class Activation { swiglu, gelu } activation = Activation::swiglu;
  enum class Norm { rmsnorm, layernorm } norm = Norm::rmsnorm;
  bool bias = false;
  bool tied_embeddings = false;
  // fused (FlashAttention, no s x s scores kept) or unfused (Megatron before 2023: the scores'
  // softmax, dropout mask and dropout output kept, 5 a s^2 bytes a layer and sequence, Korthikanti
  // et al. 2023, which selective recompute drops)
  bool unfused_attention = false;
  // rope: rotary embeddings applied to q and k in every layer (Llama); learned: absolute position
  // embeddings added once at the input (GPT-3, Megatron's GPT), sequence x hidden more weights
  enum class Position { rope, learned } position = Position::rope;
  // eager: the norms, residual adds and activation as plain PyTorch runs them, one kernel per
  // operator in fp32 (left to the workload's software_efficiency to fuse); fused: as Megatron,
  // NeMo and Transformer Engine run them, one kernel each that reads its inputs and writes its
  // outputs once in bf16 (fused LayerNorm/RMSNorm, bias-dropout-add, bias-GeLU or SwiGLU)
  bool fused_elementwise = false;
  // hidden dropout after attention and after the MLP (Megatron's GPT trains with it; Llama does
  // not): a 1-byte mask written per element, a separate pass when not fused
  bool dropout = false;
  struct Lora {
    std::int64_t rank = 0;
    bool qkv = false, o = false, mlp = false;  // the GEMMs adapted
    bool dropout = false;                      // on each adapter's input (NeMo's adapter_dropout, "pre")
    std::string precision;                     // the adapters' GEMMs ("": the workload's)
  };
  std::optional<Lora> lora;  // none: every weight trains
  // The attention kernels' precision ("": bf16 under an fp8 workload, else the workload's), where
  // context parallelism splits the sequence (per family, as an attention op's keys), and how
  // they run their softmax (`softmax`: serial unless overlapped).
  Op attention_precisions;
  // The activation function's input kept for backward in fp8 (TransformerEngine's
  // activation_func_fp8_input_store, NeMo's FP8_ACTIVATION) instead of bf16: never, always, or
  // where a layout would not fit otherwise (Fp8Store, MemoryRule::fp8_activation_input).
  Fp8Store fp8_activation_input = Fp8Store::never;
};

TransformerSpec parse_transformer(const config::ConfigNode& node);

/// The layer groups of `spec`, every parameter trainable; forward/backward FLOPs left for the
/// workload parser to add up from the ops (as for hand-written layers).
std::vector<LayerGroup> transformer_layers(const TransformerSpec& spec);

/// Parameters of one decoder layer, and of the whole model.
std::int64_t decoder_layer_parameters(const TransformerSpec& spec);
std::int64_t transformer_parameters(const TransformerSpec& spec);
/// Learned absolute position embeddings (sequence x hidden), 0 with RoPE.
std::int64_t position_parameters(const TransformerSpec& spec);
/// The LoRA adapters' parameters of one decoder layer (0 without LoRA).
std::int64_t adapter_parameters(const TransformerSpec& spec);
/// Bytes one decoder layer keeps per token for backward, without recompute and without the
/// unfused attention's s x s terms (the counts above), the activation function's input in bf16.
/// Of them: `sequence`, in the sequence region (the norms'
/// inputs, the GEMM inputs and dropout masks that sequence parallelism shards: Korthikanti et al.
/// 2023's 10 s b h), which TP splits only under sequence parallelism; `tp_replicated`, what every
/// TP rank keeps whole (LoRA's qkv adapter input, gathered as NeMo hands it over when qkv's
/// all-gather is not overlapped, its default: taken for every LoRA on qkv); `fp8_saving`, what
/// storing the activation's input in fp8 saves.
struct KeptBytes {
  double total = 0, sequence = 0, tp_replicated = 0, fp8_saving = 0;
};
KeptBytes kept_bytes(const TransformerSpec& spec);
inline double kept_bytes_per_token(const TransformerSpec& spec) { return kept_bytes(spec).total; }

}  // namespace sp::models
