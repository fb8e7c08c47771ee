// The subcommands behind the CLI. They print to stdout and throw on error; main() maps errors
// to exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sp::cli {

struct RunOptions {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  std::optional<long long> seed;
  std::optional<int> samples;
  bool quiet = false;
  std::vector<std::string> command_line;
};

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
  bool loo = false;  // refit without each system in turn and predict it
  int samples = 100;
  std::uint64_t seed = 1;
};

/// `scalepoint validate`: predictions against published MLPerf times.
int validate_command(const ValidateOptions& options);

struct CalibrateOptions {
  std::string data;
  std::string out = "calibration/params/mlperf_v4.1.yaml";
  bool loo = false;
};

/// `scalepoint calibrate mlperf`: fit the model's free parameters to published times.
int calibrate_mlperf_command(const CalibrateOptions& options);

}  // namespace sp::cli
