#include "calibration/compute/gemm_efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

GemmRows read_gemm_rows(const std::string& text, const std::string& file, const std::string& dtype) {
  GemmRows out;
  // '#' lines carry the metadata; blank them so the CSV reader's line numbers stay the file's.
  std::string body, line;
  std::istringstream in(text);
  int first_data = 0, n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("# device 0: ", 0) == 0) out.device = line.substr(12, line.find(',') - 12);
    if (line.rfind('#', 0) == 0 || line.empty()) continue;
    if (first_data == 0) first_data = n;
    body += line + "\n";
  }
  if (first_data == 0) throw InputError(SourceLocation{file, 0, 0}, "", "no header: not a scalepoint-gpu-bench CSV");
  const config::CsvTable t(body, file);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    if (t.cell(r, "kind") != "gemm" || t.cell(r, "dtype") != dtype) continue;
    GemmPoint p;
    p.line = t.line(r) + first_data - 1;
    p.size = t.number(r, "size").value_or(0);
    p.flops = 2 * p.size * p.size * p.size;
    if (t.cell(r, "achieved_unit") != "TFLOP/s") t.fail(r, "achieved_unit", "expected TFLOP/s for a gemm row");
    p.achieved_flops_per_s = t.number(r, "achieved").value_or(0) * 1e12;
    if (!(p.size > 0) || !(p.achieved_flops_per_s > 0)) t.fail(r, "achieved", "size and achieved must be positive");
    out.points.push_back(p);
  }
  if (out.points.empty()) {
    throw InputError(SourceLocation{file, 0, 0}, "", "no gemm rows of dtype " + dtype, "measure with --kinds gemm");
  }
  return out;
}

GemmFit fit_gemm_efficiency(const std::vector<GemmPoint>& pts, double peak) {
  GemmFit f;
  if (pts.size() < 2) {
    f.message = "at least two sizes are needed";
    return f;
  }
  Eigen::Matrix2d a = Eigen::Matrix2d::Zero();
  Eigen::Vector2d b = Eigen::Vector2d::Zero();
  for (const GemmPoint& p : pts) {
    const double y = peak / p.achieved_flops_per_s;  // 1 / efficiency
    const Eigen::Vector2d x(1.0, 1.0 / p.flops);
    a += x * x.transpose() / (y * y);
    b += x * y / (y * y);
  }
  const Eigen::Vector2d v = a.ldlt().solve(b);
  if (!(v[0] > 0)) {
    f.message = fmt::format("the large-GEMM limit comes out at {} of peak: not a physical efficiency", 1 / v[0]);
    return f;
  }
  if (v[1] < 0) {
    f.message = "efficiency falls as GEMMs grow: the measurement is not a saturating curve";
    return f;
  }
  f.efficiency_max = 1 / v[0];
  f.half_flops = v[1] / v[0];
  for (const GemmPoint& p : pts) {
    const double measured = p.achieved_flops_per_s / peak;
    const double fitted = f.efficiency_max * p.flops / (p.flops + f.half_flops);
    f.efficiency.push_back(measured);
    f.relative_error.push_back(fitted / measured - 1);
    f.max_abs_relative_error = std::max(f.max_abs_relative_error, std::abs(fitted / measured - 1));
  }
  if (f.efficiency_max > 1.05) {
    f.message = fmt::format("the fitted ceiling is {:.2f} of the hardware file's peak: check the peak or the dtype",
                            f.efficiency_max);
    return f;
  }
  f.ok = true;
  return f;
}

}  // namespace sp::calibration
