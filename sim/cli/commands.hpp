// The subcommands behind the CLI. They print to stdout and throw on error; main() maps errors
// to exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sp::models {
class Catalog;
}
namespace sp::calibration {
struct MlperfResult;
class PlatformCatalog;
}  // namespace sp::calibration

namespace sp::cli {

struct RunOptions {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  std::optional<long long> seed;
  std::optional<int> samples;
  std::string platform;  // replaces the scenario's platform: a name in scenarios/platforms or a file
  std::string anchor;    // N=TIME or N=TIME/step: a measured time that sets the software level (sim/scenario/anchor.hpp)
  bool quiet = false;
  bool timelines = true;  // the step's and the run's Chrome traces per N (tens of MB at 10^5 GPUs)
  std::vector<std::string> command_line;
};

struct ColocateOptions {
  std::string scenario;
  std::string validate;  // published co-location speedups to compare with
  std::string out_dir;
  std::vector<std::string> overrides;
  bool quiet = false;
};

struct ClusterOptions {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  bool quiet = false;
  bool timelines = true;
};

/// `scalepoint cluster`: several jobs on one fat tree, per placement (sim/scenario/cluster.hpp).
int cluster_command(const ClusterOptions& options);

/// `scalepoint colocate`: K small jobs on one accelerator under each sharing strategy.
int colocate_command(const ColocateOptions& options);

/// `scalepoint run`: simulate, print the table, write summary.csv, results.h5, manifest.yaml and
/// scaling.png into the output folder. Returns the exit status.
int run_command(const RunOptions& options);

/// `scalepoint list accelerators|workloads|platforms`.
int list_command(const std::string& what);

struct CollectiveOptions {
  std::string platform = "dgx_h100";
  std::string op = "all_reduce";
  int gpus = 8;
  std::string bytes = "8B:8GiB";
  double factor = 2;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  std::string fidelity = "analytic";
  std::string validate;  // a CSV of published measurements
  std::string out_dir;   // where the validation table and plot go
};

/// `scalepoint collective`: nccl-tests-style table, or --validate against published results.
int collective_command(const CollectiveOptions& options);

struct AnalyzeOptions {
  std::string data;
  std::string out_dir;
  std::optional<int> k;
  std::uint64_t seed = 1;
};

/// `scalepoint analyze`: the seed study's efficiency analysis of published MLPerf times.
int analyze_command(const AnalyzeOptions& options);

struct PredictOptions {
  std::string systems;
  std::string out;
  int samples = 100;
  std::uint64_t seed = 1;
};

/// `scalepoint predict`: the time to train of every row of a systems CSV.
int predict_command(const PredictOptions& options);

struct ValidateOptions {
  std::string data;
  std::string out_dir;
  bool loo = false;   // refit without each system in turn and predict it
  bool loko = false;  // refit without each accelerator kind in turn and predict it
  bool scaling = false;  // multi-node rows from a measured smaller system (scaling_validation.hpp)
  std::string transformer;  // published transformer runs instead (transformer_validation.hpp)
  std::string platform = "dgx_a100";  // their platform
  std::string phases; // phase observations from the systems' logs, for the refits (may be empty)
  int samples = 100;
  std::uint64_t seed = 1;
};

/// `scalepoint validate`: predictions against published MLPerf times.
int validate_command(const ValidateOptions& options);
/// A `scalepoint: warning:` for each published row the model could not predict and left out of
/// a validation or a fit (an unknown accelerator or platform), beside the report's `skipped`
/// lines; rows without a published time are only listed.
void warn_unmodelled(const std::vector<std::string>& skipped, const std::string& data_file);

/// `scalepoint validate --transformer FILE`: transformer_rows.csv, transformer_summary.csv, transformer.png.
int validate_transformer_command(const ValidateOptions& options);

/// `scalepoint validate --scaling`: writes scaling_rows.csv, scaling_summary.csv and scaling.png.
int validate_scaling_command(const std::vector<calibration::MlperfResult>& rows, const models::Catalog& catalog,
                             const calibration::PlatformCatalog& platforms, const std::string& out_dir);

struct CalibrateOptions {
  std::string data;
  std::string out = "results/checks/mlperf_v4.1.yaml";  // the committed one: --out calibration/params/mlperf_v4.1.yaml
  bool loo = false;   // also leave each system out (sets the model error)
  bool loko = false;  // also leave each accelerator kind out
  std::string phases; // phase observations from the systems' logs (may be empty)
};

/// `scalepoint calibrate mlperf`: fit the model's free parameters to published times.
int calibrate_mlperf_command(const CalibrateOptions& options);

struct CalibratePowerOptions {
  std::string data;
  std::string out = "results/checks/power_v4.1.yaml";  // the committed one: --out calibration/params/power_v4.1.yaml
};

/// `scalepoint calibrate power`: fit the power model's compute share to MLPerf Power rows.
int calibrate_power_command(const CalibratePowerOptions& options);

struct CalibrateNetworkOptions {
  std::vector<std::string> inputs;  // scalepoint-bench CSV, nccl-tests text or JSON, OSU output
  std::string base = "localhost";   // the platform the segments are added to
  std::string out;
  std::string op = "all_reduce";    // which measured operation the segments are fitted to
  std::string input_op;             // what files that do not say measure (nccl-tests)
  int ranks = 0;                    // ranks of files that do not say (OSU)
  std::string scope;                // intra | inter, for files that do not say
  int segments = 0;                 // > 0: exactly this many
  int max_segments = 6;
  std::string report_dir;           // the measured table and fits as CSV and plot
};

struct SweepOptions {
  std::string sweep;
  std::string out_dir;  // default results/<sweep name>
  bool resume = false;
  bool quiet = false;
};

/// `scalepoint sweep`: every point of a sweep file, serially or under mpirun.
int sweep_command(const SweepOptions& options);

/// `scalepoint report DIR`: break-even points, tables and plots of a finished sweep.
int report_command(const std::string& dir);

struct CalibrateComputeOptions {
  std::vector<std::string> inputs;  // scalepoint-gpu-bench CSV, JSON lines
  std::string accelerator;          // catalog name or alias; default: the CSV's device 0
  std::string out;
  std::string report_dir;           // gemm_fit.{csv,png} when set
};

/// `scalepoint calibrate compute`: an accelerator's kernel costs, as a fragment of its hardware file.
int calibrate_compute_command(const CalibrateComputeOptions& options);

struct ComputeCheckOptions {
  std::string data;  // JSON lines of measured configurations
  std::string accelerator = "H100-SXM5-80GB";
  std::string out_dir = "results/checks/compute_check";  // the committed one: --out results/validation/compute_check
};

/// `scalepoint compute-check`: the compute model against measured forward/backward passes.
int compute_check_command(const ComputeCheckOptions& options);

struct GemmShapesOptions {
  std::string workload;
  std::vector<int> batches = {1};
  int tp = 1;
  std::string out;        // the bench's --shapes CSV; "-" or empty: standard output
  std::string cxx_table;  // instead: the table of every workload compiled into the bench
};

/// `scalepoint gemm-shapes`: the GEMMs a workload runs, for scalepoint-gpu-bench.
int gemm_shapes_command(const GemmShapesOptions& options);

/// `scalepoint calibrate network`: piecewise alpha-beta per tier, written as a platform.
int calibrate_network_command(const CalibrateNetworkOptions& options);

}  // namespace sp::cli
