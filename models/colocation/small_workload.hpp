// A small training job of the kind many of which share one GPU (hyper-parameter searches, k-fold
// cross-validation, ensembles): models/small/*.yaml. Its forward ops use the MLPerf workloads'
// vocabulary (models/workloads/ops.hpp: GEMMs, convolutions, element-wise work), so the same
// kernel-level cost model times them; backward and the optimizer follow from the ops and the
// parameter count. Beside the GPU work, what a framework costs on the host: a dispatch per kernel
// launch (PyTorch eager), host work per step (data loading not hidden, the loss read back), and
// the CPU cores a job keeps busy (its issuing thread and loader workers).
#pragma once

#include <string>
#include <vector>

#include "models/workloads/ops.hpp"
#include "models/hardware/accelerator.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct SmallWorkload {
  std::string name, description, source;
  std::string precision = "fp16";          // amp: tensor-core GEMMs at fp16
  double parameters = 0;
  double dataset_samples = 0;              // one epoch
  double positions_per_sample = 1;         // tokens/points/pixels each op's rows_per_sample counts in
  Bytes activations_per_sample;            // saved for backward (memory)
  double state_bytes_per_parameter = 16;   // weights, gradients, optimizer moments (Adam fp32: 16)
  std::vector<Op> ops;                     // forward
  // The optimizer's launches a step (PyTorch's foreach Adam: a few multi-tensor kernels; the
  // workload file may count GradScaler's and its copies too).
  double optimizer_kernels = 4;
  Duration dispatch_per_kernel = microseconds(10);  // host time to launch one kernel (framework + driver)
  // a kernel a library launches inside an op (cuDNN's): the driver's launch alone. Measured:
  // scalepoint-coloc-bench's bare launch, 3.7 us on the H100 node, 4.0-4.4 us on the H200 node
  // (`colocate --validate calibration/data/colocation/h{1,2}00_coloc_bench.csv`).
  Duration library_launch = microseconds(4);
  Duration host_per_step = microseconds(0);         // host work per step the GPU cannot overlap
  double cpu_cores = 1;                             // cores a job keeps busy when it runs at full speed
};

SmallWorkload parse_small_workload(const config::ConfigNode& node);

/// A host's time per launch (`dispatch_per_kernel`, `library_launch`): from 0 to 100 ms.
Duration parse_launch_time(const config::ConfigNode& node);

/// One kernel of a training step as the co-location simulation runs it.
struct StepKernel {
  Duration alone;    // on the whole accelerator, nothing beside it
  int width = 1;     // SMs it can occupy (its work units, capped at the accelerator's)
  double launches = 1;  // framework dispatches it stands for (dispatch_per_kernel each)
  Duration library_host;  // host time of the launches a library makes for it inside an op
  Bytes bytes;       // memory traffic
  bool memory_bound = false;
  bool host_waits = false;  // the host reads its result before the next launch (a mid-step `.item()`)
};

/// The kernels of one training step of `models` identical copies fused into one (HFTA: grouped
/// convolutions and batched GEMMs; 1 = a plain job) at `batch` samples per model, one StepKernel
/// per launch.
std::vector<StepKernel> step_kernels(const SmallWorkload& w, const Accelerator& a, double batch, int models = 1);

/// Device memory of one process training `models` fused copies at `batch` (contexts excluded):
/// states, saved activations, and the allocator's reserve.
Bytes training_memory(const SmallWorkload& w, double batch, int models = 1);

}  // namespace sp::models
