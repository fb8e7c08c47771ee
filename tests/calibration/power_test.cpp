// The power fit: it recovers a compute share from powers the model itself generated, the
// committed parameter file is what the committed data gives, and bad power tables name the row.
#include <gtest/gtest.h>

#include <filesystem>

#include "calibration/mlperf/power.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

namespace {
const std::string kPower = std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/power_v4.1.csv";

const models::Catalog& catalog() {
  static const models::Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return c;
}

std::vector<PowerResult> v41_power() { return read_power_results(config::CsvTable::read(kPower)); }
}  // namespace

TEST(PowerFit, RecoversTheComputeShareThatMadeThePowers) {
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs inputs{catalog(), platforms, models::default_calibration(), 0, 1};
  std::vector<PowerResult> rows = v41_power();
  // Replace the measured power by the model's own at a known share of 0.62: the fit must give it back.
  models::PowerCalibration truth;
  truth.compute_fraction = 0.62;
  const SystemPrediction p = predict_system(rows[0].system, inputs);
  ASSERT_EQ(p.status, "ok") << p.message;
  const auto e = models::estimate_energy(p.estimate, p.platform, truth);
  rows[0].power_w = (e.nodes() / e.run).value();
  const PowerFit fit = fit_power(rows, inputs, models::PowerCalibration{});
  EXPECT_NEAR(fit.calibration.compute_fraction, 0.62, 1e-9);
  EXPECT_FALSE(fit.at_bound);
  EXPECT_NEAR(fit.rows[0].power_error, 0, 1e-9);
}

TEST(PowerFit, TheCommittedParametersComeFromTheCommittedData) {
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs inputs{catalog(), platforms, models::default_calibration(), 0, 1};
  const PowerFit fit = fit_power(v41_power(), inputs, models::PowerCalibration{});
  const models::PowerCalibration committed = models::parse_power_calibration(
      config::load_file(std::string(SP_SOURCE_DIR) + "/calibration/params/power_v4.1.yaml"));
  EXPECT_NEAR(fit.calibration.compute_fraction, committed.compute_fraction, 5e-5);
  EXPECT_FALSE(fit.at_bound);
  // Dell's 64 H100 (Llama2-70B LoRA): the model's average node power is fitted exactly; its energy
  // error is the time model's, as README "Energy" states it.
  ASSERT_EQ(fit.rows.size(), 1u);
  EXPECT_NEAR(fit.rows[0].power_error, 0, 1e-9);
  // (to the rounding of the published figures)
  EXPECT_NEAR(fit.rows[0].energy_error, fit.rows[0].time_error, 1e-4);
  EXPECT_GT(fit.rows[0].busy_share, 0.5);
}

TEST(PowerFit, BadRowsNameTheFileLineAndColumn) {
  const std::string csv =
      "benchmark,submitter,system_folder,accelerator,accelerators_total,nodes,time_to_train_min,"
      "energy_kj_per_run,avg_power_w_system\n"
      "llama2_70b_lora,Dell,X,NVIDIA H100-SXM5-80GB,64,8,5.05,-1,54057\n";
  try {
    read_power_results(config::CsvTable(csv, "power.csv"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("power.csv:2"), std::string::npos) << what;
    EXPECT_NE(what.find("energy_kj_per_run"), std::string::npos) << what;
  }
  EXPECT_THROW(read_power_results(config::CsvTable(csv.substr(0, csv.find('\n') + 1), "empty.csv")), InputError);
}

}  // namespace sp::calibration

namespace sp::calibration {

TEST(Results, ContradictoryCountsAreAWarningNamingTheRow) {
  const std::string csv =
      "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n"
      "bert,NVIDIA H100-SXM5-80GB,8,1,8,\n"
      "bert,NVIDIA H100-SXM5-80GB,8,2,8,\n";
  WarningCapture w;
  const auto rows = read_mlperf_results(config::CsvTable(csv, "t.csv"));
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(w.messages()[0], "t.csv:3: accelerators_total: 8 is not accelerators_per_node x nodes (8 x 2); the model uses 8");
  EXPECT_THROW(require_times(rows, "t.csv"), InputError);
}

}  // namespace sp::calibration
