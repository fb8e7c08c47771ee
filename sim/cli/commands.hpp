// The subcommands behind the CLI. They print to stdout and throw on error; main() maps errors
// to exit codes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp::cli {

struct RunOptions {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  std::optional<long long> seed;
  bool quiet = false;
  std::vector<std::string> command_line;
};

/// `scalepoint run`: simulate, print the table, write summary.csv, results.h5, manifest.yaml and
/// scaling.png into the output folder. Returns the exit status.
int run_command(const RunOptions& options);

/// `scalepoint list accelerators|workloads`.
int list_command(const std::string& what);

}  // namespace sp::cli
