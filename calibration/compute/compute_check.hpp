// `scalepoint compute-check`: the kernel-level compute model against whole forward/backward
// passes measured on a real accelerator (JSON lines as calibration/data/gpu/h100/workloads.jsonl
// has them), with one software-efficiency factor for the implementation that was measured.
//
// Each measured configuration maps to a workload of the catalog and a shard of it:
//   bert             graph_fwdbwd, graph_step      BERT-large, b sequences, whole model
//   llama_tp4_layer  graph_step                    one Llama2-70B decoder layer, TP4 shard
//                                                  without sequence parallelism, one sequence of T
//   retinanet        graph_step_compute_only       RetinaNet, b images, whole model
// in the measurement's dtype (bf16) rather than the workload's MLPerf precision; `_step` modes add
// the optimizer (fused Adam: 28 B per trainable parameter). The torchvision loss (host loops) is
// left out.
// Eager modes (eager_fwdbwd, eager_step, eager_step_compute_only) are predicted by dispatching
// the same kernels from the host (models/compute/launch.hpp) with one dispatch cost per kernel,
// fitted on BERT's eager rows (the script whose kernel inventory a profile checks) and held fixed
// for the eager rows of the other two scripts, which it predicts.
// Each measured script is its own implementation: its factor is fitted by least squares on log
// time over its rows, so what is checked is how time changes with batch, sequence and TP split,
// which is what the kernel model predicts. The factor common to all three plain-PyTorch scripts
// is reported beside it: it tests the element-wise kernel inventories too, which are profiled
// for BERT only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/catalog.hpp"

namespace sp::calibration {

struct CheckRow {
  int line = 0;
  std::string kind, mode;
  double batch = 0;          // sequences, images, or tokens (llama: T)
  double measured_s = 0;
  double modelled_s = 0;     // device time before the implementation factor
  double predicted_s = 0;    // after it, and for eager rows with the host's dispatches
  bool eager = false;        // host-dispatched (no CUDA graph)
  bool fits_dispatch = false;  // a row the dispatch cost was fitted on
  double kernels = 0;        // modelled kernels per step
  double measured_kernels = 0;  // from a profile row of the same configuration, 0 if none
  double error = 0;          // modelled / (its script's factor) / measured - 1
  double common_error = 0;   // modelled / (the common factor) / measured - 1
};

struct ComputeCheck {
  std::string accelerator;
  double common_factor = 1;                 // one software efficiency for all rows
  std::map<std::string, double> factor;     // by kind: each script's software efficiency (graph rows)
  double dispatch_s = 0;                    // host time per kernel in eager PyTorch (0: no eager rows)
  std::vector<CheckRow> rows;
};

/// Reads `file` (JSON lines) and predicts every configuration it can map; InputError at
/// file:line for a malformed line.
ComputeCheck run_compute_check(const std::string& file, const models::Accelerator& accelerator,
                               const models::Catalog& catalog);

}  // namespace sp::calibration
