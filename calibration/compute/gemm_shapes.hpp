// The GEMMs a workload runs, as scalepoint-gpu-bench measures them: every distinct GEMM kernel
// (forward, input and weight gradient; convolutions as implicit GEMMs batched over their groups)
// of one sample on one accelerator, with the dimension that grows with the per-accelerator batch
// and the one tensor parallelism splits. Taken from the same expansion the compute model uses
// (models/workloads/ops.hpp), so the bench measures exactly the shapes the model looks up.
#pragma once

#include <string>
#include <vector>

#include "models/workloads/workload.hpp"

namespace sp::calibration {

struct WorkloadGemm {
  std::string label;        // layer.op.pass
  double m = 0, n = 0, k = 0, batch = 1;  // at one sample, TP1 CP1
  char batch_dim = 'm';     // 'm', 'n' or 'k': multiplied by the samples per accelerator
  char tp_dim = '-';        // 'n' or 'k': divided by the TP size; '-' none
};

/// Distinct GEMM kernels of `w` (one per shape), in layer order.
std::vector<WorkloadGemm> workload_gemms(const models::Workload& w);

/// The shapes at `batch` samples per accelerator and TP `tp`, as the bench's --shapes CSV
/// (label,m,n,k,batch with a header).
std::string gemm_shapes_csv(const models::Workload& w, const std::vector<int>& batches, int tp);

/// A C++ table of workload_gemms() for every workload, compiled into scalepoint-gpu-bench, whose
/// node may lack the YAML library (calibration/bench/workload_gemms.inc).
std::string gemm_table_cxx(const std::vector<models::Workload>& workloads, const std::string& command);

}  // namespace sp::calibration
