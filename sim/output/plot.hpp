// Plots through gnuplot (a Debian package the set-up installs). A missing gnuplot is not an
// error: the caller gets false and says that the plot was skipped.
#pragma once

#include <filesystem>
#include <string>

#include "sim/output/table.hpp"

namespace sp::output {

/// Two panels against accelerator count (log axis): time to train (log) and E'. Writes PNG.
bool plot_scaling(const std::filesystem::path& png, const Table& table, const std::string& title);

/// Runs `script` with gnuplot; false when gnuplot is missing or fails.
bool run_gnuplot(const std::string& script, const std::filesystem::path& work_dir);

}  // namespace sp::output
