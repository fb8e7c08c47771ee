// Choosing the parallel layout as a submitter tunes it: among the model-parallel sizes a
// workload allows (ParallelSpecs::search), the fastest time to train that fits in memory.
#pragma once

#include <optional>

#include "models/training/time_to_train.hpp"

namespace sp::models {

/// Where a layout search may look beyond the given sizes.
enum class LayoutFallback {
  none,  // only `base` and `search`: a layout that does not fit is reported, not replaced
  any,   // if neither fits, every TP in {1,2,4,8} x CP in {1,2,4} x PP in {1,2,4,8}
};

/// The usual layout is `base`, or where it does not fit the first of `base.otherwise` that does.
/// The fastest estimate among the usual layout and the combinations of `search` (an empty list keeps
/// base's size), each with base's micro-batch or, when none is set, the largest micro-batch
/// that fits (smaller ones mean gradient accumulation and only run slower). Ties keep the
/// earlier candidate; the usual layout is kept unless another beats it by more than 2 %. nullopt
/// when nothing resolves; otherwise an estimate whose status says why when none fits.
std::optional<TrainingEstimate> fastest_layout(const Workload& w, const Platform& p, int accelerators,
                                               std::int64_t global_batch, const ParallelSpec& base,
                                               const LayoutSearch& search, Fidelity fidelity = Fidelity::analytic,
                                               LayoutFallback fallback = LayoutFallback::none);

}  // namespace sp::models
