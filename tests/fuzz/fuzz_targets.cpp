// libFuzzer targets for every parser a user feeds (tests/fuzz/README.md). One source, one target
// per build (SP_FUZZ_TARGET): the input is handed to the real loader as a user's file would be.
// An InputError or ModelError is the expected answer to bad input; anything else escaping (a
// std::out_of_range, bad_alloc, ...), a crash, a sanitizer report or a hang is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/mlperf/power.hpp"
#include "calibration/predict/results.hpp"
#include "calibration/network/measurements.hpp"
#include "models/catalog.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/cluster.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace fs = std::filesystem;
using namespace sp;

namespace {
[[maybe_unused]] const models::Catalog& catalog() {
  static const models::Catalog c(fs::path(SP_SOURCE_DIR) / "models");
  return c;
}

// A private folder where `!include platforms/x.yaml` (the shipped scenarios' includes) resolves.
const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("sp_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::error_code ec;
    fs::create_directory_symlink(fs::path(SP_SOURCE_DIR) / "scenarios" / "platforms", d / "platforms", ec);
    return d;
  }();
  return dir;
}

[[maybe_unused]] fs::path as_file(const std::string& text, const char* name) {
  const fs::path f = scratch() / name;
  std::ofstream(f, std::ios::binary | std::ios::trunc) << text;
  return f;
}

// A first line "#set key=value" becomes a --set argument, so overrides are fuzzed too.
[[maybe_unused]] std::vector<config::Override> overrides_of(const std::string& text) {
  if (text.rfind("#set ", 0) != 0) return {};
  return {config::parse_override(text.substr(5, text.find('\n') - 5))};
}

void run(const std::string& text) {
#if SP_FUZZ_TARGET == 1  // scenario files: includes, --set, the whole check of load_scenario (load_cluster with a fabric)
  const fs::path f = as_file(text, "scenario.yaml");
  if (text.rfind("fabric:", 0) == 0 || text.find("\nfabric:") != std::string::npos) {
    load_cluster(f.string(), overrides_of(text), catalog());
  } else {
    load_scenario(f.string(), overrides_of(text), catalog());
  }
#elif SP_FUZZ_TARGET == 2  // platform, hardware and workload files
  const config::ConfigNode n = config::load_string(text, "fuzz.yaml");
  if (n.find("scale_up") && n.find("protocols")) {
    models::parse_platform(n, catalog());
  } else if (n.find("peak")) {
    models::parse_accelerator(n);
  } else {
    models::parse_workload(n);
  }
#elif SP_FUZZ_TARGET == 3  // sweep files
  const fs::path f = as_file(text, "sweep.yaml");
  load_sweep(f.string());
#elif SP_FUZZ_TARGET == 4  // results / predict / power tables
  const config::CsvTable t(text, "fuzz.csv");
  if (t.has_column("energy_kj_per_run")) {
    calibration::read_power_results(t);
  } else {
    calibration::read_mlperf_results(t);
  }
#elif SP_FUZZ_TARGET == 5  // measurement importers: scalepoint-bench CSV, nccl-tests text and JSON, OSU
  calibration::parse_measurements(text, "fuzz.txt");
#else
#error "SP_FUZZ_TARGET must be 1..5"
#endif
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const InputError&) {
  } catch (const ModelError&) {
  }
  return 0;
}
