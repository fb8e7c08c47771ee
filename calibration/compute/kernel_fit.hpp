// `scalepoint calibrate compute`: an accelerator's kernel costs (models/hardware/kernel_costs.hpp)
// fitted to its measurements (compute_measurements.hpp):
//  - per dtype, the GEMM mainloop efficiency_max (logit) and k_overhead (log), by
//    Levenberg-Marquardt on log time over every measured GEMM of that dtype;
//  - the kernel latency: the median of the latency probes where there are any, else fitted with
//    the GEMMs (the intercept of a graph-timed GEMM is one kernel's latency);
//  - the memory efficiency: the median achieved / peak bandwidth of copies of 64 MiB and more.
// The measured GEMMs are kept in the fragment as the accelerator's table: the model uses them to
// correct its trend near measured shapes. The report gives each GEMM's error by the trend alone
// and by trend and table with that GEMM left out (what the table does for a shape it lacks).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "calibration/compute/compute_measurements.hpp"
#include "models/hardware/accelerator.hpp"

namespace sp::calibration {

struct GemmCheck {
  GemmSample sample;
  double trend_error = 0;     // trend / measured - 1
  double held_out_error = 0;  // trend corrected by the other measured GEMMs / measured - 1
  double table_error = 0;     // trend corrected by every measured GEMM, this one included / measured - 1
};

struct KernelFit {
  models::Accelerator accelerator;  // the base file's, with the fitted compute section
  std::vector<GemmCheck> checks;
  bool latency_fitted = false;      // no latency probe: the GEMMs' intercept
  std::map<std::string, int> skipped;  // GEMMs of dtypes without a peak in the file (fp32), by dtype
  int iterations = 0;
};

/// Why `m` cannot be fitted on `a` for want of shapes: "N bf16 GEMM shape(s): ..." for the first
/// dtype `a` has a peak for that was measured at 1 or 2 shapes; empty when every one has 3 or more.
std::string too_few_gemm_shapes(const ComputeMeasurements& m, const models::Accelerator& a);

/// Fits `base`'s compute section to `m`; ModelError when a dtype has fewer than 3 GEMMs
/// (too_few_gemm_shapes) or the accelerator has no peak for a measured dtype.
KernelFit fit_kernel_costs(const ComputeMeasurements& m, const models::Accelerator& base);

/// The fragment for the hardware file (`compute: !include FILE`): the fitted section, the
/// measured table and provenance (inputs with their SHA-256, the command, the date).
std::string kernel_costs_yaml(const KernelFit& fit, const std::vector<std::pair<std::string, std::string>>& inputs,
                              const std::string& command, const std::string& date);

}  // namespace sp::calibration
