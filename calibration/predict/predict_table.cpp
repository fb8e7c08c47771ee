#include "calibration/predict/predict_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "calibration/predict/naive_baseline.hpp"
#include "models/training/layout_search.hpp"
#include "sim/core/first_seen.hpp"
#include "sim/core/parallel_for.hpp"
#include "sim/core/quantile.hpp"

namespace sp::calibration {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
double minutes(Duration d) { return to_seconds(d) / 60.0; }

}  // namespace

output::Table predict_table(const config::CsvTable& input, const SystemModelInputs& inputs,
                            const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<MlperfResult> rows = read_mlperf_results(input);
  name_benchmarks(rows, inputs.catalog);
  // The catalog reads its files on first use: once, here, before the threads share it.
  inputs.catalog.accelerators();
  inputs.catalog.workloads();
  std::vector<SystemPrediction> predicted(rows.size());
  std::mutex lock;
  std::size_t done = 0;
  PredictionCache configurations;  // rows naming the same system search its layout once
  parallel_for(rows.size(), [&](std::size_t i) {
    predicted[i] = predict_system(rows[i], inputs, &configurations);
    const std::lock_guard<std::mutex> g(lock);
    if (progress) progress(++done, rows.size());
  });
  output::Table t;
  for (const std::string& h : input.header()) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < input.rows(); ++i) cells.push_back(input.cell(i, h));
    t.columns.push_back(output::text_column(h, "input column", cells));
  }
  output::Column time{"predicted_time_to_train_min", "min", "expected MLPerf score", false, {}, {}};
  output::Column p10{"p10_min", "min", "10th percentile of the score", false, {}, {}};
  output::Column p90{"p90_min", "min", "90th percentile of the score", false, {}, {}};
  output::Column gbs{"predicted_global_batch", "samples", "global batch modelled", true, {}, {}};
  output::Column slower{"runner_up_slower", "1", "the runner-up's time to train / this one's - 1 (negative where the recipe was kept though the runner-up was faster)", false, {}, {}};
  std::vector<std::string> layout, basis, runner_up, status, message, source;
  for (const SystemPrediction& p : predicted) {
    const bool ok = p.status == "ok";
    time.values.push_back(ok ? minutes(p.estimate.time_to_train) : kNaN);
    p10.values.push_back(ok ? minutes(p.estimate.p10) : kNaN);
    p90.values.push_back(ok ? minutes(p.estimate.p90) : kNaN);
    gbs.values.push_back(static_cast<double>(p.global_batch));
    layout.push_back(ok ? p.estimate.layout.describe() : "-");
    basis.push_back(ok ? p.estimate.layout_basis : "-");
    runner_up.push_back(ok && !p.estimate.runner_up.empty() ? p.estimate.runner_up : "-");
    slower.values.push_back(ok && !p.estimate.runner_up.empty() ? p.estimate.runner_up_slower : kNaN);
    status.push_back(p.status);
    source.push_back(ok ? p.software_source : "-");
    message.push_back(p.message.empty() ? "-" : p.message);
  }
  t.columns.push_back(time);
  t.columns.push_back(p10);
  t.columns.push_back(p90);
  t.columns.push_back(gbs);
  t.columns.push_back(output::text_column("layout", "parallel layout modelled", layout));
  t.columns.push_back(output::text_column("layout_basis", models::kLayoutBasis, basis));
  t.columns.push_back(output::text_column("runner_up", "the next fastest layout of other sizes", runner_up));
  t.columns.push_back(slower);
  t.columns.push_back(output::text_column("software_efficiency_source",
                                         "fitted: the kind's own rows | family: its architecture family's | "
                                         "stack: its software stack's | prior: none seen",
                                         source));
  t.columns.push_back(output::text_column("status", "ok | error | out_of_memory", status));
  t.columns.push_back(output::text_column("message", "why a row has no prediction, or what it did not take as given", message));
  return t;
}

ValidationReport summarise(std::vector<ValidationRow> rows, std::vector<std::string> skipped) {
  ValidationReport rep;
  rep.rows = std::move(rows);
  rep.skipped = std::move(skipped);
  const auto add = [&](const std::string& group, auto keep) {
    std::vector<double> ape, at_logged, convergence_only, baseline;
    int inside = 0;
    for (const auto& r : rep.rows) {
      if (!keep(r)) continue;
      ape.push_back(100 * std::abs(r.error));
      inside += r.inside ? 1 : 0;
      if (!std::isnan(r.baseline_error)) baseline.push_back(100 * std::abs(r.baseline_error));
      if (!std::isnan(r.error_at_logged_convergence)) {
        at_logged.push_back(100 * std::abs(r.error_at_logged_convergence));
        convergence_only.push_back(100 * std::abs((1 + r.error) / (1 + r.error_at_logged_convergence) - 1));
      }
    }
    if (ape.empty()) return;
    rep.summaries.push_back({group, static_cast<int>(ape.size()), quantile(ape, 0.5), quantile(ape, 0.9),
                             *std::max_element(ape.begin(), ape.end()),
                             static_cast<double>(inside) / static_cast<double>(ape.size()),
                             quantile(at_logged, 0.5), quantile(at_logged, 0.9), quantile(convergence_only, 0.5),
                             quantile(convergence_only, 0.9), quantile(baseline, 0.5), quantile(baseline, 0.9)});
  };
  for (const auto& b : first_seen(rep.rows, [](const ValidationRow& r) { return r.row.benchmark; })) add(b, [&](const ValidationRow& r) { return r.row.benchmark == b; });
  add("N<=8", [](const ValidationRow& r) { return r.row.accelerators <= 8; });
  add("N=9-64", [](const ValidationRow& r) { return r.row.accelerators > 8 && r.row.accelerators <= 64; });
  add("N>64", [](const ValidationRow& r) { return r.row.accelerators > 64; });
  add("all", [](const ValidationRow&) { return true; });
  std::vector<std::string> kinds;
  for (const auto& r : rep.rows) {
    if (std::find(kinds.begin(), kinds.end(), r.prediction.kind) == kinds.end()) kinds.push_back(r.prediction.kind);
  }
  std::sort(kinds.begin(), kinds.end());
  for (const auto& k : kinds) add("kind " + k, [&](const ValidationRow& r) { return r.prediction.kind == k; });
  return rep;
}

std::string format_report(const ValidationReport& rep, std::size_t worst) {
  std::string s = fmt::format("{:<26} {:>5} {:>9} {:>7} {:>7} {:>10}   at logged convergence: {:>9} {:>7}"
                              "   convergence alone: {:>7}   naive baseline: {:>9} {:>7}\n",
                              "group", "rows", "median %", "p90 %", "max %", "in p10-p90", "median %", "p90 %", "p90 %",
                              "median %", "p90 %");
  for (const ErrorSummary& e : rep.summaries) {
    s += fmt::format("{:<26} {:>5} {:>9.1f} {:>7.1f} {:>7.1f} {:>10.2f}   {:>32.1f} {:>7.1f}   {:>26.1f}   {:>25.1f} {:>7.1f}\n",
                     e.group, e.rows, e.median_ape, e.p90_ape, e.max_ape, e.coverage, e.median_ape_at_logged,
                     e.p90_ape_at_logged, e.p90_ape_convergence_only, e.median_ape_baseline, e.p90_ape_baseline);
  }
  std::vector<const ValidationRow*> order;
  for (const auto& r : rep.rows) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](auto a, auto b) { return std::abs(a->error) > std::abs(b->error); });
  if (worst > 0 && !order.empty()) s += "worst rows (error; at logged convergence):\n";
  for (std::size_t i = 0; i < std::min(worst, order.size()); ++i) {
    const ValidationRow& r = *order[i];
    s += fmt::format("  {:+6.1f}% {:+6.1f}%  {:<16} {:>5} x {:<26.26} published {:8.3f} predicted {:8.3f} min  {} {}\n",
                     100 * r.error, 100 * r.error_at_logged_convergence, r.row.benchmark, r.row.accelerators,
                     r.row.accelerator, *r.row.time_to_train_min, minutes(r.prediction.estimate.time_to_train),
                     r.row.submitter, r.row.system_name);
  }
  return s;
}

const ErrorSummary& ValidationReport::summary(const std::string& group) const {
  for (const ErrorSummary& s : summaries) {
    if (s.group == group) return s;
  }
  throw std::out_of_range("no summary for '" + group + "'");
}

void compare_with_published(ValidationRow& v) {
  const double pub = *v.row.time_to_train_min;
  const models::TrainingEstimate& e = v.prediction.estimate;
  v.error = minutes(e.time_to_train) / pub - 1;
  v.inside = minutes(e.p10) <= pub && pub <= minutes(e.p90);
  v.error_at_logged_convergence =
      v.prediction.at_logged_convergence ? minutes(*v.prediction.at_logged_convergence) / pub - 1 : kNaN;
}

ValidationReport validate_rows(const std::vector<MlperfResult>& rows, const SystemModelInputs& inputs) {
  std::vector<ValidationRow> out;
  std::vector<std::string> skipped;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MlperfResult& r = rows[i];
    if (!r.time_to_train_min) {
      skipped.push_back(fmt::format("line {}: {} {}{}", r.line, r.benchmark, r.system_name, kNoPublishedTime));
      continue;
    }
    if (r.repeats_an_earlier_row(rows, i)) {
      skipped.push_back(r.left_out_as_a_repeat());
      continue;
    }
    ValidationRow v{r, predict_system(r, inputs), 0, false};
    if (v.prediction.status != "ok") {
      skipped.push_back(fmt::format("line {}: {} {}: {}", r.line, r.benchmark, r.system_name, v.prediction.message));
      continue;
    }
    compare_with_published(v);
    out.push_back(v);
  }
  add_naive_baselines(out, BaselineExclusion::system);
  return summarise(std::move(out), std::move(skipped));
}

output::Table validation_table(const ValidationReport& rep) {
  std::vector<std::string> bench, system, accel, kind, source, layout, basis;
  output::Column n{"accelerators", "count", "N", true, {}, {}};
  output::Column gbs{"global_batch", "samples", "global batch", true, {}, {}};
  output::Column pub{"published_min", "min", "published score", false, {}, {}};
  output::Column pred{"predicted_min", "min", "expected score", false, {}, {}};
  output::Column p10{"p10_min", "min", "", false, {}, {}};
  output::Column p90{"p90_min", "min", "", false, {}, {}};
  output::Column err{"error", "1", "predicted / published - 1", false, {}, {}};
  output::Column inside{"inside_p10_p90", "bool", "published time within [p10, p90]", true, {}, {}};
  output::Column logged{"error_at_logged_convergence", "1",
                        "predicted at the samples the row's runs converged at / published - 1", false, {}, {}};
  output::Column base{"naive_baseline_error", "1", "the naive baseline (naive_baseline.hpp) / published - 1", false, {}, {}};
  for (const auto& r : rep.rows) {
    bench.push_back(r.row.benchmark);
    system.push_back(r.row.submitter + " " + r.row.system_name);
    accel.push_back(r.row.accelerator);
    kind.push_back(r.prediction.kind);
    source.push_back(r.prediction.software_source);
    layout.push_back(r.prediction.estimate.layout.describe());
    basis.push_back(r.prediction.estimate.layout_basis);
    n.values.push_back(r.row.accelerators);
    gbs.values.push_back(static_cast<double>(r.prediction.global_batch));
    pub.values.push_back(*r.row.time_to_train_min);
    pred.values.push_back(minutes(r.prediction.estimate.time_to_train));
    p10.values.push_back(minutes(r.prediction.estimate.p10));
    p90.values.push_back(minutes(r.prediction.estimate.p90));
    err.values.push_back(r.error);
    inside.values.push_back(r.inside ? 1 : 0);
    logged.values.push_back(r.error_at_logged_convergence);
    base.values.push_back(r.baseline_error);
  }
  output::Table t;
  t.columns = {output::text_column("benchmark", "", bench), output::text_column("system", "", system),
               output::text_column("accelerator", "", accel), output::text_column("kind", "catalog kind", kind),
               output::text_column("software_efficiency_source", "fitted | family | stack | prior", source), n, gbs, pub, pred, p10, p90, err, inside, logged,
               base, output::text_column("layout", "", layout), output::text_column("layout_basis", models::kLayoutBasis, basis)};
  return t;
}

namespace {
// The columns a logged phase's row starts with, shared by the step and phase tables: which row of
// the results it belongs to, its N and its samples per accelerator.
struct PhaseRowColumns {
  std::vector<std::string> bench, system, kind;
  output::Column n{"accelerators", "count", "N", true, {}, {}};
  output::Column per{"per_accelerator_batch", "samples", "global batch / N", false, {}, {}};
  void add(const ValidationRow& r) {
    bench.push_back(r.row.benchmark);
    system.push_back(r.row.submitter + " " + r.row.system_name);
    kind.push_back(r.prediction.kind);
    n.values.push_back(r.row.accelerators);
    per.values.push_back(r.prediction.estimate.per_accelerator_batch);
  }
  std::vector<output::Column> columns() const {
    return {output::text_column("benchmark", "", bench), output::text_column("system", "", system),
            output::text_column("kind", "catalog kind", kind), n, per};
  }
};
}  // namespace

output::Table step_table(const ValidationReport& rep) {
  PhaseRowColumns id;
  output::Column logged{"logged_step_ms", "ms", "training step between evaluations, from the result logs", false, {}, {}};
  output::Column model{"model_step_ms", "ms", "the simulated step, stragglers included", false, {}, {}};
  output::Column err{"error", "1", "model / logged - 1", false, {}, {}};
  for (const auto& r : rep.rows) {
    const double step_s = to_seconds(r.prediction.estimate.step.step);
    for (const PhaseObservation& o : r.row.phases) {
      if (o.phase != PhaseObservation::Phase::training_step) continue;
      id.add(r);
      logged.values.push_back(1e3 * o.seconds);
      model.values.push_back(1e3 * step_s);
      err.values.push_back(step_s / o.seconds - 1);
    }
  }
  output::Table t;
  t.columns = id.columns();
  t.columns.insert(t.columns.end(), {logged, model, err});
  return t;
}

output::Table phase_table(const ValidationReport& rep) {
  PhaseRowColumns id;
  std::vector<std::string> phase;
  output::Column runs{"runs", "count", "runs the logged time is the mean of", true, {}, {}};
  output::Column logged{"logged_s", "s", "from the result logs (calibration/data/mlperf/README.md)", false, {}, {}};
  output::Column model{"model_s", "s", "the model's counterpart at the row's logged convergence (else the RCP mean)", false, {}, {}};
  output::Column err{"error", "1", "model / logged - 1", false, {}, {}};
  for (const auto& r : rep.rows) {
    const std::vector<double>& modelled = r.prediction.phase_seconds;
    for (std::size_t k = 0; k < r.row.phases.size() && k < modelled.size(); ++k) {
      const PhaseObservation& o = r.row.phases[k];
      id.add(r);
      phase.push_back(phase_name(o.phase));
      runs.values.push_back(o.runs);
      logged.values.push_back(o.seconds);
      model.values.push_back(modelled[k]);
      err.values.push_back(modelled[k] / o.seconds - 1);
    }
  }
  output::Table t;
  t.columns = id.columns();
  t.columns.insert(t.columns.end(),
                   {output::text_column("phase", "evaluation | evaluation_setup | after_last_evaluation | training_step", phase),
                    runs, logged, model, err});
  return t;
}

output::Table summary_table(const ValidationReport& rep) {
  std::vector<std::string> group;
  output::Column rows{"rows", "count", "", true, {}, {}};
  output::Column med{"median_ape_pct", "%", "median absolute percentage error", false, {}, {}};
  output::Column p90{"p90_ape_pct", "%", "90th percentile", false, {}, {}};
  output::Column mx{"max_ape_pct", "%", "largest", false, {}, {}};
  output::Column cov{"coverage_p10_p90", "1", "share of published times inside [p10, p90]", false, {}, {}};
  output::Column med_logged{"median_ape_at_logged_convergence_pct", "%", "the same, at the rows' logged convergence",
                            false, {}, {}};
  output::Column p90_logged{"p90_ape_at_logged_convergence_pct", "%", "", false, {}, {}};
  output::Column med_conv{"median_ape_convergence_only_pct", "%",
                          "what convergence alone costs: the error of a model exact about the system (ErrorSummary)",
                          false, {}, {}};
  output::Column p90_conv{"p90_ape_convergence_only_pct", "%", "", false, {}, {}};
  output::Column med_base{"median_ape_naive_baseline_pct", "%",
                          "the nearest other published row scaled in N and peak FLOP/s (naive_baseline.hpp)", false, {}, {}};
  output::Column p90_base{"p90_ape_naive_baseline_pct", "%", "", false, {}, {}};
  for (const auto& s : rep.summaries) {
    group.push_back(s.group);
    rows.values.push_back(s.rows);
    med.values.push_back(s.median_ape);
    p90.values.push_back(s.p90_ape);
    mx.values.push_back(s.max_ape);
    cov.values.push_back(s.coverage);
    med_logged.values.push_back(s.median_ape_at_logged);
    p90_logged.values.push_back(s.p90_ape_at_logged);
    med_conv.values.push_back(s.median_ape_convergence_only);
    p90_conv.values.push_back(s.p90_ape_convergence_only);
    med_base.values.push_back(s.median_ape_baseline);
    p90_base.values.push_back(s.p90_ape_baseline);
  }
  output::Table t;
  t.columns = {output::text_column("group", "benchmark, scale or all", group), rows, med, p90, mx, cov, med_logged, p90_logged,
               med_conv, p90_conv, med_base, p90_base};
  return t;
}

}  // namespace sp::calibration
