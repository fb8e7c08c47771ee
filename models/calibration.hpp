// The calibrated parameters (calibration/params/mlperf_v4.1.yaml, written by `scalepoint
// calibrate mlperf`) and how they change the model: per workload, how fast its MLPerf
// implementation runs relative to its ops as described (software_efficiency, compute_model.hpp);
// per accelerator kind, how well the submissions' software runs on it relative to NVIDIA's on the
// H100 (efficiency_scale). Few, physical, bounded: see calibrate.hpp.
#pragma once

#include <map>
#include <string>

#include "models/hardware/accelerator.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

struct WorkloadCurve {
  double software_efficiency = 1;
  double model_error = 0;  // log-space spread of the model's held-out errors (prediction intervals)
};

struct Calibration {
  std::map<std::string, WorkloadCurve> workloads;       // by workload name
  std::map<std::string, double> accelerator_scale;      // by accelerator name
  std::map<int, double> scale_error;  // upper bound of N -> model error there (Workload::model_error_by_scale)

  void apply(Workload& w) const;
  void apply(Accelerator& a) const;
};

/// The scale ranges of the error summaries: "N<=8", "N=9-64", "N>64", by upper bound of N.
const std::map<int, std::string>& scale_ranges();

/// Reads the `workloads`, `accelerators` and `model_error_by_scale` sections of a parameter file.
Calibration parse_calibration(const config::ConfigNode& node);
/// The default: calibration/params/mlperf_v4.1.yaml under the data root, if it exists.
Calibration default_calibration();

}  // namespace sp::models
