// `scalepoint predict` and `scalepoint validate`: the model on every row of a results-style CSV.
// predict carries every input column through and adds the prediction; validate compares with
// the published times (absolute percentage error, coverage of [p10, p90]) by benchmark and scale.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/predict/system_model.hpp"
#include "sim/config/csv.hpp"
#include "sim/output/table.hpp"

namespace sp::calibration {

/// The input table plus predicted_time_to_train_min, p10_min, p90_min, predicted_global_batch,
/// layout, software_efficiency_source, status (ok | error | out_of_memory) and message. Rows that cannot be modelled get
/// status error; the others are still predicted. Rows are predicted on every core (each from its
/// own random streams, so the table does not depend on the thread count); `progress(done, total)`
/// is called as rows finish, from any thread, one call at a time.
output::Table predict_table(const config::CsvTable& input, const SystemModelInputs& inputs,
                            const std::function<void(std::size_t, std::size_t)>& progress = nullptr);

struct ValidationRow {
  MlperfResult row;
  SystemPrediction prediction;
  double error = 0;  // predicted / published - 1
  bool inside = false;  // published time within [p10, p90]
  // Predicted at the row's logged convergence / published - 1 (NaN where the row gives none): the
  // error of the time per sample, without the spread of convergence between runs no model of
  // the hardware predicts (BERT on 2 RTX A5000 converged at 1.4-1.5x the RCP mean).
  double error_at_logged_convergence = std::numeric_limits<double>::quiet_NaN();
  // The naive baseline's prediction / published - 1 (add_naive_baselines; NaN: none computed).
  double baseline_error = std::numeric_limits<double>::quiet_NaN();
};

struct ErrorSummary {
  std::string group;  // "bert", "N<=8", "all", ...
  int rows = 0;
  double median_ape = 0, p90_ape = 0, max_ape = 0;  // absolute percentage errors, %
  double coverage = 0;                              // share inside [p10, p90]
  // The same at the rows' logged convergence, over the rows that give it (NaN: none does).
  double median_ape_at_logged = std::numeric_limits<double>::quiet_NaN();
  double p90_ape_at_logged = std::numeric_limits<double>::quiet_NaN();
  // What convergence alone costs: (1 + error) / (1 + error at logged convergence) - 1, the error
  // a model exact about the system would still make by predicting the RCP's samples (scaled as
  // MLPerf scales them) instead of the runs' own; a floor under the errors above.
  double median_ape_convergence_only = std::numeric_limits<double>::quiet_NaN();
  double p90_ape_convergence_only = std::numeric_limits<double>::quiet_NaN();
  // The naive baseline's absolute percentage errors over the rows that have one (naive_baseline.hpp).
  double median_ape_baseline = std::numeric_limits<double>::quiet_NaN();
  double p90_ape_baseline = std::numeric_limits<double>::quiet_NaN();
};

/// What a `skipped` line ends with for a row that has no published time: listed, not warned of.
inline constexpr std::string_view kNoPublishedTime = ": no published time";
inline bool skipped_for_want_of_a_time(const std::string& skipped) { return skipped.ends_with(kNoPublishedTime); }

struct ValidationReport {
  std::vector<ValidationRow> rows;       // every row with a published time that could be modelled
  std::vector<ErrorSummary> summaries;   // per benchmark, per scale, overall, per accelerator kind
  std::vector<std::string> skipped;      // rows without a published time or a model, and why

  /// The summary of `group` ("all", "bert", "N>64", "kind B200-SXM-180GB"); throws if absent.
  const ErrorSummary& summary(const std::string& group) const;
};

/// The summaries and the `worst` rows of largest error as text for the terminal: each error
/// beside the one at the rows' logged convergence.
std::string format_report(const ValidationReport& rep, std::size_t worst);

/// Sets error and inside from the prediction and the published time.
void compare_with_published(ValidationRow& row);

/// Predicts every row with a published time and compares.
ValidationReport validate_rows(const std::vector<MlperfResult>& rows, const SystemModelInputs& inputs);
ValidationReport summarise(std::vector<ValidationRow> rows, std::vector<std::string> skipped);

output::Table validation_table(const ValidationReport& report);
output::Table summary_table(const ValidationReport& report);
/// The model's training step against the step the row's logs time (phase training_step), for
/// every row that has one: what the totals cannot show, the step alone at each scale.
output::Table step_table(const ValidationReport& report);
/// Every phase the rows' logs time (evaluation, its one-time set-up, the scoring after the last
/// one, the training step) against the model's counterpart (SystemPrediction::phase_seconds).
output::Table phase_table(const ValidationReport& report);

}  // namespace sp::calibration
