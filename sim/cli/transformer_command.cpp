// `scalepoint validate --transformer FILE`: published transformer iteration times against the
// simulated step (calibration/transformer/transformer_validation.hpp), a table and a plot.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <filesystem>

#include <fmt/format.h>

#include "calibration/transformer/transformer_validation.hpp"
#include "sim/cli/commands.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/collective_bench.hpp"

namespace sp::cli {

namespace {

output::Table runs_table(const std::vector<calibration::TransformerRun>& runs) {
  std::vector<std::string> model, layout, source;
  output::Column n = output::number_column("accelerators", "count", "N", true);
  output::Column measured = output::number_column("measured_iteration_s", "s", "published time of one iteration");
  output::Column predicted = output::number_column("predicted_iteration_s", "s", "the simulated step");
  output::Column error = output::number_column("error", "1", "predicted / measured - 1");
  output::Column compute = output::number_column("compute_s", "s", "forward + backward compute (recompute included) per step, one accelerator");
  output::Column bubble = output::number_column("bubble_s", "s", "pipeline fill and drain per step");
  output::Column exposed = output::number_column("exposed_comm_s", "s", "communication compute waited for per step");
  output::Column memory = output::number_column("memory_per_accelerator_gb", "GB", "the model's estimate of what one accelerator holds");
  output::Column states = output::number_column("model_memory_gb", "GB", "of which weights, gradients, optimizer states and activations (no reserve)");
  output::Column published = output::number_column("published_memory_gb", "GB", "the same as published (empty: not published)");
  output::Column memory_error = output::number_column("memory_error", "1", "model_memory / published_memory - 1");
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& r : runs) {
    model.push_back(r.model);
    layout.push_back(r.layout);
    source.push_back(r.source);
    n.values.push_back(r.accelerators);
    measured.values.push_back(r.measured_s);
    predicted.values.push_back(r.predicted_s);
    error.values.push_back(r.error());
    compute.values.push_back(to_seconds(r.step.forward + r.step.backward));
    bubble.values.push_back(to_seconds(r.step.bubble));
    exposed.values.push_back(to_seconds(r.step.exposed_communication));
    memory.values.push_back(r.memory_gb);
    states.values.push_back(r.states_activations_gb);
    published.values.push_back(r.published_memory_gb > 0 ? r.published_memory_gb : nan);
    memory_error.values.push_back(r.published_memory_gb > 0 ? r.memory_error() : nan);
  }
  output::Table t;
  t.columns.push_back(output::text_column("model", "the published model", model));
  t.columns.push_back(output::text_column("layout", "parallel layout as published", layout));
  for (auto* c : {&n, &measured, &predicted, &error, &compute, &bubble, &exposed, &memory, &states, &published, &memory_error}) {
    t.columns.push_back(*c);
  }
  t.columns.push_back(output::text_column("source", "where the measured time is published", source));
  return t;
}

bool plot_runs(const std::filesystem::path& png, const std::vector<calibration::TransformerRun>& runs) {
  std::string data;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // A label in a data block is one word in double quotes: only letters, digits and + - / . kept.
    std::string label = runs[i].model + (runs[i].layout.find("recompute=full") != std::string::npos ? "/full" : "/sel+SP");
    std::erase_if(label, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("+-/.", c); });
    data += fmt::format("{} {} {} \"{}\"\n", i, runs[i].measured_s, runs[i].predicted_s, label);
  }
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 900,460 font 'sans,11'\nset output {}\n$d << EOD\n{}EOD\n"
      "set title 'Published iteration time against the simulated step'\nset style data histograms\n"
      "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset logscale y\nset grid y\n"
      "set ylabel 'iteration time (s)'\nset xtics rotate by -30\n"
      "plot $d using 2:xtic(4) title 'measured' lc rgb '#7f7f7f', '' using 3 title 'scalepoint' lc rgb '#1f77b4'\n",
      output::gnuplot_text(png.string()), data);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int validate_transformer_command(const ValidateOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const models::Platform platform = load_platform(o.platform, catalog);
  const auto runs = calibration::validate_transformers(config::CsvTable::read_rows(o.transformer), platform, catalog);
  double sum = 0, worst = 0, memory_worst = 0;
  for (const auto& r : runs) {
    sum += std::fabs(r.error());
    worst = std::max(worst, std::fabs(r.error()));
    if (r.published_memory_gb > 0) memory_worst = std::max(memory_worst, std::fabs(r.memory_error()));
  }
  const double mean = runs.empty() ? 0 : sum / static_cast<double>(runs.size());
  const std::filesystem::path dir = o.out_dir.empty() ? std::string("results/checks") : o.out_dir;
  output::StagedFiles files(dir);
  files.write("transformer_rows.csv", output::to_csv(runs_table(runs)));
  files.write("transformer_summary.csv",
              fmt::format("rows,mean_abs_error,max_abs_error,max_abs_memory_error,platform\n{},{},{},{},{}\n", runs.size(),
                          mean, worst, memory_worst, output::csv_field(platform.name)));
  const bool plotted = plot_runs(files.stage("transformer.png"), runs);
  if (!plotted) files.drop("transformer.png");
  files.commit();
  for (const auto& r : runs) {
    std::printf("%-5s %-44s N=%-4d measured %7.2f s  scalepoint %7.2f s  %+6.1f %%  %5.1f GB%s\n", r.model.c_str(),
                r.layout.c_str(), r.accelerators, r.measured_s, r.predicted_s, 100 * r.error(), r.memory_gb,
                r.fits ? "" : " (does not fit)");
  }
  std::printf("%zu runs on %s: mean |error| %.1f %%, max %.1f %%; memory where published within %.1f %%\nwrote %s/{transformer_rows.csv,transformer_summary.csv%s}\n",
              runs.size(), platform.name.c_str(), 100 * mean, 100 * worst, 100 * memory_worst, dir.string().c_str(),
              plotted ? ",transformer.png" : "");
  return 0;
}

}  // namespace sp::cli
