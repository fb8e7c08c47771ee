// The power model's one fitted constant, from MLPerf Power results (calibration/data/mlperf/
// power_v4.1.csv): the share of the idle-to-TDP range training kernels draw (models/energy).
// Each row's system is modelled as `predict` models it; its measured average node power (the
// official basis: energy score / time to train, DC-equivalent, switches not counted) is linear in
// that share given the model's busy share of the run, so the fit is a closed-form least squares in
// relative error. Host power and the waiting share stay at their documented estimates: one row
// cannot tell them apart.
#pragma once

#include <string>
#include <vector>

#include "calibration/predict/system_model.hpp"
#include "models/energy/energy.hpp"
#include "sim/config/csv.hpp"

namespace sp::calibration {

struct PowerResult {
  MlperfResult system;       // as predict models it (global batch: the v4.1-typical one at N)
  double power_w = 0;        // average node power over the run, official basis
  double energy_kj = 0;      // official energy score per run
};

/// Rows of a power table (benchmark, submitter, system_folder, accelerator, accelerators_total,
/// nodes, time_to_train_min, energy_kj_per_run, avg_power_w_system, interconnect_power_w_counted).
std::vector<PowerResult> read_power_results(const config::CsvTable& table);

struct PowerFitRow {
  PowerResult row;
  SystemPrediction prediction;
  double busy_share = 0;         // of the predicted run
  double predicted_power_w = 0;  // nodes, after the fit
  double predicted_energy_kj = 0;
  double power_error = 0, energy_error = 0, time_error = 0;  // predicted / published - 1
};

struct PowerFit {
  models::PowerCalibration calibration;
  std::vector<PowerFitRow> rows;
  bool at_bound = false;  // the share hit its physical bound: a mechanism is missing
};

PowerFit fit_power(const std::vector<PowerResult>& rows, const SystemModelInputs& inputs,
                   const models::PowerCalibration& start);

/// calibration/params/power_v4.1.yaml: the constants, their sources and the fit's residuals.
std::string power_yaml(const PowerFit& fit, const std::string& data, const std::string& data_sha256,
                       const std::string& command);

}  // namespace sp::calibration
