// Achieved over peak GEMM throughput against problem size, from scalepoint-gpu-bench output:
//   efficiency(F) = efficiency_max x F / (F + half_flops),   F = 2 m n k
// the curve of a device that needs a minimum of work per kernel to fill its units. Fitted by
// weighted least squares on peak / achieved = 1 / efficiency_max + (half_flops /
// efficiency_max) / F, a straight line in 1/F (weights: relative errors). A non-positive
// intercept or a negative slope (efficiency falling with size) is a failed fit with a message.
#pragma once

#include <string>
#include <vector>

namespace sp::calibration {

struct GemmPoint {
  int line = 0;
  double size = 0;   // m = n = k
  double flops = 0;  // 2 m n k
  double achieved_flops_per_s = 0;
};

struct GemmRows {
  std::string device;  // from the '# device 0: NAME, ...' line, "" when absent
  std::vector<GemmPoint> points;
};

/// The gemm rows of `dtype` in a scalepoint-gpu-bench CSV; InputError located at file:line.
GemmRows read_gemm_rows(const std::string& text, const std::string& file, const std::string& dtype);

struct GemmFit {
  bool ok = false;
  std::string message;
  double efficiency_max = 0;
  double half_flops = 0;
  std::vector<double> efficiency;      // measured, per point
  std::vector<double> relative_error;  // fitted / measured efficiency - 1
  double max_abs_relative_error = 0;
};

GemmFit fit_gemm_efficiency(const std::vector<GemmPoint>& points, double peak_flops_per_s);

}  // namespace sp::calibration
