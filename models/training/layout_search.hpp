// Choosing the parallel layout as a submitter tunes it: among every tensor, context and pipeline
// size and micro-batch that the workload's implementation offers (its `search` lists), its file
// describes (unsupported_split) and the memory holds, the fastest simulated time to train. The
// optimizer's sharding is the implementation's (apex shards within a node, Megatron over the
// data-parallel group), not a knob of the layout. The workload's recipe (its layout at N,
// or where that does not fit the first of its `otherwise` list that does) is where the search
// starts: it is kept unless another layout beats it by more than the model resolves between
// layouts (10 %, layout_search.cpp). A
// layout the user declares (a result row's TP/CP/PP, a scenario's sizes) is taken as it is.
#pragma once

#include <optional>

#include "models/training/time_to_train.hpp"

namespace sp::models {

/// Where the search may go when a declared layout does not fit.
enum class LayoutFallback {
  none,  // report why (out_of_memory); a scenario's layout is the user's to change
  any,   // the fastest layout that fits, and say so (a published system did run)
};

/// Whether the recipe gives way to a faster layout: `fastest` answers a user's question (the
/// recipe kept within the model's resolution of the fastest); `recipe` reproduces a published row,
/// which ran its submitter's layout, the workload's recipe for it (searched only where that does
/// not fit), so that fitting the model to such rows never depends on the layout the model, before
/// it is fitted, would prefer.
enum class LayoutChoice { fastest, recipe };

/// The search space beyond the recipe: every power of two up to these sizes that divides N
/// (TP also within one scale-up domain), with and without pipelines (1F1B trades a bubble for
/// memory, which may cost less than the recompute or the TP a layout without one needs), and
/// every micro-batch that divides a data-parallel rank's samples (with pipelines, which trade
/// the bubble against kernel efficiency; without, the largest that fits: gradient accumulation
/// only runs slower).
inline constexpr int kMaxContextParallel = 16;
/// What an output's layout_basis column holds.
inline constexpr const char* kLayoutBasis =
    "declared: the system's or scenario's | recipe: the workload's, within 10 % of the fastest | searched: the fastest";
inline constexpr int kMaxPipelineParallel = 16;

/// The fastest layout for N and the global batch, as above; `search` (when not empty) limits the
/// sizes tried beyond the recipe to its lists. nullopt when nothing resolves; otherwise an
/// estimate whose status says why when none fits, and whose layout_basis, runner_up and
/// runner_up_slower say how it was chosen.
std::optional<TrainingEstimate> fastest_layout(const Workload& w, const Platform& p, int accelerators,
                                               std::int64_t global_batch, const ParallelSpec& base,
                                               const LayoutSearch& search, Fidelity fidelity = Fidelity::analytic,
                                               LayoutFallback fallback = LayoutFallback::none,
                                               LayoutChoice choice = LayoutChoice::fastest);

/// Whether fastest_layout has any layout to consider for N and the global batch (one that
/// resolves: sizes that divide N, micro-batches that divide a rank's samples), without its
/// memory or a simulated step: what a scenario's loader asks of every N.
bool some_layout_resolves(const Workload& w, const Platform& p, int accelerators, std::int64_t global_batch,
                          const ParallelSpec& base, const LayoutSearch& search);

}  // namespace sp::models
