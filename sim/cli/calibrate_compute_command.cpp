// `scalepoint calibrate compute`: the measured GEMM efficiency curve of an accelerator, written
// as a `gemm_efficiency` fragment for its hardware file (`gemm_efficiency: !include FILE`).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "calibration/compute/gemm_efficiency.hpp"
#include "models/catalog.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

int calibrate_compute_command(const CalibrateComputeOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const std::string text = config::read_text_file(o.input);
  const calibration::GemmRows rows = calibration::read_gemm_rows(text, o.input, o.dtype);
  const std::string name = o.accelerator.empty() ? rows.device : o.accelerator;
  const auto accel = catalog.find_accelerator(name);
  if (!accel) {
    throw InputError(SourceLocation{o.accelerator.empty() ? o.input : "--accelerator", 0, 0}, "",
                     "no hardware file in models/hardware names '" + name + "'",
                     "pass --accelerator with a catalog name or alias (scalepoint list accelerators)");
  }
  const auto peak = accel->peak.find(o.dtype);
  if (peak == accel->peak.end()) {
    throw InputError(SourceLocation{"--dtype", 0, 0}, "", accel->name + " has no " + o.dtype + " peak in its file");
  }
  const calibration::GemmFit fit = calibration::fit_gemm_efficiency(rows.points, peak->second.value());
  if (!fit.ok) throw ModelError(o.input + ": " + fit.message);

  std::printf("%s %s: efficiency_max %.4f, half_flops %.4g GFLOP (peak %.1f TFLOP/s), largest error %.1f %%\n",
              accel->name.c_str(), o.dtype.c_str(), fit.efficiency_max, fit.half_flops / 1e9, peak->second.value() / 1e12,
              100 * fit.max_abs_relative_error);
  std::printf("  %8s %12s %12s %10s %9s\n", "m=n=k", "GFLOP", "TFLOP/s", "of peak", "error_%");
  for (std::size_t i = 0; i < rows.points.size(); ++i) {
    const auto& p = rows.points[i];
    std::printf("  %8.0f %12.3f %12.1f %10.4f %9.1f\n", p.size, p.flops / 1e9, p.achieved_flops_per_s / 1e12,
                fit.efficiency[i], 100 * fit.relative_error[i]);
  }
  const std::string yaml = fmt::format(
      "# Written by: scalepoint calibrate compute --input {} --dtype {}\n"
      "# Include it in {}'s hardware file as: gemm_efficiency: !include <this file>\n"
      "{}: {{efficiency_max: {:.6g}, half_flops: \"{:.6g} GFLOP\"}}\n"
      "provenance: {{input: \"{}\", sha256: \"{}\", device: \"{}\", points: {}, largest_error: {:.4f}}}\n",
      o.input, o.dtype, accel->name, o.dtype, fit.efficiency_max, fit.half_flops / 1e9, o.input, sha256_hex(text),
      rows.device, rows.points.size(), fit.max_abs_relative_error);
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), yaml);
  files.commit();
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace sp::cli
