// The power fit: it recovers a compute share from powers the model itself generated, the
// committed parameter file is what the committed data gives, and bad power tables name the row.
#include <gtest/gtest.h>

#include <filesystem>

#include "calibration/mlperf/power.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "tests/input_error_message.hpp"

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
  EXPECT_EQ(fit.at_bound, committed.compute_fraction >= 1.0);
  // Dell's 64 H100 (Llama2-70B LoRA), as scenarios/README.md "Energy" states it: the fraction at its bound of
  // 1 (the model's run waits 28 % of the time, in evaluation steps, where the measured power says
  // the GPUs are busier), the node power 2 % low, the energy per run within the 10 %,
  // and energy = power x time (to the rounding of the published figures).
  ASSERT_EQ(fit.rows.size(), 1u);
  EXPECT_LT(std::abs(fit.rows[0].power_error), 0.05);
  EXPECT_LT(std::abs(fit.rows[0].energy_error), 0.10);
  EXPECT_NEAR(1 + fit.rows[0].energy_error, (1 + fit.rows[0].power_error) * (1 + fit.rows[0].time_error), 1e-4);
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
  // Found by a hostile-input review: 1e300 W (or kW typed as W) was fitted, the fit pinned at its
  // bound. 54057 W x 5.05 min = 16,381 kJ: the Dell row is consistent; 1 W per GPU and an energy
  // ten times off are not.
  const std::string head = csv.substr(0, csv.find('\n') + 1);
  const auto error = [&](const std::string& row) {
    try {
      read_power_results(config::CsvTable(head + row, "p.csv"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("llama2_70b_lora,Dell,X,NVIDIA H100-SXM5-80GB,64,8,5.05,16381,54057\n"), "accepted");
  EXPECT_NE(error("llama2_70b_lora,Dell,X,NVIDIA H100-SXM5-80GB,64,8,5.05,16381,64\n").find("p.csv:2: avg_power_w_system: is 1 W"),
            std::string::npos);
  EXPECT_NE(error("llama2_70b_lora,Dell,X,NVIDIA H100-SXM5-80GB,64,8,5.05,163810,54057\n").find("energy_kj_per_run: "),
            std::string::npos);
  // A time in seconds written as minutes (303 min is 5.05 h, fine; 18,180 is over a week).
  EXPECT_NE(error("llama2_70b_lora,Dell,X,NVIDIA H100-SXM5-80GB,64,8,18180,16381,54057\n")
                .find("p.csv:2: time_to_train_min: 1.818e+04 min is over a week: at most 10000"),
            std::string::npos);
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
  // A published time past a week is a unit slip, refused where it is written (1e308 once reached
  // the summary as inf, 1e5 a fit as an out-of-range time with no line).
  try {
    read_mlperf_results(config::CsvTable("benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,"
                                         "global_batch_size,time_to_train_min\nbert,NVIDIA H100-SXM5-80GB,8,1,8,,1e308\n",
                                         "u.csv"));
    ADD_FAILURE() << "1e308 min was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("u.csv:2: time_to_train_min: 1e+308 min is over a week"), std::string::npos) << e.what();
  }
  // And one under 0.6 s (1e-300 min once gave an E' of 9e301 in analyze).
  try {
    read_mlperf_results(config::CsvTable("benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,"
                                         "global_batch_size,time_to_train_min\nbert,NVIDIA H100-SXM5-80GB,8,1,8,,1e-300\n",
                                         "u.csv"));
    ADD_FAILURE() << "1e-300 min was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("u.csv:2: time_to_train_min: 1e-300 min is under 0.6 s: at least 0.01"), std::string::npos)
        << e.what();
  }
}

TEST(Results, AClockBoostIsWhatTheRowSaysElseItsWorkloadsRecipe) {
  // Column clock_boost: the configuration's VBOOST_VALUE. Empty: Llama2-70B LoRA's reference
  // configurations boost one node (clock_boost_one_node: 1) and no more; BERT's boost none.
  const auto rows = read_mlperf_results(config::CsvTable(
      "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size,clock_boost\n"
      "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,1,8,8,\n"
      "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,8,64,8,\n"
      "llama2_70b_lora,NVIDIA B200-SXM-180GB,8,1,8,8,0\n"
      "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,4,32,8,1\n"
      "bert,NVIDIA H100-SXM5-80GB,8,1,8,,\n",
      "b.csv"));
  const models::Workload llama = *catalog().find_workload("llama2_70b_lora");
  const models::Workload bert = *catalog().find_workload("bert");
  EXPECT_TRUE(rows[0].boosted(llama));
  EXPECT_FALSE(rows[1].boosted(llama));
  EXPECT_FALSE(rows[2].boosted(llama));
  EXPECT_TRUE(rows[3].boosted(llama));
  EXPECT_FALSE(rows[4].boosted(bert));
  const std::string negative = input_error_message([] {
    read_mlperf_results(config::CsvTable("benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,"
                                         "global_batch_size,clock_boost\nbert,NVIDIA H100-SXM5-80GB,8,1,8,,-1\n",
                                         "b.csv"));
  });
  EXPECT_NE(negative.find("b.csv:2: clock_boost: needs a boost setting from 0 (none) to 100"), std::string::npos) << negative;
}

TEST(Results, WhatTheScoredRunsConvergedAt) {
  // The submission's mean times MLPerf's RCP scaling factor: Oracle's 512-GPU Llama runs needed
  // 8,947 samples (no scaling); a BERT system that converged in 2,342,372 samples against the
  // reference's 2,426,226 is scored as if at the reference (factor 1.035799); RetinaNet counts epochs.
  const std::string head =
      "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size,"
      "subm_mean_to_converge,rcp_scaling_factor,converge_unit\n";
  const auto rows = read_mlperf_results(config::CsvTable(
      head + "llama2_70b_lora,H100,8,64,512,64,8947,1.0,samples (eval_accuracy.metadata.samples_count)\n"
             "bert,H100,4,1,4,576,2342372.375,1.035799,training samples (eval_accuracy.metadata.epoch_num)\n"
             "retinanet,H100,8,1,8,256,4.0,1.0,epochs (eval_accuracy.metadata.epoch_num)\n"
             "bert,H100,8,1,8,768,,,\n",
      "t.csv"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_DOUBLE_EQ(*rows[0].converged, 8947);
  EXPECT_FALSE(rows[0].converged_in_epochs);
  EXPECT_NEAR(*rows[1].converged, 2342372.375 * 1.035799, 1e-6);
  EXPECT_TRUE(rows[2].converged_in_epochs);
  EXPECT_FALSE(rows[3].converged.has_value());
  // MLPerf only scales a time up: a factor below 1 is a broken table.
  try {
    read_mlperf_results(config::CsvTable(head + "bert,H100,8,1,8,768,2400000,0.9,samples\n", "t.csv"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rcp_scaling_factor"), std::string::npos) << e.what();
  }
}

}  // namespace sp::calibration
