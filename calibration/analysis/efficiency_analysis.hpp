// The seed study's analysis of published MLPerf times (Cortes, Juiz, Bermejo, SARTECO 2025):
// per benchmark the reference system (fewest accelerators, then the slowest of those), every
// system's speedup T_ref/T and per-accelerator efficiency E' = (T_ref/T)/(N/N_ref), K-means
// clusters of the systems on (log2 N, E') (both z-scored so neither axis dominates), and the
// equilibrium points: the break-even definitions applied to the Pareto frontier of the published
// times (the best time at each N that beats every smaller N).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/predict/results.hpp"
#include "sim/output/table.hpp"
#include "sim/scenario/break_even.hpp"

namespace sp::calibration {

struct SystemEfficiency {
  MlperfResult result;
  double speedup = 1;
  double e_prime = 1;
  int cluster = 0;
};

struct BenchmarkAnalysis {
  std::string benchmark;
  int systems = 0;  // with a score
  MlperfResult reference;
  std::vector<SystemEfficiency> rows;  // ascending N, then time
  int k = 1;
  double silhouette = 0;
  std::vector<BreakEven> equilibrium;
};

/// `k`: clusters per benchmark, or nullopt to choose 2..6 by silhouette.
std::vector<BenchmarkAnalysis> analyze_efficiency(const std::vector<MlperfResult>& results, std::optional<int> k,
                                                  std::uint64_t seed);

/// The study's Table I: benchmark, systems with a score, reference accelerators, reference time.
output::Table table_one(const std::vector<BenchmarkAnalysis>& analyses);
/// One row per system: benchmark, submitter, system, accelerator, N, time, speedup, E', cluster.
output::Table efficiency_table(const std::vector<BenchmarkAnalysis>& analyses);

}  // namespace sp::calibration
