// Calibration: Levenberg-Marquardt on closed-form problems, the committed parameter file
// reproduced from the committed data, and the system model's own rules (batch interpolation,
// node resizing, rows it cannot model) by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "calibration/fit/levenberg_marquardt.hpp"
#include "calibration/mlperf/calibrate.hpp"
#include "sim/config/loader.hpp"

namespace sp::calibration {

namespace {
const std::string kData = std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv";

std::vector<MlperfResult> v41() { return read_mlperf_results(config::CsvTable::read(kData)); }

const models::Catalog& catalog() {
  static const models::Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return c;
}
}  // namespace

TEST(LevenbergMarquardt, RecoversAnExponentialDecayExactly) {
  // y = 3 exp(-0.7 t) at t = 0..9, no noise: the minimum is (3, 0.7) with zero cost.
  Eigen::VectorXd t(10), y(10);
  for (int i = 0; i < 10; ++i) {
    t[i] = i;
    y[i] = 3 * std::exp(-0.7 * i);
  }
  const auto f = [&](const Eigen::VectorXd& x) -> Eigen::VectorXd {
    return (x[0] * (-x[1] * t.array()).exp() - y.array()).matrix();
  };
  LeastSquaresProblem p{f, [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r) {
                          return numeric_jacobian(f, x, r, 1e-7);
                        }};
  const LeastSquaresResult r = levenberg_marquardt(p, Eigen::Vector2d(1.0, 0.1));
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.x[0], 3.0, 1e-6);
  EXPECT_NEAR(r.x[1], 0.7, 1e-6);
  EXPECT_LT(r.cost, 1e-12);
}

TEST(LevenbergMarquardt, SolvesRosenbrockFromTheClassicStart) {
  // r = (10 (x2 - x1^2), 1 - x1): the minimum (1, 1) lies at the end of a curved valley that
  // defeats plain Gauss-Newton from (-1.2, 1); the analytic Jacobian is given.
  LeastSquaresProblem p{[](const Eigen::VectorXd& x) {
                          return Eigen::Vector2d(10 * (x[1] - x[0] * x[0]), 1 - x[0]).eval();
                        },
                        [](const Eigen::VectorXd& x, const Eigen::VectorXd&) {
                          Eigen::MatrixXd j(2, 2);
                          j << -20 * x[0], 10, -1, 0;
                          return j;
                        }};
  const LeastSquaresResult r = levenberg_marquardt(p, Eigen::Vector2d(-1.2, 1.0), 200);
  EXPECT_NEAR(r.x[0], 1.0, 1e-6);
  EXPECT_NEAR(r.x[1], 1.0, 1e-6);
}

TEST(Calibrate, TheCommittedParametersComeFromTheCommittedData) {
  // Refit (in-sample only; leave-one-out sets model_error and takes longer) and compare with
  // calibration/params/mlperf_v4.1.yaml, which prints 6 significant digits. A model change that
  // moves the fit without regenerating the file fails here.
  const PlatformCatalog platforms(catalog());
  const FitResult fit = calibrate_mlperf(v41(), catalog(), platforms, CalibrateOptions{});
  EXPECT_TRUE(fit.converged);
  EXPECT_EQ(fit.rows_used, 109u);
  const models::Calibration committed = models::parse_calibration(
      config::load_file(std::string(SP_SOURCE_DIR) + "/calibration/params/mlperf_v4.1.yaml"));
  ASSERT_EQ(fit.calibration.workloads.size(), committed.workloads.size());
  for (const auto& [name, c] : committed.workloads) {
    const models::WorkloadCurve& got = fit.calibration.workloads.at(name);
    EXPECT_NEAR(got.software_efficiency / c.software_efficiency, 1, 1e-5) << name;
    // Physical range: fused MLPerf code runs its kernels between half as fast and three times as
    // fast as plain PyTorch runs the ops the workload file describes.
    EXPECT_GT(c.software_efficiency, 0.5) << name;
    EXPECT_LT(c.software_efficiency, 3.0) << name;
    EXPECT_GT(c.model_error, 0.0) << name;
    EXPECT_LT(c.model_error, 0.3) << name;
  }
  ASSERT_EQ(fit.calibration.accelerator_scale.size(), committed.accelerator_scale.size());
  for (const auto& [name, s] : committed.accelerator_scale) {
    EXPECT_NEAR(fit.calibration.accelerator_scale.at(name) / s, 1, 1e-5) << name;
    EXPECT_GT(s, 0.1) << name;  // software reaching a tenth to twice what it reaches on the H100
    EXPECT_LT(s, 2.0) << name;
  }
  // In-sample accuracy as README "Calibration" states it (the kernel-level compute model: 12
  // parameters, no fitted batch curve; median 6.1 %, p90 17.3 %).
  const ErrorSummary& all = fit.in_sample.summaries.back();
  EXPECT_EQ(all.group, "all");
  EXPECT_LT(all.median_ape, 7.0);
  EXPECT_LT(all.p90_ape, 19.0);
}

TEST(Calibrate, RecoversKnownParametersFromTimesTheModelGenerated) {
  // Replace every published time by the model's own prediction under known parameters, then
  // fit from the files' values: the fit must find the known parameters again (up to the weak
  // prior's pull and the layouts, which are chosen once with the files' values).
  models::Calibration truth;
  truth.workloads["bert"] = {1.3, 0};
  truth.workloads["llama2_70b_lora"] = {1.1, 0};
  truth.workloads["retinanet"] = {1.8, 0};
  truth.workloads["stable_diffusion"] = {1.6, 0};
  for (const char* a : {"A100-PCIe-80GB", "B200-SXM-180GB", "H100-NVL-94GB", "H200-SXM5-141GB", "RTX-4090", "RTX-A5000",
                        "Radeon-RX-7900-XTX", "TPU-v5p"}) {
    truth.accelerator_scale[a] = 0.7;
  }
  truth.accelerator_scale["H200-SXM5-141GB"] = 1.2;
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs generate{catalog(), platforms, truth, 0, 1};
  std::vector<MlperfResult> rows = v41();
  for (MlperfResult& r : rows) {
    if (!r.time_to_train_min) continue;
    const SystemPrediction p = predict_system(r, generate);
    if (p.status == "ok") r.time_to_train_min = to_seconds(p.estimate.time_to_train) / 60;
  }
  const FitResult fit = calibrate_mlperf(rows, catalog(), platforms, CalibrateOptions{});
  for (const auto& [name, c] : truth.workloads) {
    EXPECT_NEAR(fit.calibration.workloads.at(name).software_efficiency / c.software_efficiency, 1, 0.02) << name;
  }
  for (const auto& [name, s] : truth.accelerator_scale) {
    EXPECT_NEAR(fit.calibration.accelerator_scale.at(name) / s, 1, 0.02) << name;
  }
  EXPECT_LT(fit.in_sample.summaries.back().max_ape, 2.0);
}

TEST(Calibrate, ModelErrorIsTheLargerOfTheWorkloadsAndItsScaleRanges) {
  const models::Calibration c = models::parse_calibration(config::load_string(
      "workloads: {bert: {software_efficiency: 1.5, model_error: 0.05}}\n"
      "model_error_by_scale: {\"N<=8\": 0.03, \"N=9-64\": 0.09, \"N>64\": 0.18}\n",
      "params.yaml"));
  models::Workload w = *catalog().find_workload("bert");
  c.apply(w);
  EXPECT_DOUBLE_EQ(w.model_error_at(4), 0.05);     // the workload's spread dominates on one node
  EXPECT_DOUBLE_EQ(w.model_error_at(8), 0.05);
  EXPECT_DOUBLE_EQ(w.model_error_at(9), 0.09);     // 9-64: the range's
  EXPECT_DOUBLE_EQ(w.model_error_at(64), 0.09);
  EXPECT_DOUBLE_EQ(w.model_error_at(3472), 0.18);  // > 64
}

TEST(SystemModel, TypicalBatchInterpolatesGeometrically) {
  // BERT's table has 8 -> 768 and 64 -> 4608. At 16: f = log(16/8) / log(64/8) = 1/3, so
  // 768 x (4608/768)^(1/3) = 768 x 6^(1/3) = 1395.5 samples, 87.2 per rank at DP16 -> 87 x 16.
  const models::Workload bert = *catalog().find_workload("bert");
  EXPECT_EQ(typical_global_batch(bert, 16, 16), 87 * 16);
  EXPECT_EQ(typical_global_batch(bert, 8, 8), 768);           // a table point
  EXPECT_EQ(typical_global_batch(bert, 1, 1), 448);           // below the table: its first point
  // Above the table: its last point, 13888 / 8192 = 1.70 per rank, rounded to whole samples: 2.
  EXPECT_EQ(typical_global_batch(bert, 8192, 8192), 2 * 8192);
}

TEST(SystemModel, ResizedNodeKeepsItsNicsPerAccelerator) {
  const models::Platform dgx = models::parse_platform(
      config::load_file(std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml"), catalog());
  const models::Platform four = resize_node(dgx, 4);
  EXPECT_EQ(four.topology.accelerators_per_node, 4);
  EXPECT_EQ(four.topology.tiers[0].size, 4);  // the NVLink switch domain is the node
  EXPECT_DOUBLE_EQ(four.topology.tiers.back().bandwidth.value(), dgx.topology.tiers.back().bandwidth.value());
}

TEST(SystemModel, RowsItCannotModelSayWhy) {
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row;
  row.benchmark = "bert";
  row.accelerator = "NVIDIA Imaginary X1";
  row.accelerators = 8;
  row.accelerators_per_node = 8;
  SystemPrediction p = predict_system(row, in);
  EXPECT_EQ(p.status, "error");
  EXPECT_EQ(p.message, "unknown accelerator 'NVIDIA Imaginary X1'");
  row.accelerator = "NVIDIA H100-SXM5-80GB";
  row.benchmark = "gpt3";
  p = predict_system(row, in);
  EXPECT_EQ(p.message, "unknown benchmark 'gpt3'");
  row.benchmark = "bert";
  row.accelerators = 12;  // one and a half nodes
  p = predict_system(row, in);
  EXPECT_EQ(p.message, "12 accelerators are not whole nodes of 8");
  row.accelerators = 8;
  p = predict_system(row, in);
  EXPECT_EQ(p.status, "ok");
  EXPECT_EQ(p.global_batch, 768);
}

}  // namespace sp::calibration
