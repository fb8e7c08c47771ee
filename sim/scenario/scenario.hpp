// A scenario: one workload on one platform over a list of accelerator counts, with a batch-size
// policy. load_scenario() checks everything that can be wrong with the input (every error is an
// InputError naming file, line and key) so that running it can only fail on model limits.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/energy/energy.hpp"
#include "models/goodput/goodput.hpp"
#include "models/network/platform.hpp"
#include "models/training/time_to_train.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/loader.hpp"
#include "sim/scenario/anchor.hpp"

namespace sp {

/// Global batch as a function of the accelerator count N.
struct BatchPolicy {
  enum class Kind { global, per_accelerator, by_accelerators } kind = Kind::global;
  std::int64_t global = 0;
  std::int64_t per_accelerator = 0;
  std::map<int, std::int64_t> by_accelerators;
  bool typical = false;  // by_accelerators from the workload's v4.1-typical batches (typical: true)

  std::int64_t global_batch(int accelerators) const;
};

struct ScenarioSpec {
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  models::Workload workload;
  models::Platform platform;
  std::vector<int> accelerators;  // ascending, unique
  BatchPolicy batch;
  models::Fidelity fidelity = models::Fidelity::analytic;  // of the collectives
  models::ParallelSpecs parallelism;  // overrides of the workload's layouts
  int samples = 100;                  // Monte Carlo replicates for the prediction interval
  models::PowerCalibration power = models::default_power_calibration();
  std::optional<Anchor> anchor;       // a measured time that set the software level (anchor.hpp)
  // Failures, checkpoints and restarts over a run: the defaults, the platform's `reliability`,
  // then the scenario's.
  models::Reliability reliability = models::default_reliability();

  /// The layout spec at N: the workload's, then the scenario's overrides; declared (taken as it is)
  /// where the scenario names a tensor, context or pipeline size.
  models::ParallelSpec parallel_spec(int accelerators) const;
  /// The sizes to search at N: the scenario's search; none when the scenario pins a tensor,
  /// context or pipeline size (for all N or this one); otherwise the workload's.
  models::LayoutSearch layout_search(int accelerators) const;

  std::string file;             // as given on the command line
  std::string file_sha256;      // of the file's bytes
  std::string resolved_yaml;    // after includes and overrides
  std::string resolved_sha256;
};

ScenarioSpec load_scenario(const std::string& file, const std::vector<config::Override>& overrides,
                           const models::Catalog& catalog);

/// The scenario that `root` describes on the platform `platform` (a cluster's job gives its own
/// keys and shares the cluster's platform); `file` locates relative paths and messages. The
/// caller checks root's keys.
ScenarioSpec scenario_from_node(const config::ConfigNode& root, const config::ConfigNode& platform,
                                const std::string& file, const models::Catalog& catalog);

/// One row per accelerator count, with speedup and E' against the smallest count that fits.
struct ScalingPoint {
  models::TrainingEstimate estimate;
  double speedup = 1;
  double e_prime = 1;  // (T_ref / T_N) / (N / N_ref)
  // Where E' goes, as factors relative to the reference whose product is 1 / E':
  //   T N = S x (N C / GBS) x (step / C) x (1 + eval N / (S N step / GBS))
  // with S samples to converge, C compute per step, step the step time: more samples to converge
  // (larger batch), more accelerator-time per sample (smaller per-GPU batch, less efficient),
  // more of the step outside compute (exposed communication, bubble, stragglers, optimizer), and
  // evaluation that does not shrink with N.
  double loss_convergence = 1, loss_compute = 1, loss_step_overhead = 1, loss_evaluation = 1;
  models::EnergyEstimate energy;    // of the expected run
  Joules energy_p10, energy_p90;    // the interval's runs at the expected run's average power
  std::string timeline;  // the step as Chrome trace JSON, when asked for
  models::GoodputEstimate goodput;  // the run with failures, checkpoints and restarts
  double effective_e_prime = 1;     // E' on the effective times to train
};

/// Every accelerator count of `spec`; with `timelines`, each point's step as a Chrome trace too;
/// with `threads`, the counts spread over the cores (`run`; a sweep's ranks already fill them).
std::vector<ScalingPoint> run_scenario(const ScenarioSpec& spec, bool timelines = false, bool threads = false);

}  // namespace sp
