// MLPerf Training results tables (calibration/data/mlperf/results_v4.1.csv and files with the
// same columns): one row per system and benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/csv.hpp"

namespace sp::models {
struct Workload;
}

namespace sp::models {
class Catalog;
}

namespace sp::calibration {

/// Why a published time to train cannot be one, or "": not positive, or over a week (10,000 min).
std::string time_to_train_problem(double minutes);

/// One phase of a system's runs as its logs time it, beyond the total (calibration/data/mlperf/
/// phases_v4.1.csv): where the fit cannot tell costs apart from totals alone (an evaluation's
/// fixed overhead from its share per node, once-per-run scoring from per-evaluation costs, a
/// step's fixed host time from its cost per sample), the logs can. Attached to its result row, so that leaving the row out leaves them out too.
struct PhaseObservation {
  enum class Phase {
    evaluation,             // training stopped for one evaluation (mean over the run's evaluations)
    after_last_evaluation,  // the end of the last evaluation to run_stop (asynchronous scoring)
    training_step,          // one training step between evaluations
    evaluation_setup        // the first training interval's time beyond its steps at the steady rate
  };
  Phase phase = Phase::evaluation;
  double seconds = 0;  // mean over the runs read
  int runs = 0;
  int line = 0;  // of the first run's row
};

/// The phase's name in phases_v4.1.csv and in the outputs.
const char* phase_name(PhaseObservation::Phase phase);

struct MlperfResult {
  std::size_t row = 0;  // data row in the file (0-based)
  int line = 0;         // line in the file
  std::string benchmark, submitter, system_name, accelerator;
  std::string framework;  // as declared ("NGC Pytorch 24.09", "tinygrad", "maxdiffusion"); may be empty
  int accelerators_per_node = 0;
  int nodes = 0;
  int accelerators = 0;  // accelerators_total
  std::optional<double> time_to_train_min;
  std::optional<std::int64_t> global_batch;
  // What the scored runs converged at: the submission's mean samples (or epochs) to converge
  // times MLPerf's RCP scaling factor (above 1 when the runs converged faster than the reference,
  // whose mean the score then stands for). An outcome of the runs, like the time: the fit reads
  // it for the rows it fits on, a prediction never does (validation also reports the error at it).
  std::optional<double> converged;
  bool converged_in_epochs = false;
  /// `converged` in samples, for a workload whose epoch is `train_samples`; empty when not given.
  std::optional<double> converged_samples(std::int64_t train_samples) const {
    if (!converged) return std::nullopt;
    return *converged * (converged_in_epochs ? static_cast<double>(train_samples) : 1.0);
  }
  /// "submitter / system name": the system a leave-one-system-out fold holds out.
  std::string system() const { return submitter + " / " + system_name; }
  std::string org_folder, system_folder;  // where its logs are (empty when the table has no such columns)
  // The layout the system ran where its configuration says (columns tensor_parallel,
  // context_parallel, pipeline_parallel; e.g. Lambda's config_1cc_2x8x2xtp4pp1cp1.sh): part of the
  // system's description, like its global batch. Empty: the workload file's rule or search.
  std::optional<int> tensor_parallel, context_parallel, pipeline_parallel;
  // The platform file (scenarios/platforms, by name) describing the cluster it ran on where one is
  // shipped for it (column `platform`); empty: the reference platform of its kind and node size.
  std::string platform;
  // The hosts' processor as declared (column host_processor, "AMD EPYC 9654", may be empty): the
  // collective library prices steps across nodes by its vendor (models::Platform::host_cpu).
  std::string host_processor;
  // The clock-boost setting it ran at (column clock_boost: its configuration's VBOOST_VALUE, which
  // `nvidia-smi boost-slider --vboost` applies; 0 none). Empty: its workload's reference
  // configurations' (models::Workload::clock_boost_one_node on one node, none on more).
  std::optional<int> clock_boost;
  /// Whether it ran with its SM clock boosted: as it says, else as its workload's recipe has it.
  bool boosted(const models::Workload& w) const;
  std::vector<PhaseObservation> phases;
  // The MLPerf round it was submitted to ("4.1"; column `round`, may be empty): which round's RCPs
  // its convergence is predicted from (models::ConvergenceTable::at_round).
  std::string round;
  // "ROUND:ORG/SYSTEM_FOLDER" of a submission whose logs this result reuses (column same_logs_as;
  // empty: its own): v4.1 resubmitted v4.0 runs, and Dell filed one set of runs twice, once for
  // MLPerf Power.
  std::string same_logs_as;

  /// Whether an earlier row of `rows` (by position) is the very submission whose logs this one
  /// reuses, in the same round and benchmark: the same runs counted a second time.
  bool repeats_an_earlier_row(const std::vector<MlperfResult>& rows, std::size_t self) const;
  /// What a command that leaves such a row out says of it ("line 37: llama2_70b_lora Dell ...").
  std::string left_out_as_a_repeat() const;
};

/// Reads the columns scalepoint needs; the others stay in `table` for callers that carry them.
std::vector<MlperfResult> read_mlperf_results(const config::CsvTable& table);

/// Attaches each row of a phases table (benchmark, org_folder, system_folder, phase, seconds) to
/// the result it times, averaging the runs of one phase; a row matching no result, an unknown
/// phase or a non-positive time is an InputError naming file, line and column.
void attach_phases(std::vector<MlperfResult>& results, const config::CsvTable& table);

/// Gives each row's benchmark the one name the catalog knows it by (Catalog::benchmark_name), so
/// that rows spelling a benchmark differently ("ssd" in one, "retinanet" in another) are grouped,
/// anchored and fitted as one benchmark. Call it after attach_phases, which matches the phases
/// table's names as both tables write them.
void name_benchmarks(std::vector<MlperfResult>& results, const models::Catalog& catalog);

/// InputError naming `file` when no row has a time to train (nothing to analyse, compare or fit).
void require_times(const std::vector<MlperfResult>& results, const std::string& file);

/// The benchmark names in first-seen order.
std::vector<std::string> benchmarks(const std::vector<MlperfResult>& results);

}  // namespace sp::calibration
