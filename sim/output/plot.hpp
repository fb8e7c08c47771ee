// Plots through gnuplot (a Debian package the set-up installs). A missing gnuplot is not an
// error: the caller gets false and says that the plot was skipped.
#pragma once

#include <filesystem>
#include <string>

#include "sim/output/table.hpp"

namespace sp::output {

/// Two panels against accelerator count (log axis): time to train (log) and E'. Writes PNG.
bool plot_scaling(const std::filesystem::path& png, const Table& table, const std::string& title);

/// `text` as a gnuplot string literal, to be put in a script as it is (with its quotes): single
/// quotes (no escapes, no backquote command substitution), a quote doubled, control characters
/// (a newline would end the command) as spaces. Every label, title or path that comes from the
/// input goes through it: a sweep label "a'; system '...'" would otherwise run a command.
std::string gnuplot_text(const std::string& text);

/// The colour of series i in every plot (matplotlib's ten, in order; cycles after ten).
const char* series_colour(std::size_t i);

/// Runs `script` with gnuplot; false when gnuplot is missing or fails.
bool run_gnuplot(const std::string& script, const std::filesystem::path& work_dir);

}  // namespace sp::output
