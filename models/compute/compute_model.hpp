// Compute time of a layer group from the kernels it runs (ops.hpp) and what each kernel costs on
// the accelerator (kernel_costs.hpp), divided by one factor for the software that runs them:
//   time = sum over kernels (latency + max(FLOPs at the shape's GEMM rate, bytes at bandwidth))
//          / (software_efficiency x accelerator efficiency_scale)
// software_efficiency is how fast the implementation runs relative to the kernels as the workload
// file describes them (the kernel inventory of plain PyTorch): 1 runs as described, above 1 fused
// code (NVIDIA's MLPerf implementations launch fewer kernels and move fewer bytes), below 1 slower.
// It is the only compute parameter fitted to training times; the batch dependence comes from the
// shapes and the kernel latency, not from a curve.
#pragma once

#include "models/compute/ops.hpp"
#include "models/hardware/accelerator.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct PassCompute {
  Duration time;       // after the software factor
  Flops model_flops;   // as the workload counts them
  double kernels = 0;
};

struct LayerCompute {
  PassCompute forward, backward;
};

/// One kernel entry's time on `a` (no software factor).
Duration kernel_time(const Kernel& k, const Accelerator& a);

/// One instance of `layer` for one micro-batch share `s` on `a` (the shard's parameters and
/// flags are filled from the layer); `precision` overrides the workload's when not empty.
LayerCompute layer_compute(const LayerGroup& layer, const Workload& w, const Accelerator& a, Shard s,
                           const std::string& precision = {});

/// The factor compute time is divided by: the workload's software efficiency times the
/// accelerator's calibrated scale.
double software_factor(const Workload& w, const Accelerator& a);

/// Per sample, at the workload's sequence, no parallel split: the FLOPs the ops add up to.
Flops ops_flops(const LayerGroup& layer, const Workload& w, Pass pass);

}  // namespace sp::models
