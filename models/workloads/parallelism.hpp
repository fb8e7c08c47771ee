// How a training job is laid out on its accelerators: tensor (TP, with sequence parallelism),
// context (CP), pipeline (PP) and data (DP) parallel sizes, the micro-batch, the distributed
// optimizer (ZeRO-1) and whether tensor-parallel communication overlaps compute. Workload files
// give the layouts the v4.1 submissions used; a scenario can override any field, for every N or
// for one N. Ranks are ordered TP, CP, DP, PP (Megatron's default), TP innermost.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/network/topology.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

/// Where the distributed optimizer shards its states: nowhere (plain data parallel, gradients
/// all-reduced), over the whole data-parallel group (Megatron's distributed optimizer, ZeRO-1:
/// reduce-scatter, update a shard, all-gather), or within each node (apex's distributed
/// optimizers as NVIDIA ran BERT and Stable Diffusion: reduce-scatter inside the node,
/// all-reduce of the shard across nodes, all-gather inside).
enum class Sharding { none, global, within_node };
const char* sharding_name(Sharding s);

/// Activation recompute (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", MLSys 2023): none keeps every layer's activations for the backward; full
/// keeps only each layer's input and runs the layer's forward again (its TP communication too)
/// before its backward; selective recomputes only the attention core (the fused attention op).
enum class Recompute { none, selective, full };
const char* recompute_name(Recompute r);

/// How TransformerEngine reduce-scatters the input gradient of a column-parallel GEMM (qkv, fc1)
/// under sequence parallelism (Megatron's tp_comm_overlap_rs_dgrad): pipelined with that GEMM's
/// chunks (userbuffers' ring exchange), or in bulk beside the layer's weight-gradient GEMM, which
/// hides it where the weights train and leaves it exposed where they are frozen (LoRA's base
/// model: "Allow overlapping of dgrad reduce-scatter with dgrad GEMMs (instead of wgrad GEMMs which
/// are not done when using LoRA)", NVIDIA/NeMo scripts/performance/llm/finetune_llama3_70b.py).
/// bulk_under_context_parallel: pipelined at CP1, bulk at CP > 1, as NVIDIA's v4.1 Llama2 LoRA
/// recipes ran it (TransformerEngine of NeMo 24.09 did not pipeline it with CP: "TODO: TP-RS
/// overlap not enabled with CP2", conf/tp_overlap/h100tp4cp2mbs1.yaml).
enum class DgradReduceScatter { pipelined, bulk, bulk_under_context_parallel };
const char* dgrad_reduce_scatter_name(DgradReduceScatter d);

/// Column-parallel GEMMs of a transformer layer whose TP communication runs outside userbuffers
/// (Megatron's tp_comm_overlap_disable_qkv and _fc1): a plain all-gather before the GEMM, and the
/// input gradient's reduce-scatter in bulk (DgradReduceScatter::bulk) whatever the layout says.
struct PlainTpGemms {
  static constexpr const char* kQkv = "qkv";  // the attention's fused input projection
  static constexpr const char* kFc1 = "fc1";  // the MLP's first GEMM (gate and up under SwiGLU)
  bool qkv = false, fc1 = false;
  bool* flag(const std::string& gemm) { return gemm == kQkv ? &qkv : gemm == kFc1 ? &fc1 : nullptr; }
  bool holds(const std::string& gemm) const { return (gemm == kQkv && qkv) || (gemm == kFc1 && fc1); }
};

/// Limits on the model-parallel sizes the layout search tries (layout_search.hpp); an empty list
/// leaves that size free (every power of two the workload and machine allow).
struct LayoutSearch {
  std::vector<int> tensor, context, pipeline;
  // With a pipeline, the interleavings to try (empty: the layout's own); and the recompute modes,
  // in order, the first that fits in memory kept (empty: the layout's own), as a submitter
  // recomputes only what memory forces.
  std::vector<int> virtual_stages;
  std::vector<Recompute> recompute;
  // The micro-batch sizes the implementation accepts (empty: any that divides a rank's samples).
  std::vector<int> micro_batch;
  bool empty() const { return tensor.empty() && context.empty() && pipeline.empty(); }
};

/// Fields left unset inherit from the layer below (workload default < workload per-N <
/// scenario default < scenario per-N).
struct ParallelSpec {
  std::optional<int> tensor, context, pipeline, micro_batch;
  std::optional<int> virtual_stages;  // interleaved 1F1B: model chunks per pipeline stage
  std::optional<Sharding> distributed_optimizer;
  std::optional<bool> overlap_tensor_parallel;
  std::optional<DgradReduceScatter> dgrad_reduce_scatter;
  std::optional<PlainTpGemms> tensor_parallel_not_overlapped;
  std::optional<bool> evaluation_overlaps_all_gathers;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<LayoutSearch> search;
  // Model-parallel sizes to use instead, in order, where this layout does not fit in memory: the
  // recipe a submitter runs on a smaller part (TP1 CP2 on one H200 node, TP4 CP1 on H100s).
  struct Sizes {
    int tensor = 1, context = 1, pipeline = 1;
  };
  std::vector<Sizes> otherwise;
  // The sizes are the user's (a result row's TP/CP/PP, a scenario's tensor, context or pipeline):
  // taken as they are, not searched (layout_search.hpp).
  bool declared = false;
  // The micro-batch is the user's (a scenario's micro_batch): every size searched keeps it, where
  // it divides a rank's samples, instead of trying each one that does.
  bool micro_batch_pinned = false;

  void merge_from(const ParallelSpec& over);
  /// These model-parallel sizes, as they stand: no search and no recipe in their place.
  void fix_sizes(const Sizes& z);
};

struct ParallelSpecs {
  ParallelSpec all;
  std::map<int, ParallelSpec> by_accelerators;

  ParallelSpec for_accelerators(int n) const;
};

/// Parses {tensor, context, pipeline, virtual_stages, micro_batch, distributed_optimizer, recompute,
/// sequence_parallel, overlap_tensor_parallel, dgrad_reduce_scatter, tensor_parallel_not_overlapped:
/// [qkv, fc1], evaluation_overlaps_all_gathers, search: {tensor: [..], context: [..], pipeline: [..]},
/// otherwise: [{tensor, context, pipeline}, ..], by_accelerators: {N: {...}}}.
ParallelSpecs parse_parallel_specs(const config::ConfigNode& node);

/// A resolved layout for N accelerators and a global batch.
struct ParallelLayout {
  int tp = 1, cp = 1, pp = 1, dp = 1;
  int micro_batch = 1;     // samples per micro-batch per data-parallel rank
  int micro_batches = 1;   // per step per data-parallel rank (gradient accumulation)
  // Interleaved 1F1B (Narayanan et al., SC'21, arXiv 2104.04473): each stage holds this many
  // non-adjacent chunks of layers; the bubble shrinks v-fold, pipeline sends grow v-fold.
  int virtual_stages = 1;
  Sharding sharding = Sharding::none;
  bool overlap_tensor_parallel = true;
  // Under overlap_tensor_parallel: whether the column-parallel GEMMs' input-gradient reduce-scatters
  // are pipelined with them (DgradReduceScatter resolved at this CP), and which GEMMs run their TP
  // communication outside userbuffers.
  bool pipelined_dgrad_reduce_scatters = true;
  PlainTpGemms not_overlapped;
  // Whether a forward without gradients (the evaluation) still overlaps the all-gathers before
  // the column-parallel GEMMs. TransformerEngine 1.x turns that overlap off unless
  // torch.is_grad_enabled() (NVIDIA/TransformerEngine issue 1398, quoting _LayerNormLinear;
  // LayerNormMLP likewise), while its reduce-scatter overlap after the row-parallel GEMMs stays.
  bool evaluation_overlaps_all_gathers = true;
  Recompute recompute = Recompute::none;
  // Megatron's sequence parallelism with TP (the default): all-gathers before the column-parallel
  // GEMMs and reduce-scatters after the row-parallel ones, norms and dropouts on 1/TP of the
  // tokens. Without it (Megatron before 2022): all-reduces after the row-parallel GEMMs forward and
  // the column-parallel ones backward, and every TP rank runs the norms on the whole sequence.
  bool sequence_parallel = true;

  Group tp_group, cp_group, grad_group;  // grad_group: DP x CP, where gradients are reduced
  Group grad_inside, grad_across;        // grad_group's part inside one node, and across nodes
  int optimizer_shards = 1;              // ranks sharing one copy of the optimizer states
  int pp_peer_stride = 0;                // ranks between pipeline neighbours

  std::string describe() const;  // "TP4 CP2 PP1 DP128 mb1 x1 ZeRO-1" (+ " recompute=full")
};

/// The spec that gives exactly `layout` back, every choice a search made included (virtual
/// stages, recomputation, overlaps): to re-estimate a chosen layout with other inputs.
ParallelSpec spec_of(const ParallelLayout& layout);

/// Resolves `spec` for N and the global batch; nullopt with `why` when it cannot be laid out.
std::optional<ParallelLayout> resolve_layout(const ParallelSpec& spec, const Topology& topo, int accelerators,
                                             std::int64_t global_batch, std::string& why);

/// The group of `size` ranks spaced `stride` apart (ranks 0, s, 2s, ...), as fan-outs per tier.
Group strided_group(const Topology& topo, int stride, int size);

}  // namespace sp::models
