// The committed MLPerf v4.1 data and catalog, as `calibrate mlperf --phases` reads them, for the
// calibration tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "calibration/predict/results.hpp"
#include "models/catalog.hpp"
#include "sim/config/csv.hpp"

namespace sp::calibration::testing {

inline std::string v41_results_file() {
  return std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv";
}

inline std::string v41_phases_file() {
  return std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/phases_v4.1.csv";
}

inline const models::Catalog& catalog() {
  static const models::Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return c;
}

/// The rows and their logs' phases.
inline std::vector<MlperfResult> v41() {
  std::vector<MlperfResult> rows = read_mlperf_results(config::CsvTable::read(v41_results_file()));
  attach_phases(rows, config::CsvTable::read(v41_phases_file()));
  name_benchmarks(rows, catalog());
  return rows;
}

}  // namespace sp::calibration::testing
