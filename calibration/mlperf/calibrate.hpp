// models::Calibration of the model against published MLPerf times (FitProblem says which
// parameters and why so few), and its honest validation: refit without a group of rows (one
// system, or every row of one accelerator kind) and predict them, with nothing derived from
// them. The prediction intervals of a held-out group take their model error from cross-validation
// inside the other rows (5 folds of their groups), so the coverage reported is out of fold too.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "calibration/predict/predict_table.hpp"
#include "models/calibration.hpp"

namespace sp::calibration {

/// What a held-out group is.
enum class HoldOut { system, kind };

struct FitResult {
  models::Calibration calibration;
  std::vector<std::string> parameter_names;
  Eigen::VectorXd parameters, sds;  // in the transformed space
  int iterations = 0;
  bool converged = false;
  ValidationReport in_sample;
  ValidationReport leave_system_out, leave_kind_out;  // empty unless requested
  std::size_t rows_used = 0;
};

struct CalibrateOptions {
  bool leave_system_out = false;  // refit without each system, predict it; sets the model error
  bool leave_kind_out = false;    // refit without each accelerator kind, predict it
  int samples = 0;                // Monte Carlo replicates for the reports' [p10, p90] (0: none)
  std::uint64_t seed = 1;
  /// Called before each held-out refit with "leaving out <group> (k of n)".
  std::function<void(const std::string&)> progress;
};

/// Fits on every row with a published time that the model can run.
FitResult calibrate_mlperf(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                           const PlatformCatalog& platforms, const CalibrateOptions& options);

/// Refits without the rows of one group ("submitter / system name", or a kind such as
/// "B200-SXM-180GB") and predicts them as `scalepoint predict` would.
ValidationReport predict_left_out(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                                  const PlatformCatalog& platforms, HoldOut by, const std::string& group,
                                  int samples, std::uint64_t seed = 1);

/// The parameter file: provenance (data file and its SHA-256, date, command), the parameters,
/// the error summaries and the per-row residuals. `fitted_on` is the only line that changes when
/// the same data is fitted again.
/// `phases_file` (may be empty): the phase observations the fit also used.
std::string calibration_yaml(const FitResult& fit, const std::string& data_file, const std::string& data_sha256,
                             const std::string& command, const std::string& fitted_on,
                             const std::string& phases_file = {}, const std::string& phases_sha256 = {});

}  // namespace sp::calibration
