// Modelling a published (or planned) system from a results-table row: the benchmark's workload,
// a platform for its accelerator and node size, a global batch (the row's, or the v4.1-typical
// one at that N), and a parallel layout (the workload's, or the fastest that fits when the usual
// one does not apply at this N).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration.hpp"
#include "calibration/predict/results.hpp"
#include "models/catalog.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/time_to_train.hpp"

namespace sp::calibration {

/// Platforms from scenarios/platforms, matched to rows by accelerator and node size.
class PlatformCatalog {
 public:
  explicit PlatformCatalog(const models::Catalog& catalog);
  /// The platform for `accelerator` with `per_node` accelerators per node: a shipped reference
  /// platform of that kind and size (one without a `site`), or one of that kind resized, or (no
  /// platform file uses the kind) one built from its hardware file's typical node
  /// (generic_platform).
  models::Platform for_system(const models::Accelerator& accelerator, int per_node) const;
  /// The shipped platform `name` (a file stem of scenarios/platforms) resized to `per_node`, for
  /// a system of kind `accelerator`; nullopt with `why` when there is none or it is of another kind.
  std::optional<models::Platform> named(const std::string& name, const models::Accelerator& accelerator, int per_node,
                                        std::string& why) const;

 private:
  std::vector<models::Platform> platforms_;
  std::vector<std::string> names_;  // file stems, parallel to platforms_
  const models::Catalog& catalog_;
};

/// The platform with a different number of accelerators per node (NICs per accelerator kept).
models::Platform resize_node(models::Platform platform, int per_node);

/// A platform for an accelerator no platform file uses: its scale-up link as the node's tier (a
/// switch, bridge or PCIe), its typical NICs on a non-blocking fat tree, NCCL's protocols, ring
/// and tree; link efficiencies, communication SMs and jitter are estimates named in `name`.
models::Platform generic_platform(const models::Accelerator& accelerator, int per_node, const models::Catalog& catalog);

using models::typical_global_batch;

struct SystemPrediction {
  std::string status = "ok";  // ok | error | out_of_memory
  std::string message;
  std::int64_t global_batch = 0;
  std::string kind;             // the catalog's accelerator kind
  std::string software_source;  // where its software efficiency came from (Calibration::software)
  models::TrainingEstimate estimate;
  models::Platform platform;  // what it ran on (energy)
  // The workload as it ran: calibrated for its stack (to re-estimate the layout at other inputs).
  std::shared_ptr<const models::Workload> workload;
  // The time to train of runs converging where the row's logged runs did (none where the row
  // gives no convergence): the model's time per sample without the submitter's convergence luck.
  std::optional<Duration> at_logged_convergence;
  // The model's counterpart of each phase the row's logs time (MlperfResult::phases, in order),
  // in seconds, for runs converging where the row's did, or at the RCP mean where the row does
  // not say (modelled_phase, as the fit weighs them).
  std::vector<double> phase_seconds;
  double peak_flops = 0;  // the accelerator's dense peak at the workload's precision, FLOP/s (naive_baseline)
};

/// Everything the model needs beyond the row; calibration replaces parts of it.
struct SystemModelInputs {
  const models::Catalog& catalog;
  const PlatformCatalog& platforms;
  models::Calibration calibration;
  int samples = 100;
  std::uint64_t seed = 1;
  // The layout as the row ran it (declared, else the workload's recipe) rather than the fastest
  // the model finds: what the fit reproduces (models::LayoutChoice).
  models::LayoutChoice layouts = models::LayoutChoice::fastest;
};

/// What predict_system has worked out per configuration (the layout search, the sensitivities of
/// the time to train to the fitted parameters), shared by the rows of one table that name the same
/// system: a table of many rows repeats few configurations. Thread-safe; results are the same
/// with it or without.
struct ConfiguredSystem;
class PredictionCache {
 private:
  friend SystemPrediction predict_system(const MlperfResult&, const SystemModelInputs&, PredictionCache*);
  std::mutex lock_;
  std::map<std::string, std::shared_ptr<const ConfiguredSystem>> entries_;
};

SystemPrediction predict_system(const MlperfResult& row, const SystemModelInputs& inputs, PredictionCache* cache = nullptr);

/// The model's counterpart, in seconds, of a phase the logs time: `c` is the run's evaluation
/// cost. One that the model does not have (no asynchronous scoring) counts as 1 ms.
double modelled_phase(const models::TrainingEstimate& e, const models::EvaluationCost& c,
                      PhaseObservation::Phase phase);

using models::spec_of;

}  // namespace sp::calibration
