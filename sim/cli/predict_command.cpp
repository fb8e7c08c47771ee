#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "calibration/mlperf/calibrate.hpp"
#include "calibration/predict/predict_table.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/predict_report.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/core/first_seen.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {

// One colour per benchmark, in the order the benchmarks first appear, in every plot.
const char* colour(std::size_t benchmark) { return output::series_colour(benchmark); }

// Predicted against published, log-log, one colour per benchmark, with the diagonal.
bool plot_validation(const std::filesystem::path& png, const calibration::ValidationReport& rep,
                     const std::string& title) {
  std::vector<std::string> benchmarks;
  for (const auto& r : rep.rows) benchmarks.push_back(r.row.benchmark);
  const std::vector<std::string> names = first_seen(benchmarks);
  std::string data, plots = "x title 'equal' lc rgb '#888888'";
  for (std::size_t b = 0; b < names.size(); ++b) {
    data += fmt::format("$b{} << EOD\n", b);
    for (const auto& r : rep.rows) {
      if (r.row.benchmark == names[b]) {
        data += fmt::format("{} {} {} {}\n", *r.row.time_to_train_min, to_seconds(r.prediction.estimate.time_to_train) / 60,
                            to_seconds(r.prediction.estimate.p10) / 60, to_seconds(r.prediction.estimate.p90) / 60);
      }
    }
    data += "EOD\n";
    plots += fmt::format(", $b{} using 1:2:3:4 title {} with yerrorbars pt 7 ps 1.1 lc rgb '{}'", b,
                         output::gnuplot_text(names[b]), colour(b));
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 760,640 font 'sans,11'\nset output {}\n{}"
      "set logscale xy\nset grid\nset key top left\nset xrange [0.05:600]\nset yrange [0.05:600]\n"
      "set xlabel 'published time to train (min)'\nset ylabel 'predicted time to train (min), p10-p90'\n"
      "set title {}\nplot {}\n",
      output::gnuplot_text(png.string()), data, output::gnuplot_text(title), plots);
  return output::run_gnuplot(script, png.parent_path());
}

// The simulated step against the logged one by samples per accelerator, one colour per
// benchmark: the step's error where the totals hide it (output::Table from step_table).
bool plot_steps(const std::filesystem::path& png, const output::Table& steps) {
  const auto& bench = steps.column("benchmark").text;
  const std::vector<std::string> names = first_seen(bench);
  std::string data, plots = "0 notitle lc rgb '#888888'";
  for (std::size_t b = 0; b < names.size(); ++b) {
    data += fmt::format("$b{} << EOD\n", b);
    for (std::size_t i = 0; i < steps.rows(); ++i) {
      if (bench[i] != names[b]) continue;
      const std::string& kind = steps.column("kind").text[i];
      // A data line's text is a double-quoted field: keep the kind's name to characters that cannot end it.
      std::string short_kind = kind.substr(0, kind.find('-'));
      std::erase_if(short_kind, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.'; });
      data += fmt::format("{} {} \"{} {}\"\n", steps.column("per_accelerator_batch").values[i],
                          100 * steps.column("error").values[i], steps.column("accelerators").values[i], short_kind);
    }
    data += "EOD\n";
    plots += fmt::format(", $b{} using 1:2 title {} with points pt 7 ps 1.3 lc rgb '{}'"
                         ", $b{} using 1:2:3 notitle with labels offset 0,{} font 'sans,8'",
                         b, output::gnuplot_text(names[b]), colour(b), b, b % 2 == 0 ? 1 : -1);
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 760,560 font 'sans,11'\nset output {}\n{}"
      "set logscale x\nset grid\nset key outside bottom center horizontal\nset xrange [0.5:300]\n"
      "set offsets 0, 0, graph 0.1, graph 0.05\nset bmargin 5\n"
      "set xlabel 'samples per accelerator per step'\nset ylabel 'simulated / logged training step - 1 (%)'\n"
      "set title 'training step against the MLPerf v4.1 result logs'\nplot {}\n",
      output::gnuplot_text(png.string()), data, plots);
  return output::run_gnuplot(script, png.parent_path());
}

// Every logged phase against the model's, by N: one colour per benchmark, one point type per
// phase (output::Table from phase_table).
bool plot_phases(const std::filesystem::path& png, const output::Table& phases) {
  const auto& bench = phases.column("benchmark").text;
  const auto& phase = phases.column("phase").text;
  const std::vector<std::string> names = first_seen(bench);
  const std::vector<std::string> kinds = first_seen(phase);
  std::string data, plots = "0 notitle lc rgb '#888888'";
  int series = 0;
  for (std::size_t b = 0; b < names.size(); ++b) {
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      std::string points;
      for (std::size_t i = 0; i < phases.rows(); ++i) {
        if (bench[i] != names[b] || phase[i] != kinds[k]) continue;
        points += fmt::format("{} {}\n", phases.column("accelerators").values[i], 100 * phases.column("error").values[i]);
      }
      if (points.empty()) continue;
      data += fmt::format("$s{} << EOD\n{}EOD\n", series, points);
      plots += fmt::format(", $s{} using 1:2 title {} with points pt {} ps 1.3 lc rgb '{}'", series,
                           output::gnuplot_text(names[b] + " " + kinds[k]), 5 + 2 * static_cast<int>(k), colour(b));
      ++series;
    }
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 820,700 font 'sans,11'\nset output {}\n{}"
      "set logscale x\nset grid\nset key outside bottom center horizontal maxcols 3 font 'sans,9'\nset xrange [2:8192]\n"
      "set xlabel 'accelerators'\nset ylabel 'model / logged - 1 (%)'\n"
      "set title 'phases against the MLPerf v4.1 result logs'\nplot {}\n",
      output::gnuplot_text(png.string()), data, plots);
  return output::run_gnuplot(script, png.parent_path());
}

calibration::SystemModelInputs inputs(const models::Catalog& catalog, const calibration::PlatformCatalog& platforms,
                                      int samples, std::uint64_t seed) {
  return calibration::SystemModelInputs{catalog, platforms, models::default_calibration(), samples, seed};
}

}  // namespace

int predict_command(const PredictOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const calibration::PlatformCatalog platforms(catalog);
  const config::CsvTable input = config::CsvTable::read_rows(o.systems);
  // A long table says how far it is (stderr, at most a few times a second).
  Progress progress(static_cast<int>(input.rows()), 0, input.rows() < 200);
  const output::Table t = calibration::predict_table(input, inputs(catalog, platforms, o.samples, o.seed),
                                                     [&](std::size_t done, std::size_t) { progress.update(static_cast<int>(done)); });
  progress.finish(static_cast<int>(input.rows()));
  std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), output::to_csv(t));
  // The plot beside the CSV, its name the CSV's with .png (predicted.csv -> predicted.png).
  const std::string png = std::filesystem::path(out.filename()).replace_extension(".png").string();
  const bool plotted = png != out.filename().string() && plot_predictions(files.stage(png), t);
  if (!plotted) files.drop(png);
  files.commit();
  int ok = 0;
  for (const auto& s : t.column("status").text) ok += s == "ok" ? 1 : 0;
  std::printf("%s", format_predictions(t).c_str());
  std::printf("predicted %d of %zu rows; wrote %s%s\n", ok, t.rows(), o.out.c_str(),
              plotted ? (" and " + (out.parent_path() / png).string()).c_str() : "");
  if (!plotted && ok > 0) std::fprintf(stderr, "scalepoint: warning: gnuplot not found or failed; %s not written\n", png.c_str());
  return 0;
}

void warn_unmodelled(const std::vector<std::string>& skipped, const std::string& data_file) {
  for (const std::string& s : skipped) {
    if (calibration::skipped_for_want_of_a_time(s)) continue;
    warn({data_file, 0, 0}, "", "left out, the model cannot predict it: " + s);
  }
}

int validate_command(const ValidateOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const calibration::PlatformCatalog platforms(catalog);
  auto rows = calibration::read_mlperf_results(config::CsvTable::read_rows(o.data));
  calibration::require_times(rows, o.data);
  if (!o.phases.empty()) calibration::attach_phases(rows, config::CsvTable::read(o.phases));
  calibration::name_benchmarks(rows, catalog);
  if (o.scaling) return validate_scaling_command(rows, catalog, platforms, o.out_dir);
  calibration::ValidationReport rep;
  if (o.loo || o.loko) {
    calibration::CalibrateOptions options{o.loo, o.loko, o.samples, o.seed, {}};
    options.progress = [](const std::string& s) { std::fprintf(stderr, "\r\033[K%s", s.c_str()); };
    const calibration::FitResult fit = calibration::calibrate_mlperf(rows, catalog, platforms, options);
    std::fprintf(stderr, "\r\033[K");
    rep = o.loo ? fit.leave_system_out : fit.leave_kind_out;
  } else {
    rep = calibration::validate_rows(rows, inputs(catalog, platforms, o.samples, o.seed));
  }
  const std::string stem = o.loo ? "mlperf_loo" : o.loko ? "mlperf_loko" : "mlperf";

  const std::filesystem::path dir = o.out_dir.empty() ? std::string("results/checks") : o.out_dir;
  output::StagedFiles files(dir);
  files.write(stem + "_rows.csv", output::to_csv(calibration::validation_table(rep)));
  files.write(stem + "_summary.csv", output::to_csv(calibration::summary_table(rep)));
  const output::Table steps = calibration::step_table(rep);
  bool steps_plotted = false;
  if (steps.rows() > 0) {
    files.write(stem + "_steps.csv", output::to_csv(steps));
    steps_plotted = plot_steps(files.stage(stem + "_steps.png"), steps);
    if (!steps_plotted) files.drop(stem + "_steps.png");
  }
  const output::Table phases = calibration::phase_table(rep);
  bool phases_plotted = false;
  if (phases.rows() > 0) {
    files.write(stem + "_phases.csv", output::to_csv(phases));
    phases_plotted = plot_phases(files.stage(stem + "_phases.png"), phases);
    if (!phases_plotted) files.drop(stem + "_phases.png");
  }
  const bool plotted = plot_validation(files.stage(stem + ".png"), rep,
                                      o.loo    ? "scalepoint against MLPerf Training, each system left out of the fit"
                                      : o.loko ? "scalepoint against MLPerf Training, each accelerator kind left out"
                                               : "scalepoint against MLPerf Training (calibrated on all rows)");
  if (!plotted) files.drop(stem + ".png");
  files.commit();

  std::printf("%s", calibration::format_report(rep, 8).c_str());
  if (steps.rows() > 0) {
    std::printf("\ntraining steps against the logs (ms):\n");
    for (std::size_t i = 0; i < steps.rows(); ++i) {
      std::printf("  %-16s %5.0f x %-22s %6.1f per accelerator  logged %8.2f model %8.2f  %+6.1f%%  %s\n",
                  steps.column("benchmark").text[i].c_str(), steps.column("accelerators").values[i],
                  steps.column("kind").text[i].c_str(), steps.column("per_accelerator_batch").values[i],
                  steps.column("logged_step_ms").values[i], steps.column("model_step_ms").values[i],
                  100 * steps.column("error").values[i], steps.column("system").text[i].c_str());
    }
  }
  for (const auto& s : rep.skipped) std::printf("skipped %s\n", s.c_str());
  warn_unmodelled(rep.skipped, o.data);
  std::string wrote = stem + "_rows.csv," + stem + "_summary.csv";
  if (steps.rows() > 0) wrote += "," + stem + "_steps.csv";
  if (steps_plotted) wrote += "," + stem + "_steps.png";
  if (phases.rows() > 0) wrote += "," + stem + "_phases.csv";
  if (phases_plotted) wrote += "," + stem + "_phases.png";
  if (plotted) wrote += "," + stem + ".png";
  std::printf("wrote %s/{%s}\n", dir.string().c_str(), wrote.c_str());
  return 0;
}

}  // namespace sp::cli
