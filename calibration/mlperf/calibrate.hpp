// models::Calibration of the model against published MLPerf times: nonlinear least squares on log time
// (Levenberg-Marquardt), with few parameters, each physical and bounded by its transform:
//  - per workload, the efficiency curve against the per-accelerator micro-batch share:
//      efficiency_max in (0, 1) (logit), half_efficiency_batch > 0 (log): what a kernel mix
//      reaches on a large batch, and the batch at which it reaches half of that;
//  - per accelerator kind other than the reference H100, efficiency_scale > 0 (log): how well
//      the training software of the submissions runs on it (tinygrad on consumer GPUs, a
//      preview software stack on B200, JAX/XLA on TPUs).
// Everything else (peaks, bandwidths, collectives, convergence, evaluation rules) comes from
// hardware, workload and platform data, not from the fit. A weak prior (log-normal, sd 2 in the
// transformed space) keeps parameters the data cannot see at their file values. Leave-one-
// system-out refits without all rows of one system (all its benchmarks) and predicts them; the
// spread of those errors per workload becomes the model-error term of the prediction intervals.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "models/calibration.hpp"
#include "calibration/predict/predict_table.hpp"

namespace sp::calibration {

struct FitResult {
  models::Calibration calibration;
  std::vector<std::string> parameter_names;
  Eigen::VectorXd parameters;  // in the transformed space
  int iterations = 0;
  bool converged = false;
  ValidationReport in_sample;
  ValidationReport leave_one_out;  // empty unless requested
  std::size_t rows_used = 0;
};

struct CalibrateOptions {
  bool leave_one_out = false;  // also refit without each system and predict it
  int samples = 0;             // Monte Carlo replicates for the reports' [p10, p90] (0: none)
  std::uint64_t seed = 1;
};

/// Fits on every row with a published time that the model can run.
FitResult calibrate_mlperf(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                           const PlatformCatalog& platforms, const CalibrateOptions& options);

/// The parameter file: provenance (data file and its SHA-256, date, command), the parameters,
/// the error summaries and the per-row residuals. `fitted_on` is the only line that changes when
/// the same data is fitted again.
std::string calibration_yaml(const FitResult& fit, const std::string& data_file, const std::string& data_sha256,
                             const std::string& command, const std::string& fitted_on);

}  // namespace sp::calibration
