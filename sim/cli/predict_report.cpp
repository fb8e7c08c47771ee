// What `scalepoint predict` shows beside its CSV: the predictions as a table on the terminal and
// as a plot, each row's time to train with its p10-p90 interval (log scale), one colour per
// benchmark, so a planned system's answer is read without opening the CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "sim/cli/predict_report.hpp"
#include "sim/core/first_seen.hpp"
#include "sim/output/plot.hpp"

namespace sp::cli {

namespace {

// A cell of an input column the table carried through ("" where the input had no such column).
std::string input_cell(const output::Table& t, const std::string& name, std::size_t i) {
  for (const auto& c : t.columns) {
    if (c.name == name && c.is_text()) return c.text[i];
  }
  return "";
}

// The accelerator count the row gives (read_mlperf_results requires accelerators_total).
std::string accelerators(const output::Table& t, std::size_t i) { return input_cell(t, "accelerators_total", i); }

bool ok(const output::Table& t, std::size_t i) { return t.column("status").text[i] == "ok"; }

}  // namespace

std::string format_predictions(const output::Table& t) {
  std::string out = fmt::format("{:<17} {:<34} {:>6} {:>6}  {:<34} {:>9} {:>9} {:>9}\n", "benchmark", "accelerator", "N",
                                "GBS", "layout", "TTT min", "p10", "p90");
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string head = fmt::format("{:<17} {:<34} {:>6}", input_cell(t, "benchmark", i),
                                         input_cell(t, "accelerator", i), accelerators(t, i));
    if (!ok(t, i)) {
      out += fmt::format("{}  {}: {}\n", head, t.column("status").text[i], t.column("message").text[i]);
      continue;
    }
    out += fmt::format("{} {:>6.0f}  {:<34} {:>9.3f} {:>9.3f} {:>9.3f}\n", head,
                       t.column("predicted_global_batch").values[i], t.column("layout").text[i],
                       t.column("predicted_time_to_train_min").values[i], t.column("p10_min").values[i],
                       t.column("p90_min").values[i]);
  }
  return out;
}

bool plot_predictions(const std::filesystem::path& png, const output::Table& t) {
  std::vector<std::string> benchmarks;
  for (std::size_t i = 0; i < t.rows(); ++i) benchmarks.push_back(input_cell(t, "benchmark", i));
  const std::vector<std::string> names = first_seen(benchmarks);
  std::string data, plots, tics;
  std::size_t shown = 0;
  double low = INFINITY, high = 0;
  for (std::size_t b = 0; b < names.size(); ++b) {
    std::string points;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      if (benchmarks[i] != names[b] || !ok(t, i)) continue;
      const double p10 = t.column("p10_min").values[i], p90 = t.column("p90_min").values[i];
      points += fmt::format("{} {} {} {}\n", i + 1, t.column("predicted_time_to_train_min").values[i], p10, p90);
      low = std::min(low, p10);
      high = std::max(high, p90);
      ++shown;
    }
    if (points.empty()) continue;
    data += fmt::format("$b{} << EOD\n{}EOD\n", b, points);
    plots += fmt::format("{}$b{} using 1:2:3:4 title {} with yerrorbars pt 7 ps 1.3 lc rgb '{}'", plots.empty() ? "" : ", ",
                         b, output::gnuplot_text(names[b]), output::series_colour(b));
  }
  if (shown == 0) return false;  // nothing could be modelled: no plot
  // A label a row while they can be read; past that the rows are numbered as in the CSV.
  constexpr std::size_t kLabelledRows = 60;
  for (std::size_t i = 0; i < t.rows() && t.rows() <= kLabelledRows; ++i) {
    const std::string label = accelerators(t, i) + " " + models::canonical_accelerator_name(input_cell(t, "accelerator", i), false);
    tics += fmt::format("{}{} {}", i == 0 ? "" : ", ", output::gnuplot_text(label), i + 1);
  }
  // 1-2-5 tics over the range: a log axis of less than a decade would otherwise show one label.
  std::string yticks;
  for (double decade = std::pow(10.0, std::floor(std::log10(low / 1.5))); decade <= high * 1.5; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * decade < low / 1.5 || m * decade > high * 1.5) continue;
      yticks += fmt::format("{}{:g}", yticks.empty() ? "" : ", ", m * decade);
    }
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size {},560 font 'sans,11'\nset output {}\n{}"
      "set logscale y\nset grid ytics\nset key outside bottom center horizontal\nset bmargin 7\n"
      "set xrange [0.5:{}]\nset yrange [{}:{}]\nset ytics ({})\n{}"
      "set ylabel 'predicted time to train (min), p10-p90'\nset title 'scalepoint predict'\nplot {}\n",
      std::clamp<std::size_t>(60 * t.rows() + 200, 640, 1600), output::gnuplot_text(png.string()), data, t.rows() + 0.5,
      low / 1.5, high * 1.5, yticks,
      tics.empty() ? std::string("set xlabel 'row of the input'\n") : "set xtics rotate by 30 right (" + tics + ")\n", plots);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace sp::cli
