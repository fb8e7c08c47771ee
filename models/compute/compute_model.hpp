// Compute time of a layer from its FLOPs: peak throughput at the workload's precision times an
// achieved efficiency that falls as the per-accelerator batch shrinks (small kernels fill the
// device less well: the main loss in strong scaling).
//   efficiency(b) = efficiency_max * b / (b + half_efficiency_batch)
#pragma once

#include <algorithm>

#include "models/hardware/accelerator.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct ComputeModel {
  FlopsPerSecond peak;
  double efficiency_max = 1.0;
  double half_efficiency_batch = 0.0;

  double efficiency(double per_accelerator_batch) const {
    return efficiency_max * per_accelerator_batch / (per_accelerator_batch + half_efficiency_batch);
  }
  /// Time for `per_accelerator_batch` samples of `flops_per_sample` each.
  Duration time(Flops flops_per_sample, double per_accelerator_batch) const {
    return flops_per_sample * per_accelerator_batch / (peak * efficiency(per_accelerator_batch));
  }
};

/// The workload's curve on an accelerator: its peak at the workload's precision, and the
/// curve's maximum scaled by how well the accelerator's software runs this kind of work
/// (efficiency_scale, 1 for the reference H100, set by calibration), capped at what the
/// accelerator's best GEMM reached where that was measured (1, the peak, otherwise).
inline ComputeModel compute_model_for(const Workload& w, const Accelerator& a) {
  return ComputeModel{a.training_peak(w.precision).value(),
                      std::min(a.gemm_ceiling(w.precision), w.efficiency_max * a.efficiency_scale),
                      w.half_efficiency_batch};
}

}  // namespace sp::models
