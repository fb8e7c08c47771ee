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
// Activations kept per layer and sequence: 34 s d bytes, Korthikanti et al. (MLSys 2023) without
// recompute, with flash attention; unfused attention keeps 5 a s^2 more.
#pragma once

#include <cstdint>
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

}  // namespace sp::models
