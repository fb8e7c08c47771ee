// A co-location scenario (`scalepoint colocate FILE.yaml`, scenarios/colocation/*.yaml): K copies
// of one small training job on one accelerator, for each K listed and each sharing strategy:
//  - sequential: one job after another, each paying its start-up;
//  - time_slicing: all K processes at once under the driver's default time slicing;
//  - mps: all K as clients of CUDA MPS (at most 48 per device, CUDA <= 13.0);
//  - fractional: Ray-style fractional GPUs, floor(1 / fraction) admitted at a time (no memory or
//    compute enforcement), run under time slicing or MPS;
//  - fused: HFTA-style, B copies fused into one process (one context, one host thread, one launch
//    per kernel doing B models' work), as many as fit in memory unless `fused_max` says fewer;
//    ceil(K / B) fused groups run one after another;
//  - mig: Multi-Instance GPU, K equal isolated instances (the largest profile K of fit; beyond
//    the most instances the device has, jobs wait for one to free), each job alone on its own.
// With `early_stopping`, a hyper-parameter search's ASHA-like scheduler ends the jobs that rank
// low at its milestones (every strategy but fused).
// Memory per strategy: a process holds a CUDA context and library workspaces plus its tensors;
// all resident processes count (nothing is swapped), and a strategy that does not fit is
// out_of_memory, as it would fail on the device.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/colocation/colocation_sim.hpp"
#include "models/colocation/small_workload.hpp"
#include "models/catalog.hpp"
#include "models/energy/energy.hpp"
#include "sim/config/loader.hpp"
#include "sim/output/table.hpp"

namespace sp::config {
class CsvTable;
}

namespace sp {

enum class Strategy { sequential, time_slicing, mps, fractional, fused, mig };
const char* strategy_name(Strategy s);
/// The strategy of that name, if any; and every name, for messages.
std::optional<Strategy> strategy_named(std::string_view name);
std::string strategy_names();

/// MIG: the largest profile of which `instances` fit on the device together (none if none do).
std::optional<models::MigProfile> mig_profile(const models::MigGeometry& g, int instances);

struct ColocationSpec {
  std::string name, description, file;
  models::Accelerator accelerator;
  models::SmallWorkload workload;
  std::vector<models::StepKernel> traced;  // a measured step (job.trace) run instead of the workload's kernels
  double batch = 0;
  double steps = 0;  // per job (epochs x steps per epoch when given in epochs)
  std::vector<int> jobs;  // the K values, ascending
  std::vector<Strategy> strategies;
  double host_cores = 8;
  Watts host_power{275};  // the host's share while the jobs run
  Duration time_slice = models::kMeasuredTimeSlice, switch_cost = models::kMeasuredSwitchCost;
  Duration start_up = seconds(5.0);
  Bytes context_memory{0.5e9};
  double mps_thread_share = 1;
  double fraction = 0.25;
  bool fractional_mps = false;
  int fused_max = 0;  // 0: as many as fit
  int mps_clients_max = 48;
  // ASHA-like early stopping (colocation_sim.hpp), off when reduction is 0: milestones at grace x
  // steps x reduction^i below the job's steps; each job's quality drawn from `seed`. Not for fused
  // groups, whose models train together to the end.
  double stop_grace = 0, stop_reduction = 0;
  std::uint64_t seed = 1;
  models::PowerCalibration power = models::default_power_calibration();
};

ColocationSpec load_colocation(const std::string& file, const std::vector<config::Override>& overrides,
                               const models::Catalog& catalog);

struct ColocationPoint {
  int jobs = 0;
  Strategy strategy = Strategy::sequential;
  std::string status = "ok";  // ok | out_of_memory | invalid
  std::string message;
  int resident = 0;           // processes (or fused models) on the device at once
  int fused_models = 0;       // fused: models per process
  Bytes memory;               // device memory in use at the peak
  models::ColocationRun run;
  double speedup = 0;         // sequential makespan / this makespan at the same K
};

/// The most kernel launches (largest job count x steps x kernels a step) a scenario may ask of one
/// point: about 5 minutes of simulation on one core.
inline constexpr double kMaxColocatedLaunches = 1e9;

/// `progress` hears the points done, with a share of the running one (3.4: three done, the fourth
/// 40 % through its steps), and the total.
std::vector<ColocationPoint> run_colocation(const ColocationSpec& spec,
                                           const std::function<void(double done, int total)>& progress = {});

/// The samples all the point's jobs trained (fewer than K x steps x batch with early stopping).
double trained_samples(const ColocationPoint& point, double batch);

/// What a user asks of a sweep over K: at each K, the strategy that finishes all K jobs first
/// and the one that spends the least accelerator energy on them (the first listed wins a tie;
/// points that did not run, e.g. out of memory, are not candidates).
struct StrategyChoice {
  int jobs = 0;
  const ColocationPoint* fastest = nullptr;
  const ColocationPoint* least_energy = nullptr;
};
std::vector<StrategyChoice> choose_strategies(const std::vector<ColocationPoint>& points);

/// summary.csv: one row per (K, strategy); jobs.csv: each job's completion.
output::Table colocation_table(const ColocationSpec& spec, const std::vector<ColocationPoint>& points);
output::Table colocation_jobs_table(const std::vector<ColocationPoint>& points);

}  // namespace sp

namespace sp {

/// The co-location model against published speedups (calibration/data/colocation/*.csv: scenario,
/// strategy, jobs, published_speedup, tolerance, source; optional reference: one job at a time on
/// the published axis where the curves are normalised to something else, 1 if absent): each row's scenario
/// (scenarios/colocation/<scenario>.yaml) run at its K, one row per published point with the
/// model's speedup, the error and whether it is within the tolerance.
output::Table validate_colocation(const std::string& published_csv, const models::Catalog& catalog);

/// The time-slicing constants that K processes measured on one GPU (scalepoint-coloc-bench's CSV)
/// give in closed form: the host's cost of a launch (the host-bound loop alone), the switch cost
/// (the queued_long loop's loss against one job at a time) and the time slice (the probe's longest
/// wait beside long kernels, less a switch and its round trip alone).
struct TimeSlicingDerivation {
  Duration launch_cost, time_slice = models::kMeasuredTimeSlice, switch_cost = models::kMeasuredSwitchCost;
  // false where the file lacks queued_long or probe rows: the slice and switch are then the
  // H100's (the scenarios' defaults), and the file's other loops check them on its own GPU
  bool slice_measured = false;
};
TimeSlicingDerivation derive_time_slicing(const config::CsvTable& bench, Duration kernel_latency);

/// The co-location simulation, with the file's own time slice and switch cost where it has the rows
/// they come from (else the scenario defaults, the H100's), against
/// scalepoint-coloc-bench's rows (calibration/data/colocation/h100_coloc_bench.csv): one row per
/// measured K, case and sharing with both speedups and makespans, and what the row is used for;
/// `derived`, if given, receives the constants the measurements give.
output::Table validate_sharing_bench(const std::string& bench_csv, const models::Catalog& catalog,
                                     TimeSlicingDerivation* derived = nullptr);

}  // namespace sp
