// GEMM efficiency curves: recovery from a synthetic scalepoint-gpu-bench file, failure on a
// curve that falls, the fragment included in a hardware file, and the ceiling it sets.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "calibration/compute/gemm_efficiency.hpp"
#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"

namespace sp::calibration {

namespace {
const std::string kSynthetic = std::string(SP_TEST_DATA) + "/gpu_bench_synthetic.csv";
}

TEST(GemmEfficiency, RecoversTheCurveThatMadeTheData) {
  // tests/data/gpu_bench_synthetic.csv: bf16 at 0.8 F / (F + 2 GFLOP) with +-1 % noise, fp8 at
  // exactly 0.7 F / (F + 4 GFLOP), on H100 peaks (989.4 and 1978.9 TFLOP/s).
  const std::string text = config::read_text_file(kSynthetic);
  const GemmRows bf16 = read_gemm_rows(text, kSynthetic, "bf16");
  EXPECT_EQ(bf16.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(bf16.points.size(), 7u);  // m = 256 .. 16384
  EXPECT_EQ(bf16.points[0].line, 4);
  EXPECT_DOUBLE_EQ(bf16.points[0].flops, 2.0 * 256 * 256 * 256);
  GemmFit f = fit_gemm_efficiency(bf16.points, 989.4e12);
  ASSERT_TRUE(f.ok) << f.message;
  EXPECT_NEAR(f.efficiency_max, 0.8, 0.008);
  EXPECT_NEAR(f.half_flops / 2e9, 1, 0.02);
  EXPECT_LT(f.max_abs_relative_error, 0.015);
  f = fit_gemm_efficiency(read_gemm_rows(text, kSynthetic, "fp8").points, 1978.9e12);
  ASSERT_TRUE(f.ok) << f.message;
  EXPECT_NEAR(f.efficiency_max, 0.7, 1e-4);
  EXPECT_NEAR(f.half_flops / 4e9, 1, 1e-3);
}

TEST(GemmEfficiency, AFallingCurveOrNoRowsIsAnError) {
  std::vector<GemmPoint> falling;
  for (double m : {1024.0, 2048.0, 4096.0}) falling.push_back({0, m, 2 * m * m * m, 1e15 / m});
  const GemmFit f = fit_gemm_efficiency(falling, 1e15);
  EXPECT_FALSE(f.ok);
  EXPECT_NE(f.message.find("falls"), std::string::npos) << f.message;
  EXPECT_THROW(read_gemm_rows(config::read_text_file(kSynthetic), kSynthetic, "fp16"), InputError);
}

TEST(GemmEfficiency, TheFragmentSetsTheAcceleratorsCeiling) {
  // A hardware file with `gemm_efficiency: !include gemm.yaml` (what calibrate compute writes).
  const auto dir = std::filesystem::temp_directory_path() / "sp_gemm_fragment";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "gemm.yaml") << "bf16: {efficiency_max: 0.5, half_flops: \"2 GFLOP\"}\n"
                                      "provenance: {input: \"x.csv\"}\n";
  std::ifstream h100(std::string(SP_SOURCE_DIR) + "/models/hardware/h100_sxm5_80gb.yaml");
  std::stringstream text;
  text << h100.rdbuf() << "gemm_efficiency: !include gemm.yaml\n";
  std::ofstream(dir / "h100.yaml") << text.str();
  const models::Accelerator a = models::parse_accelerator(config::load_file((dir / "h100.yaml").string()));
  ASSERT_EQ(a.gemm_efficiency.count("bf16"), 1u);
  EXPECT_DOUBLE_EQ(a.gemm_efficiency.at("bf16").efficiency_max, 0.5);
  EXPECT_DOUBLE_EQ(a.gemm_efficiency.at("bf16").half_flops.value(), 2e9);
  // A bf16 workload at 0.53 of peak is held to the measured 0.5; fp8 falls back to bf16's
  // measurement only where the accelerator has no fp8 peak (the H100 has one: no ceiling).
  models::Workload w;
  w.precision = "bf16";
  w.efficiency_max = 0.53;
  EXPECT_DOUBLE_EQ(models::compute_model_for(w, a).efficiency_max, 0.5);
  w.precision = "fp8";
  EXPECT_DOUBLE_EQ(models::compute_model_for(w, a).efficiency_max, 0.53);
}

}  // namespace sp::calibration
