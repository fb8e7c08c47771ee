// Collective and point-to-point timings from any source, in one table: nccl-tests text output
// (every variant nccl-tests prints), nccl-tests JSON (-J), OSU
// micro-benchmarks, and scalepoint-bench CSV. What `scalepoint calibrate network` fits.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp::calibration {

struct Measurement {
  std::string source;  // file the row came from
  int line = 0;        // line in that file (1-based; 0 when not line-oriented, e.g. JSON)
  std::string format;  // nccl-tests | nccl-tests-json | osu | scalepoint-bench
  std::string scope;   // intra (ranks sharing a node) | inter (one rank per node) | "" unknown
  std::string op;      // all_reduce | reduce_scatter | all_gather | broadcast | all_to_all | ping_pong
  int ranks = 0;
  int nodes = 0;       // 0 unknown
  double bytes = 0;    // nccl-tests' size convention (see models/collective/collective.hpp)
  double time_us = 0;  // the typical time of one operation (nccl-tests: out-of-place average;
                       // OSU: average latency; scalepoint-bench: median)
};

/// What a file does not say about itself: OSU and nccl-tests text do not name the rank count
/// (OSU) or the collective (nccl-tests); the caller supplies them.
struct MeasurementDefaults {
  std::optional<std::string> op;
  std::optional<int> ranks;
  std::optional<int> nodes;
  std::optional<std::string> scope;
};

/// Reads one file of any supported format (detected from its content). Throws InputError,
/// located at the file and line, for a row it cannot read or a fact it cannot tell (which
/// collective, how many ranks).
std::vector<Measurement> read_measurements(const std::string& file, const MeasurementDefaults& defaults = {});

/// The same for text already in memory; `name` labels messages and the `source` column.
std::vector<Measurement> parse_measurements(const std::string& text, const std::string& name,
                                            const MeasurementDefaults& defaults = {});

}  // namespace sp::calibration
