#include "sim/scenario/scaling_table.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "models/training/layout_search.hpp"

namespace sp {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ColumnDef {
  const char* name;
  const char* unit;
  const char* description;
  bool integer;
  bool needs_ok;  // meaningless (NaN) when the point did not fit
  std::function<double(const ScalingPoint&)> value;
};

double s(Duration d) { return to_seconds(d); }
constexpr double kJoulesPerKwh = 3.6e6;
/// An energy figure, NaN where the model has none (no TDP for the accelerator).
double kwh(const ScalingPoint& p, Joules j) { return p.energy.ok ? j.value() / kJoulesPerKwh : kNaN; }
double minutes(Duration d) { return to_seconds(d) / 60.0; }

const std::vector<ColumnDef>& column_defs() {
  using P = const ScalingPoint&;
  static const std::vector<ColumnDef> defs = {
      {"accelerators", "count", "accelerators N", true, false, [](P p) { return p.estimate.accelerators; }},
      {"nodes", "count", "nodes", true, false, [](P p) { return p.estimate.nodes; }},
      {"global_batch", "samples", "global batch size", true, false,
       [](P p) { return static_cast<double>(p.estimate.global_batch); }},
      {"per_accelerator_batch", "samples", "global batch / N", false, false,
       [](P p) { return p.estimate.per_accelerator_batch; }},
      {"memory_per_accelerator_gb", "GB", "weights, gradients, optimizer states, activations and reserve", false,
       false, [](P p) { return p.estimate.memory.total().value() / 1e9; }},
      {"compute_efficiency", "1", "model FLOPs over compute time at the precision's peak (MFU of the compute alone)", false, true,
       [](P p) { return p.estimate.step.compute_efficiency; }},
      {"step_time_s", "s", "one training step, expected stragglers included", false, true,
       [](P p) { return s(p.estimate.step.step); }},
      {"compute_s", "s", "forward + backward compute per step on one accelerator", false, true,
       [](P p) { return s(p.estimate.step.forward + p.estimate.step.backward); }},
      {"tensor_parallel_s", "s", "tensor- and context-parallel communication per step, hidden or not", false, true,
       [](P p) { return s(p.estimate.step.tensor_parallel); }},
      {"comm_s", "s", "data-parallel collectives per step (gradients, parameter gathers), hidden or not", false,
       true, [](P p) { return s(p.estimate.step.communication); }},
      {"exposed_comm_s", "s", "time compute waited for communication (TP, CP, DP), per step", false, true,
       [](P p) { return s(p.estimate.step.exposed_communication); }},
      {"exposed_tensor_parallel_s", "s", "of which for tensor- and context-parallel communication", false, true,
       [](P p) { return s(p.estimate.step.exposed_tensor_parallel); }},
      {"interference_s", "s", "compute slowed while communication kernels held SMs, per step", false, true,
       [](P p) { return s(p.estimate.step.interference); }},
      {"bubble_s", "s", "compute waiting for pipeline transfers (fill and drain), per step", false, true,
       [](P p) { return s(p.estimate.step.bubble); }},
      {"pipeline_transfer_s", "s", "pipeline sends per step, hidden or not", false, true,
       [](P p) { return s(p.estimate.step.pipeline_transfer); }},
      {"straggler_s", "s", "expected wait for the slowest rank per step", false, true,
       [](P p) { return s(p.estimate.step.straggler); }},
      {"host_s", "s", "host time per step the accelerator waits for (the step's eager path)", false, true,
       [](P p) { return s(p.estimate.step.host); }},
      {"optimizer_s", "s", "optimizer update per step", false, true, [](P p) { return s(p.estimate.step.optimizer); }},
      {"events_per_step", "count", "engine events to simulate one step", true, true,
       [](P p) { return static_cast<double>(p.estimate.step.events); }},
      {"throughput_samples_per_s", "samples/s", "global batch / step time", false, true,
       [](P p) { return static_cast<double>(p.estimate.global_batch) / s(p.estimate.step.step); }},
      {"samples_to_converge", "samples", "expected samples to reach the quality target (RCP)", false, true,
       [](P p) { return p.estimate.convergence.mean_samples; }},
      {"steps", "count", "expected training steps", false, true, [](P p) { return p.estimate.steps; }},
      {"evaluations", "count", "expected timed evaluations", false, true,
       [](P p) { return p.estimate.evaluation.evaluations; }},
      {"eval_time_s", "s", "total time in evaluation", false, true, [](P p) { return s(p.estimate.evaluation.total); }},
      {"run_time_s", "s", "expected time of one run (run_start to run_stop); what energy integrates", false, true,
       [](P p) { return s(p.estimate.run_time); }},
      {"time_to_train_s", "s", "expected MLPerf score: run_time_s x E[RCP normalisation]", false, true,
       [](P p) { return s(p.estimate.time_to_train); }},
      {"time_to_train_min", "min", "expected MLPerf time to train", false, true,
       [](P p) { return minutes(p.estimate.time_to_train); }},
      {"time_to_train_p10_min", "min", "10th percentile of the MLPerf score (olympic mean of the runs)", false, true,
       [](P p) { return minutes(p.estimate.p10); }},
      {"time_to_train_p50_min", "min", "median of the MLPerf score", false, true,
       [](P p) { return minutes(p.estimate.p50); }},
      {"time_to_train_p90_min", "min", "90th percentile of the MLPerf score", false, true,
       [](P p) { return minutes(p.estimate.p90); }},
      {"accelerator_busy_share", "1", "share of the run the accelerators run kernels (the rest they wait)", false,
       true, [](P p) { return p.energy.ok ? p.energy.busy_share() : kNaN; }},
      {"power_per_accelerator_w", "W", "average board power of one accelerator over the run", false, true,
       [](P p) { return p.energy.ok ? p.energy.accelerators.value() / p.estimate.accelerators / s(p.energy.run) : kNaN; }},
      {"power_system_kw", "kW", "average power of nodes and switches over the run (DC)", false, true,
       [](P p) { return p.energy.ok ? p.energy.average().value() / 1e3 : kNaN; }},
      {"energy_nodes_kwh", "kWh", "energy of the nodes per run, DC: what MLPerf Power scores without switch estimates",
       false, true, [](P p) { return kwh(p, p.energy.nodes()); }},
      {"energy_kwh", "kWh", "energy per run of nodes and scale-out switches (DC)", false, true,
       [](P p) { return kwh(p, p.energy.total()); }},
      {"energy_p10_kwh", "kWh", "energy of the 10th-percentile run at the expected average power", false, true,
       [](P p) { return kwh(p, p.energy_p10); }},
      {"energy_p90_kwh", "kWh", "energy of the 90th-percentile run at the expected average power", false, true,
       [](P p) { return kwh(p, p.energy_p90); }},
      {"energy_facility_kwh", "kWh", "energy per run at the wall, PSU losses and PUE included", false, true,
       [](P p) { return kwh(p, p.energy.facility()); }},
      {"speedup", "1", "T_ref / T_N against the smallest N that fits", false, true, [](P p) { return p.speedup; }},
      {"e_prime", "1", "per-accelerator efficiency E' = (T_ref/T_N) / (N/N_ref)", false, true,
       [](P p) { return p.e_prime; }},
      {"loss_convergence", "1", "factor of 1/E' from more samples to converge than at the reference", false, true,
       [](P p) { return p.loss_convergence; }},
      {"loss_compute", "1", "factor of 1/E' from more accelerator compute per sample (small per-GPU batch)", false,
       true, [](P p) { return p.loss_compute; }},
      {"loss_step_overhead", "1", "factor of 1/E' from step time outside compute (comm, bubble, stragglers, optimizer)",
       false, true, [](P p) { return p.loss_step_overhead; }},
      {"loss_evaluation", "1", "factor of 1/E' from evaluation time that does not shrink with N", false, true,
       [](P p) { return p.loss_evaluation; }},
      // The run with failures, checkpoints and restarts (models/goodput): means over the replicates.
      {"job_mtbf_h", "h", "mean time between failures of the job's accelerators and nodes (0: failures off)", false, true,
       [](P p) { return p.goodput.job.mtbf_hours(); }},
      {"checkpoint_gb", "GB", "one checkpoint: trainable weights and optimizer states", false, true,
       [](P p) { return p.goodput.job.checkpoint.value() / 1e9; }},
      {"checkpoint_interval_min", "min", "training between checkpoints (the run's length: none)", false, true,
       [](P p) { return p.goodput.interval_s / 60; }},
      {"checkpoint_stall_s", "s", "training stopped per checkpoint (the write, or the snapshot when async)", false, true,
       [](P p) { return s(p.goodput.job.stall); }},
      {"restart_s", "s", "a failure to training again: detection, relaunch, init, checkpoint read", false, true,
       [](P p) { return s(p.goodput.job.restart); }},
      {"interruptions", "count", "expected failures per run", false, true, [](P p) { return p.goodput.interruptions; }},
      {"lost_training_s", "s", "expected training redone per run (since the last durable checkpoint)", false, true,
       [](P p) { return p.goodput.lost_s; }},
      {"goodput", "1", "run_time_s / expected wall time with failures, checkpoints and restarts", false, true,
       [](P p) { return p.goodput.goodput; }},
      {"effective_time_to_train_min", "min", "time_to_train_min / goodput", false, true,
       [](P p) { return p.goodput.effective_s / 60; }},
      {"effective_time_to_train_p10_min", "min", "10th percentile over failure histories (at the expected convergence)",
       false, true, [](P p) { return p.goodput.effective_p10_s / 60; }},
      {"effective_time_to_train_p50_min", "min", "median over failure histories (at the expected convergence)",
       false, true, [](P p) { return p.goodput.effective_p50_s / 60; }},
      {"effective_time_to_train_p90_min", "min", "90th percentile over failure histories (at the expected convergence)",
       false, true, [](P p) { return p.goodput.effective_p90_s / 60; }},
      {"effective_e_prime", "1", "E' on the effective times to train", false, true,
       [](P p) { return p.effective_e_prime; }},
  };
  return defs;
}
}  // namespace

output::Table scaling_table(const std::vector<ScalingPoint>& points) {
  output::Table t;
  for (const ColumnDef& d : column_defs()) {
    output::Column c{d.name, d.unit, d.description, d.integer, {}, {}};
    for (const ScalingPoint& p : points) c.values.push_back(d.needs_ok && !p.estimate.ok() ? kNaN : d.value(p));
    t.columns.push_back(std::move(c));
  }
  std::vector<std::string> layout, basis, runner_up, status, message, critical;
  output::Column slower{"runner_up_slower", "1", "the runner-up's time to train / this one's - 1 (negative where the recipe was kept though the runner-up was faster)", false, {}, {}};
  for (const ScalingPoint& p : points) {
    critical.push_back(p.estimate.ok() ? models::describe_critical_path(p.estimate.step) : "-");
    layout.push_back(p.estimate.status == "invalid_layout" ? "-" : p.estimate.layout.describe());
    const bool other = p.estimate.ok() && !p.estimate.runner_up.empty();
    basis.push_back(p.estimate.ok() && !p.estimate.layout_basis.empty() ? p.estimate.layout_basis : "-");
    runner_up.push_back(other ? p.estimate.runner_up : "-");
    slower.values.push_back(other ? p.estimate.runner_up_slower : kNaN);
    status.push_back(p.estimate.status);
    message.push_back(p.estimate.message.empty() ? "-" : p.estimate.message);
  }
  t.columns.insert(t.columns.begin() + 4, output::text_column("layout", "parallel layout at this N", layout));
  t.columns.insert(t.columns.begin() + 5, output::text_column("layout_basis", models::kLayoutBasis, basis));
  t.columns.insert(t.columns.begin() + 6, output::text_column("runner_up", "the next fastest layout of other sizes", runner_up));
  t.columns.insert(t.columns.begin() + 7, std::move(slower));
  t.columns.push_back(output::text_column("critical_path", "the step's critical path by phase", critical));
  t.columns.push_back(output::text_column("status", "ok | out_of_memory | invalid_layout", status));
  t.columns.push_back(output::text_column("message", "why a point has no time", message));
  return t;
}

std::string console_table(const output::Table& t) {
  struct Shown {
    const char* column;
    const char* header;
    const char* format;
    double scale;
  };
  static const std::vector<Shown> shown = {
      {"accelerators", "N", "{:.0f}", 1},
      {"global_batch", "GBS", "{:.0f}", 1},
      {"layout", "layout", "", 1},
      {"runner_up_slower", "next %", "{:+.0f}", 100},
      {"memory_per_accelerator_gb", "mem GB", "{:.1f}", 1},
      {"step_time_s", "step ms", "{:.2f}", 1e3},
      {"compute_s", "compute", "{:.2f}", 1e3},
      {"exposed_comm_s", "exp.comm", "{:.2f}", 1e3},
      {"bubble_s", "bubble", "{:.2f}", 1e3},
      {"straggler_s", "stragg", "{:.2f}", 1e3},
      {"time_to_train_min", "TTT min", "{:.3f}", 1},
      {"time_to_train_p10_min", "p10", "{:.3f}", 1},
      {"time_to_train_p90_min", "p90", "{:.3f}", 1},
      {"e_prime", "E'", "{:.3f}", 1},
      {"goodput", "goodput", "{:.3f}", 1},
      {"effective_time_to_train_min", "eff.TTT", "{:.3f}", 1},
      {"energy_kwh", "kWh", "{:.1f}", 1},
  };
  const output::Column& status = t.column("status");
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const Shown& sh : shown) {
    std::vector<std::string> col{sh.header};
    const output::Column& c = t.column(sh.column);
    for (std::size_t i = 0; i < t.rows(); ++i) {
      if (c.is_text()) {
        col.push_back(c.text[i]);
      } else if (std::isnan(c.values[i])) {
        col.push_back(status.text[i] == "ok" ? "-" : std::string(sh.column) == "step_time_s" ? status.text[i] : "-");
      } else {
        col.push_back(fmt::format(fmt::runtime(sh.format), c.values[i] * sh.scale));
      }
    }
    std::size_t w = 0;
    for (const auto& cell : col) w = std::max(w, cell.size());
    width.push_back(w);
    cells.push_back(std::move(col));
  }
  std::string out;
  for (std::size_t row = 0; row <= t.rows(); ++row) {
    for (std::size_t j = 0; j < cells.size(); ++j) {
      out += fmt::format("{:>{}}", cells[j][row], width[j] + (j ? 2 : 0));
    }
    out += '\n';
  }
  return out;
}

}  // namespace sp
