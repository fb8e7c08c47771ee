// Sweep files (scenarios/sweeps/*.yaml): a base scenario and axes over any key path (the paths
// of `--set`), expanded in the file's order into points with stable ids:
//   name: fabrics
//   base: ../bert.yaml                 # relative to the sweep file
//   axes:                              # the first axis varies slowest
//     - grid: {workload: [bert, retinanet], batch.global: [1024, 4096]}   # cartesian product
//     - zip: {platform.scale_out.nic_bandwidth: ["400 Gb/s", "800 Gb/s"],  # lock-step lists
//             platform.name: [NDR, XDR]}
//     - points: [{parallelism.tensor: 4}, {parallelism.tensor: 8, parallelism.context: 2}]
//     - repeat: 3                      # seeds 1, 2, 3
//   report: {gpu_hour: "2.5 USD", deadline: "30 min"}   # for `scalepoint report`
// The key `base` inside an axis switches the scenario file itself (paths relative to the sweep);
// the key `label` only names the value in the output (a column), overriding nothing.
// Inside a grid the first key varies slowest too. A point is the base scenario with the
// overrides of one value of every axis; its id is its index in this order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/config/loader.hpp"

namespace sp {

struct SweepPoint {
  int id = 0;
  std::vector<config::Override> overrides;  // in axis order
};

struct SweepSpec {
  std::string name;
  std::string file;       // as given
  std::string base_file;  // resolved against the sweep file's folder
  std::vector<std::string> keys;  // every swept key path, in order of first appearance
  std::vector<SweepPoint> points;
  std::optional<double> gpu_hour_usd;  // price of one accelerator-hour, for the report
  std::optional<double> deadline_s;    // the report's cheapest configuration within it
  std::string sha256;                  // of the sweep file's bytes
  /// The most points the file may expand to (`max_points`): a grid of many keys grows as the
  /// product of its lists, and is refused with its count before anything runs or is written.
  std::int64_t max_points = 1'000'000;

  /// The value (one-line YAML) of `key` at `point`, "" where the point does not set it.
  std::string value(const SweepPoint& point, const std::string& key) const;
  /// The point's scenario: the sweep's base, or the one its `base` key names (relative to the
  /// sweep file), so that one sweep can cover several workloads' scenarios.
  std::string base_of(const SweepPoint& point) const;
  /// Its overrides without `base` and `label`.
  std::vector<config::Override> overrides_of(const SweepPoint& point) const;
};

/// A swept value (one-line YAML) as plain text: quotes around a string dropped.
std::string unquoted(const std::string& one_line_yaml);

/// Parses and expands; InputError located at file:line and key for a malformed sweep. Whether
/// each point's scenario is valid is found out when it runs (a bad point fails alone).
SweepSpec load_sweep(const std::string& file);

}  // namespace sp
