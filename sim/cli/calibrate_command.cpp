#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "calibration/mlperf/calibrate.hpp"
#include "calibration/mlperf/power.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/sha256.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {
void print(const char* title, const calibration::ValidationReport& rep) {
  std::printf("%s\n%s", title, calibration::format_report(rep, 10).c_str());
}
}  // namespace

int calibrate_mlperf_command(const CalibrateOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const calibration::PlatformCatalog platforms(catalog);
  output::refuse_output_over_input(o.out, {o.data, o.phases});
  const std::string text = config::read_text_file(o.data);
  auto rows = calibration::read_mlperf_results(config::CsvTable(text, o.data));
  calibration::require_times(rows, o.data);
  const std::string phases_text = o.phases.empty() ? std::string() : config::read_text_file(o.phases);
  if (!o.phases.empty()) calibration::attach_phases(rows, config::CsvTable(phases_text, o.phases));
  calibration::name_benchmarks(rows, catalog);
  calibration::CalibrateOptions options{o.loo, o.loko, 100, 1, {}};
  options.progress = [](const std::string& s) { std::fprintf(stderr, "\r\033[K%s", s.c_str()); };
  const calibration::FitResult fit = calibration::calibrate_mlperf(rows, catalog, platforms, options);
  if (o.loo || o.loko) std::fprintf(stderr, "\r\033[K");
  if (fit.rows_used < 2 * fit.parameter_names.size()) {
    warn({o.data, 0, 0}, "",
         std::to_string(fit.rows_used) + " rows for " + std::to_string(fit.parameter_names.size()) +
             " parameters: the fit rests on its priors, and the model error written is not an estimate "
             "(calibrate on more systems, with --loo)");
  }

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string command = "build/scalepoint calibrate mlperf --data " + o.data +
                              (o.phases.empty() ? "" : " --phases " + o.phases) + " --out " + o.out +
                              (o.loo ? " --loo" : "") + (o.loko ? " --loko" : "");
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), calibration::calibration_yaml(fit, o.data, sha256_hex(text), command, date, o.phases,
                                                                           o.phases.empty() ? "" : sha256_hex(phases_text)));
  files.commit();

  std::printf("fitted %zu parameters on %zu rows in %d iterations (%s)\n", fit.parameter_names.size(), fit.rows_used,
              fit.iterations, fit.converged ? "converged" : "not converged");
  for (std::size_t k = 0; k < fit.parameter_names.size(); ++k) {
    std::printf("  %-40s %9.4f +- %.4f (transformed)\n", fit.parameter_names[k].c_str(), fit.parameters[static_cast<Eigen::Index>(k)],
                fit.sds[static_cast<Eigen::Index>(k)]);
  }
  for (const auto& [name, c] : fit.calibration.workloads) {
    std::printf("  %-18s software_efficiency %.3f (log sd %.3f)  model_error %.3f\n", name.c_str(),
                c.software_efficiency, c.log_sd, c.model_error);
  }
  print("in sample:", fit.in_sample);
  warn_unmodelled(fit.in_sample.skipped, o.data);
  if (o.loo) print("leave one system out:", fit.leave_system_out);
  if (o.loko) print("leave one accelerator kind out:", fit.leave_kind_out);
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

int calibrate_power_command(const CalibratePowerOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  const calibration::PlatformCatalog platforms(catalog);
  output::refuse_output_over_input(o.out, {o.data});
  const std::string text = config::read_text_file(o.data);
  const auto rows = calibration::read_power_results(config::CsvTable(text, o.data));
  // A row the model cannot name is the file's fault, at its line: not "cannot simulate".
  for (const calibration::PowerResult& r : rows) {
    if (!catalog.find_workload(r.system.benchmark)) {
      throw InputError({o.data, r.system.line, 0}, "benchmark", "unknown benchmark '" + r.system.benchmark + "'",
                       "valid: the benchmarks of models/workloads (build/scalepoint list workloads)");
    }
    if (!catalog.find_accelerator(r.system.accelerator)) {
      throw InputError({o.data, r.system.line, 0}, "accelerator", "unknown accelerator '" + r.system.accelerator + "'",
                       "valid: the names and aliases of models/hardware (build/scalepoint list accelerators)");
    }
  }
  const calibration::SystemModelInputs inputs{catalog, platforms, models::default_calibration(), 0, 1};
  const calibration::PowerFit fit = calibration::fit_power(rows, inputs, models::PowerCalibration{});
  const std::string command = "build/scalepoint calibrate power --data " + o.data + " --out " + o.out;
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), calibration::power_yaml(fit, o.data, sha256_hex(text), command));
  files.commit();
  std::printf("compute_fraction %.4f%s on %zu row(s)\n", fit.calibration.compute_fraction,
              fit.at_bound ? " (at its physical bound: a mechanism is missing)" : "", fit.rows.size());
  for (const auto& f : fit.rows) {
    std::printf("  %-36.36s %5d x %-16.16s busy %.2f  power %6.0f W vs %6.0f (%+.1f%%)  energy %8.0f kJ vs %8.0f (%+.1f%%; time %+.1f%%)\n",
                (f.row.system.submitter + " " + f.row.system.system_name).c_str(), f.row.system.accelerators,
                f.prediction.kind.c_str(), f.busy_share, f.predicted_power_w, f.row.power_w, 100 * f.power_error,
                f.predicted_energy_kj, f.row.energy_kj, 100 * f.energy_error, 100 * f.time_error);
  }
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace sp::cli
