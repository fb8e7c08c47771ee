// `scalepoint predict`'s table on the terminal and its plot (predict_table.hpp makes the rows).
#pragma once

#include <filesystem>
#include <string>

#include "sim/output/table.hpp"

namespace sp::cli {

/// One line a row: benchmark, accelerator, N, the batch and layout modelled, time to train with
/// p10 and p90 (min); a row that could not be modelled says why.
std::string format_predictions(const output::Table& predictions);

/// Every modelled row's time to train with its p10-p90 interval, log scale, one colour per
/// benchmark; false (no file) where no row was modelled or gnuplot is missing.
bool plot_predictions(const std::filesystem::path& png, const output::Table& predictions);

}  // namespace sp::cli
