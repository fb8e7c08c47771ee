#include "calibration/predict/results.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "models/workloads/workload.hpp"
#include "models/network/kinds.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/core/first_seen.hpp"

namespace sp::calibration {

std::string time_to_train_problem(double minutes) {
  if (!(minutes > 0)) return "must be positive";
  // A published score runs minutes to hours (v4.1: 0.12 to 397 min); beyond ten thousand
  // minutes (a week) a unit slipped (seconds for minutes), and the model's times would leave the
  // simulated range somewhere deep in a fit instead of here.
  if (minutes > 10'000) return fmt::format("{:.4g} min is over a week: at most 10000 (minutes, not seconds?)", minutes);
  // Below a hundredth of a minute (0.6 s) no training converges; E' and the fit would divide by it.
  if (minutes < 0.01) return fmt::format("{:.4g} min is under 0.6 s: at least 0.01 (minutes, not hours?)", minutes);
  return "";
}

bool MlperfResult::repeats_an_earlier_row(const std::vector<MlperfResult>& rows, std::size_t self) const {
  const std::size_t colon = same_logs_as.find(':');
  if (colon == std::string::npos) return false;
  const auto round_of_logs = models::mlperf_round(same_logs_as.substr(0, colon));
  const std::string folder = same_logs_as.substr(colon + 1);
  for (std::size_t j = 0; j < self && j < rows.size(); ++j) {
    const MlperfResult& r = rows[j];
    if (r.benchmark == benchmark && round_of_logs && models::mlperf_round(r.round) == round_of_logs && !r.org_folder.empty() &&
        folder == r.org_folder + "/" + r.system_folder) {
      return true;
    }
  }
  return false;
}

bool MlperfResult::boosted(const models::Workload& w) const {
  return clock_boost ? *clock_boost > 0 : nodes == 1 && w.clock_boost_one_node > 0;
}

std::string MlperfResult::left_out_as_a_repeat() const {
  return fmt::format("line {}: {} {} {}: the same runs as an earlier row ({})", line, benchmark, submitter, system_name, same_logs_as);
}

std::vector<MlperfResult> read_mlperf_results(const config::CsvTable& t) {
  std::vector<MlperfResult> out;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    MlperfResult r;
    r.row = i;
    r.line = t.line(i);
    r.benchmark = t.cell(i, "benchmark");
    r.accelerator = t.cell(i, "accelerator");
    if (t.has_column("submitter")) r.submitter = t.cell(i, "submitter");
    if (t.has_column("system_name")) r.system_name = t.cell(i, "system_name");
    if (t.has_column("framework")) r.framework = t.cell(i, "framework");
    if (t.has_column("org_folder")) r.org_folder = t.cell(i, "org_folder");
    if (t.has_column("system_folder")) r.system_folder = t.cell(i, "system_folder");
    if (t.has_column("platform")) r.platform = t.cell(i, "platform");
    if (t.has_column("host_processor")) {
      r.host_processor = t.cell(i, "host_processor");
      if (!r.host_processor.empty() && !models::host_cpu_of_processor(r.host_processor)) {
        warn({t.file(), t.line(i), 0}, "host_processor",
             "'" + r.host_processor + "' names no vendor scalepoint knows (Intel/Xeon, AMD/EPYC, Arm/Grace/Neoverse/Altra): "
             "the platform's host_cpu prices the collectives across nodes");
      }
    }
    if (t.has_column("same_logs_as")) r.same_logs_as = t.cell(i, "same_logs_as");
    if (t.has_column("round")) {
      // It picks the reference convergence only: a round not written as one ("Training 5.0") is
      // said and predicted with the workload file's table, not a reason to refuse the row.
      r.round = t.cell(i, "round");
      if (!r.round.empty() && !models::mlperf_round(r.round)) {
        warn({t.file(), t.line(i), 0}, "round",
             "'" + r.round + "' is not an MLPerf round (MAJOR.MINOR, e.g. 4.1): the workload file's reference convergence is used");
        r.round.clear();
      }
    }
    const auto count = [&](const char* column) {
      const auto v = t.integer(i, column);
      // As everywhere in scalepoint, counts stop at 10^9 (an int, and no machine near it).
      if (!v || *v < 1 || *v > config::kMaxCount) {
        t.fail(i, column, "needs a count between 1 and " + std::to_string(config::kMaxCount));
      }
      return static_cast<int>(*v);
    };
    r.accelerators_per_node = count("accelerators_per_node");
    r.nodes = count("nodes");
    r.accelerators = count("accelerators_total");
    if (static_cast<long long>(r.accelerators_per_node) * r.nodes != r.accelerators) {
      warn({t.file(), t.line(i), 0}, "accelerators_total",
           std::to_string(r.accelerators) + " is not accelerators_per_node x nodes (" +
               std::to_string(r.accelerators_per_node) + " x " + std::to_string(r.nodes) + "); the model uses " +
               std::to_string(r.accelerators));
    }
    if (t.has_column("time_to_train_min")) {
      r.time_to_train_min = t.number(i, "time_to_train_min");
      if (r.time_to_train_min) {
        if (const std::string why = time_to_train_problem(*r.time_to_train_min); !why.empty()) t.fail(i, "time_to_train_min", why);
      }
    }
    r.global_batch = t.integer(i, "global_batch_size");
    if (r.global_batch && (*r.global_batch < 1 || *r.global_batch > config::kMaxCount)) {
      t.fail(i, "global_batch_size", "must be between 1 and " + std::to_string(config::kMaxCount));
    }
    const auto degree = [&](const char* column) -> std::optional<int> {
      if (!t.has_column(column)) return std::nullopt;
      const auto v = t.integer(i, column);
      if (v && (*v < 1 || *v > 65536)) t.fail(i, column, "needs a parallel degree between 1 and 65536, or nothing");
      return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    };
    r.tensor_parallel = degree("tensor_parallel");
    r.context_parallel = degree("context_parallel");
    r.pipeline_parallel = degree("pipeline_parallel");
    if (t.has_column("clock_boost")) {
      const auto v = t.integer(i, "clock_boost");
      if (v && (*v < 0 || *v > models::kMaxClockBoostSetting)) {
        t.fail(i, "clock_boost", fmt::format("needs a boost setting from 0 (none) to {}, or nothing", models::kMaxClockBoostSetting));
      }
      if (v) r.clock_boost = static_cast<int>(*v);
    }
    if (t.has_column("subm_mean_to_converge")) {
      if (const auto c = t.number(i, "subm_mean_to_converge")) {
        if (!(*c > 0)) t.fail(i, "subm_mean_to_converge", "must be positive");
        double factor = 1;
        if (t.has_column("rcp_scaling_factor")) {
          factor = t.number(i, "rcp_scaling_factor").value_or(1.0);
          if (!(factor >= 1)) t.fail(i, "rcp_scaling_factor", "must be at least 1 (MLPerf only scales times up)");
        }
        r.converged = *c * factor;
        r.converged_in_epochs = t.has_column("converge_unit") && t.cell(i, "converge_unit").rfind("epochs", 0) == 0;
      }
    }
    out.push_back(r);
  }
  return out;
}

namespace {
using Phase = PhaseObservation::Phase;
constexpr Phase kPhases[] = {Phase::evaluation, Phase::after_last_evaluation, Phase::training_step,
                             Phase::evaluation_setup};
}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::evaluation: return "evaluation";
    case Phase::after_last_evaluation: return "after_last_evaluation";
    case Phase::training_step: return "training_step";
    case Phase::evaluation_setup: return "evaluation_setup";
  }
  return "?";
}

void attach_phases(std::vector<MlperfResult>& results, const config::CsvTable& t) {
  // A file given as --phases that holds none (a header alone, another table) would silently
  // fit and validate without the logs' phases.
  for (const char* column : {"benchmark", "org_folder", "system_folder", "phase", "seconds"}) {
    if (!t.has_column(column)) throw InputError({t.file(), 1, 0}, column, "missing column");
  }
  if (t.rows() == 0) throw InputError({t.file(), 1, 0}, "", "has no phase rows, only a header");
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string& name = t.cell(i, "phase");
    const auto* found = std::find_if(std::begin(kPhases), std::end(kPhases), [&](Phase p) { return name == phase_name(p); });
    if (found == std::end(kPhases)) {
      std::string names;
      for (Phase p : kPhases) names += std::string(names.empty() ? "" : ", ") + phase_name(p);
      t.fail(i, "phase", "'" + name + "' is not a phase (" + names + ")");
    }
    const Phase phase = *found;
    const auto seconds = t.number(i, "seconds");
    if (!seconds || !(*seconds > 0)) t.fail(i, "seconds", "needs a positive time in seconds");
    // A step, an evaluation or a set-up of more than a day is a unit slip (v4.1: 9 ms to 64 s).
    if (*seconds > 86'400) t.fail(i, "seconds", fmt::format("{:.4g} s is over a day: at most 86400 (seconds, not ms?)", *seconds));
    const auto r = std::find_if(results.begin(), results.end(), [&](const MlperfResult& m) {
      return m.benchmark == t.cell(i, "benchmark") && m.org_folder == t.cell(i, "org_folder") &&
             m.system_folder == t.cell(i, "system_folder");
    });
    if (r == results.end()) {
      t.fail(i, "system_folder",
             "no result row has benchmark '" + t.cell(i, "benchmark") + "', org_folder '" + t.cell(i, "org_folder") +
                 "' and system_folder '" + t.cell(i, "system_folder") + "'");
    }
    auto seen = std::find_if(r->phases.begin(), r->phases.end(), [&](const auto& p) { return p.phase == phase; });
    if (seen == r->phases.end()) seen = r->phases.insert(r->phases.end(), PhaseObservation{phase, 0, 0, t.line(i)});
    // A running mean over the runs read.
    seen->runs += 1;
    seen->seconds += (*seconds - seen->seconds) / seen->runs;
  }
}

void name_benchmarks(std::vector<MlperfResult>& results, const models::Catalog& catalog) {
  for (MlperfResult& r : results) r.benchmark = catalog.benchmark_name(r.benchmark);
}

void require_times(const std::vector<MlperfResult>& results, const std::string& file) {
  for (const auto& r : results) {
    if (r.time_to_train_min) return;
  }
  throw InputError({file, 0, 0}, "time_to_train_min", "no row has a time to train: nothing to compare with or fit",
                   "predict --systems models rows without times");
}

std::vector<std::string> benchmarks(const std::vector<MlperfResult>& results) {
  return first_seen(results, &MlperfResult::benchmark);
}

}  // namespace sp::calibration
