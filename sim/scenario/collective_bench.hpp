// `scalepoint collective`: one collective over a range of sizes on a platform, printed in the
// layout of nccl-tests so it can be set beside a real run; and the validation of the model
// against published nccl-tests measurements (calibration/data/nccl_published.csv).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/collective/fidelity.hpp"
#include "models/network/platform.hpp"
#include "sim/core/error.hpp"
#include "sim/output/table.hpp"

namespace sp {

/// A platform by file path, or by name in scenarios/platforms ("dgx_h100"); `where` and `key`
/// name the input that gave the name (the --platform argument, or a file's row and column).
models::Platform load_platform(const std::string& name_or_file, const models::Catalog& catalog,
                               const SourceLocation& where = {"--platform", 0, 0}, const std::string& key = "");
/// The file behind a platform name (scenarios/platforms/NAME.yaml) or path; InputError at
/// `where` when none.
std::filesystem::path find_platform_file(const std::string& name_or_file,
                                         const SourceLocation& where = {"--platform", 0, 0},
                                         const std::string& key = "");

/// "8B:8GiB" with a step factor (nccl-tests -b/-e/-f), or a single size "64MiB".
std::vector<Bytes> size_range(const std::string& spec, double factor);

struct CollectiveRow {
  Bytes size;
  Duration time;
  double algbw_gbs = 0;  // size / time, GB/s
  double busbw_gbs = 0;  // algbw x bus_factor
  models::Algorithm algorithm = models::Algorithm::ring;
  models::Protocol protocol = models::Protocol::simple;
};

/// `progress(done)` after each size, where given (the chunk fidelity takes seconds a size).
std::vector<CollectiveRow> collective_sweep(const models::Platform& platform, models::CollectiveOp op, int ranks,
                                            const std::vector<Bytes>& sizes, const models::CollectiveChoice& choice,
                                            models::Fidelity fidelity = models::Fidelity::analytic,
                                            const std::function<void(int done)>& progress = {});

/// nccl-tests' table: size, count, type, redop, root, time (us), algbw and busbw (GB/s), and
/// the algorithm/protocol the model chose.
std::string nccl_tests_table(const std::vector<CollectiveRow>& rows, models::CollectiveOp op);

/// Simulated against published: one row per measurement, with the relative time error and the
/// bound it must meet (10 % from 64 MiB up, 25 % below).
output::Table validate_collectives(const std::string& published_csv, const models::Catalog& catalog);

}  // namespace sp
