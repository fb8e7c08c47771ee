// Compute time of a layer group from the kernels it runs (ops.hpp) and what each kernel costs on
// the accelerator (kernel_costs.hpp), with two software factors:
//   time = [ sum over GEMM and attention kernels (latency + max(FLOPs at the shape's rate, bytes)
//            with an attention's products at its measured share of the GEMM rate, plus its softmax
//            exponentials at the multi-function units' rate, or the longer of the two where it
//            overlaps them)
//          + sum over element-wise kernels the implementation runs as described (ring attention's
//            merges: latency + bytes at bandwidth)
//          + sum over element-wise kernels as plain PyTorch runs them (latency + bytes at
//            bandwidth) / software_efficiency ]
//          / accelerator efficiency_scale
// software_efficiency is how much of the element-wise work the workload file describes (the
// kernel inventory of plain PyTorch) the MLPerf implementation still does: fused code launches
// fewer kernels and moves fewer bytes (above 1), unfused or extra work is below 1. GEMMs and fused
// attention already run at the accelerator's measured library rate, so fusion does not speed
// them up; that keeps a workload's sensitivity to memory bandwidth that of its remaining
// element-wise traffic (H100 and H200 differ only in HBM). efficiency_scale is how well the
// software stack runs on the accelerator at all (models/calibration.hpp). These are the only
// compute parameters fitted to training times; the batch dependence comes from the shapes and
// the kernel latency, not from a curve.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "models/compute/launch.hpp"
#include "models/workloads/ops.hpp"
#include "models/hardware/accelerator.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct PassCompute {
  Duration time;       // after the software factor
  Duration memory_bound;  // of `time`, the element-wise kernels' streaming (not their launch latency): bound by HBM, not SMs
  Flops model_flops;   // as the workload counts them
  double kernels = 0;  // as described (before fusion)
  std::vector<KernelRun> runs;  // in order, after the software factors: what the host dispatches
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

/// Eager dispatch of one micro-batch: one host dispatches the layers' forward kernels in order,
/// then their backward kernels in reverse, `dispatch` each; every pass's time becomes the span
/// the device needs for it in that pipeline (at least its kernels, more where the host is
/// behind). `layers` in forward order.
void dispatch_from_host(const std::vector<LayerCompute*>& layers, Duration dispatch);

/// Every layer instance of `w` in forward order (each group `repeat` times) for one micro-batch of
/// `layout` on `a`, dispatched from the host where the workload says so (dispatch_per_kernel): what
/// the step graph runs, and what it and the memory model split the pipeline on.
std::vector<LayerCompute> instance_computes(const Workload& w, const Accelerator& a, const ParallelLayout& layout);

/// While one lives on a thread, instance_computes of exactly `w` on exactly `a` (the same objects,
/// unchanged meanwhile) remembers its answers by what they depend on, the layout's shard (its
/// micro-batch, TP, CP and sequence parallelism): a layout search asks for the same shard's
/// computes for the memory of every pipeline split and recompute mode, for each bound and for each
/// graph. Scopes nest (the innermost answers, for its own objects only); copies of `w` or `a`, and
/// other threads, are computed as without one.
class InstanceComputeMemo {
 public:
  InstanceComputeMemo(const Workload& w, const Accelerator& a);
  ~InstanceComputeMemo();
  InstanceComputeMemo(const InstanceComputeMemo&) = delete;
  InstanceComputeMemo& operator=(const InstanceComputeMemo&) = delete;

  /// The remembered computes of `layout`'s shard, computed on first use; nullptr where `w` or `a`
  /// are not this scope's.
  static const std::vector<LayerCompute>* lookup(const Workload& w, const Accelerator& a, const ParallelLayout& layout);

 private:
  const Workload& w_;
  const Accelerator& a_;
  InstanceComputeMemo* outer_;
  std::map<std::tuple<int, int, int, bool>, std::vector<LayerCompute>> memo_;
};

}  // namespace sp::models
