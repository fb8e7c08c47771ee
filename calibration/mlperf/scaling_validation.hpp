// `scalepoint validate --scaling`: the question users bring. A multi-node system's time to train
// predicted from a measured time of fewer nodes of the same accelerator kind, as
//   T(N) = T(anchor, published) x model(N) / model(anchor)
// so that what the two systems share (software level, the kind's efficiency) cancels and only
// the scaling between them is judged; the model calibrated without the predicted system (every row
// of it, in every benchmark, with its logged phases). The anchor row and its phases stay in the
// fold's fit: they are the user's measurement, which the prediction is allowed to know. Beside
// it, on the same rows and folds, the two-parameter throughput curve (throughput_curve.hpp) and
// perfect scaling with the RCPs' convergence: what the simulator has to beat.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "calibration/predict/results.hpp"
#include "calibration/predict/system_model.hpp"

namespace sp::calibration {

/// The software releases a framework column names: its year.month tokens ("NGC Pytorch 24.09,
/// NVIDIA Nemo 24.09" -> {"24.09"}; "PyTorch NVIDIA Release 22.09 or 22.04" -> {"22.04", "22.09"}),
/// sorted, without repeats; none where it states no release ("maxdiffusion", "NVIDIA PyTorch/DGL").
/// Any YY.MM counts: an "Ubuntu 22.04" in the column would read as a release (v4.1's columns name
/// containers only).
std::vector<std::string> software_releases(const std::string& framework);

/// Whether a row and its anchor ran the same software: "same release" where their releases share
/// one (a column naming two containers, one a benchmark ran and one it did not, matches either), "another release" where both state releases and share none, "release not stated" where
/// either states none. The anchoring cancels the software level only where it is the same; a
/// release of another half-year can be faster or slower by itself (NVIDIA's containers change
/// kernels and fusions from one to the next), which no scaling mechanism can see.
std::string software_match(const MlperfResult& row, const MlperfResult& anchor);

struct ScalingRow {
  MlperfResult row;     // the multi-node row predicted
  MlperfResult anchor;  // the row whose published time it starts from
  std::string anchor_rule;  // how the anchor was chosen (choose_anchor)
  std::string software;     // software_match(row, anchor)
  std::string kind;
  std::string layout, anchor_layout;  // what the model ran at each
  double model_min = 0, model_anchor_min = 0;  // the model's expected scores, fold calibration
  double predicted_min = 0;                    // anchor's published x model ratio
  double curve_min = 0;                        // the throughput curve, same anchor and fold
  double perfect_min = 0;                      // anchor x (S(G)/S(G_a)) x (N_a/N)
  // The model's scores at the samples each row's scored runs converged at (MlperfResult::
  // converged; none where a row does not say): the same ratio without either row's convergence
  // luck, so that what a mechanism can fix (the time per sample) is told apart from what none can.
  std::optional<double> model_logged_min, model_anchor_logged_min;
  // The model's score of the row at the software level that makes its step at the anchor the
  // anchor's logged step (its logs' training_step phase; none where they do not give it): the
  // anchor a planner measures in minutes (run --anchor N=TIME/step) in place of a training run.
  std::optional<double> step_anchored_min;
  // Not a prediction but the spread between systems of one configuration: the published time of
  // other submitters' systems at the same benchmark, kind, accelerator count and global batch
  // (their median; peer_minutes), none where no other submitter ran that configuration.
  std::optional<double> peer_min;
  double error() const { return predicted_min / *row.time_to_train_min - 1; }
  /// The error anchored on the anchor's logged step; NaN where there is none.
  double step_error() const {
    return step_anchored_min ? *step_anchored_min / *row.time_to_train_min - 1 : std::numeric_limits<double>::quiet_NaN();
  }
  /// peer / published - 1; NaN where no other submitter ran the configuration.
  double peer_error() const {
    return peer_min ? *peer_min / *row.time_to_train_min - 1 : std::numeric_limits<double>::quiet_NaN();
  }
  double curve_error() const { return curve_min / *row.time_to_train_min - 1; }
  double perfect_error() const { return perfect_min / *row.time_to_train_min - 1; }
  /// The error at both rows' logged convergence; NaN where either row does not give it.
  double error_at_logged_convergence() const {
    if (!model_logged_min || !model_anchor_logged_min) return std::numeric_limits<double>::quiet_NaN();
    return *anchor.time_to_train_min * *model_logged_min / *model_anchor_logged_min / *row.time_to_train_min - 1;
  }
  /// What convergence alone costs: (1 + error) / (1 + error at logged convergence) - 1, the error a
  /// model exact about the time per sample of both systems would still make by predicting the RCP's
  /// samples rather than the runs'; NaN where the logged one is.
  double convergence_error() const { return (1 + error()) / (1 + error_at_logged_convergence()) - 1; }
  /// Speedups over the anchor: published, and as the model predicts.
  double published_speedup() const { return *anchor.time_to_train_min / *row.time_to_train_min; }
  double predicted_speedup() const { return model_anchor_min / model_min; }
};

struct ScalingSummary {
  std::string group;  // a benchmark, a scale range ("N=9-64", "N>64"), the anchor's kind or "all"
  int rows = 0;
  double median = 0, p90 = 0, max = 0;              // |error| of the model, %
  double curve_median = 0, curve_p90 = 0;           // the throughput curve, %
  double perfect_median = 0, perfect_p90 = 0;       // perfect scaling + RCP, %
  int logged_rows = 0;                              // rows where both give their convergence
  double logged_median = 0, logged_p90 = 0;         // the model at the logged convergence, % (NaN: no rows)
  double convergence_median = 0, convergence_p90 = 0;  // convergence alone (ScalingRow::convergence_error), %
  int step_rows = 0;                                // rows whose anchor's logs give its step
  double step_median = 0, step_p90 = 0;             // anchored on that step, % (NaN: no rows)
  double step_model_median = 0, step_model_p90 = 0;  // anchored on the time to train, those rows, %
  int peer_rows = 0;                                // rows another submitter ran at the same configuration
  double peer_median = 0, peer_p90 = 0;             // |peer / published - 1|, % (NaN: no rows)
  double peer_model_median = 0, peer_model_p90 = 0;  // scalepoint on the same rows, %
};

/// The spread between submitters at one configuration: over `rows` that another submitter ran at
/// the same benchmark, kind, accelerator count and global batch, |peer_minutes / published - 1|.
struct PeerSpread {
  int rows = 0;
  double median = 0, p90 = 0;  // %, NaN without rows
};

struct ScalingReport {
  std::vector<ScalingRow> rows;
  std::vector<ScalingSummary> summaries;
  std::vector<std::string> skipped;  // multi-node rows without an anchor or a model, and why
  PeerSpread one_node_peers;         // the same spread over the one-node rows, for reference

  const ScalingSummary& summary(const std::string& group) const;
};

/// The anchor of multi-node row `target` among `rows` (index into rows), or -1: a one-node row
/// of the same benchmark and catalog kind with a published time, preferring the same submitter
/// and node size, then the same submitter, then the same node size, then any; several equally
/// good: the median by published time (the lower one of two, then the earlier line). Without a
/// one-node row, the same submitter's smallest row of that kind on fewer nodes. `rule` says which.
/// `kinds` gives each row's catalog kind (empty where unknown).
int choose_anchor(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds, std::size_t target,
                  std::string& rule);

/// The median published time (the lower middle one, then the earlier line) of the rows of other
/// submitters than rows[target]'s with its benchmark, catalog kind, accelerator count and global
/// batch; none where there is no such row or the target gives no batch or kind. Two systems of one
/// configuration differ by their software, tuning, clocks and runs' convergence, which a model of
/// the configuration knows only through an anchor on the system itself.
std::optional<double> peer_minutes(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds,
                                   std::size_t target);

/// The spread of peer_minutes over the rows on one node (`one_node`) or on several.
PeerSpread peer_spread(const std::vector<MlperfResult>& rows, const std::vector<std::string>& kinds, bool one_node);

/// The target's score, in minutes, at the software level that makes the model's step at the anchor
/// its logged step (the anchor's training_step phase), each re-estimated at the layout its
/// prediction `pt`, `pa` took; none where the anchor's logs give no step or the level falls outside
/// the plausible range (models::kSoftwareLevelMin..Max). What run --anchor N=TIME/step does.
std::optional<double> step_anchored_minutes(const MlperfResult& target, const SystemPrediction& pt,
                                            const MlperfResult& anchor, const SystemPrediction& pa);

/// Every multi-node row with an anchor, each with its system left out of the calibration.
/// `progress` (may be empty) is called after each fold with "left out <system> (k of n)".
ScalingReport validate_scaling(const std::vector<MlperfResult>& rows, const models::Catalog& catalog,
                               const PlatformCatalog& platforms,
                               const std::function<void(const std::string&)>& progress = {});

/// Median, p90 and max of |errors| in % by benchmark, by scale range, by the anchor's submitter
/// and software release (ScalingRow::software) and overall.
std::vector<ScalingSummary> summarise_scaling(const std::vector<ScalingRow>& rows);

}  // namespace sp::calibration
