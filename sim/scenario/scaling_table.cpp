#include "sim/scenario/scaling_table.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace sp {

namespace {
struct ColumnDef {
  const char* name;
  const char* unit;
  const char* description;
  bool integer;
  std::function<double(const ScalingPoint&)> value;
};

const std::vector<ColumnDef>& column_defs() {
  using P = const ScalingPoint&;
  static const std::vector<ColumnDef> defs = {
      {"accelerators", "count", "accelerators N", true, [](P p) { return p.estimate.accelerators; }},
      {"nodes", "count", "nodes", true, [](P p) { return p.estimate.nodes; }},
      {"global_batch", "samples", "global batch size", true,
       [](P p) { return static_cast<double>(p.estimate.global_batch); }},
      {"per_accelerator_batch", "samples", "global batch / N", false,
       [](P p) { return p.estimate.per_accelerator_batch; }},
      {"compute_efficiency", "1", "achieved fraction of peak in forward and backward", false,
       [](P p) { return p.estimate.compute_efficiency; }},
      {"step_time_s", "s", "one training step", false, [](P p) { return to_seconds(p.estimate.step.step); }},
      {"compute_s", "s", "forward + backward compute per step", false,
       [](P p) { return to_seconds(p.estimate.step.forward + p.estimate.step.backward); }},
      {"optimizer_s", "s", "optimizer update per step", false,
       [](P p) { return to_seconds(p.estimate.step.optimizer); }},
      {"comm_s", "s", "gradient all-reduce time per step (overlapped or not)", false,
       [](P p) { return to_seconds(p.estimate.step.communication); }},
      {"exposed_comm_s", "s", "communication not hidden behind compute, per step", false,
       [](P p) { return to_seconds(p.estimate.step.exposed_communication); }},
      {"throughput_samples_per_s", "samples/s", "global batch / step time", false,
       [](P p) { return static_cast<double>(p.estimate.global_batch) / to_seconds(p.estimate.step.step); }},
      {"samples_to_converge", "samples", "expected samples to reach the quality target (RCP)", false,
       [](P p) { return p.estimate.convergence.mean_samples; }},
      {"steps", "count", "expected training steps", false, [](P p) { return p.estimate.steps; }},
      {"evaluations", "count", "expected timed evaluations", false,
       [](P p) { return p.estimate.evaluation.evaluations; }},
      {"eval_time_s", "s", "total time spent in evaluation", false,
       [](P p) { return to_seconds(p.estimate.evaluation.total); }},
      {"time_to_train_s", "s", "MLPerf time to train (run_start to run_stop)", false,
       [](P p) { return to_seconds(p.estimate.time_to_train); }},
      {"time_to_train_min", "min", "MLPerf time to train in minutes", false,
       [](P p) { return to_seconds(p.estimate.time_to_train) / 60.0; }},
      {"speedup", "1", "T_ref / T_N against the smallest N", false, [](P p) { return p.speedup; }},
      {"e_prime", "1", "per-accelerator efficiency E' = (T_ref/T_N) / (N/N_ref)", false,
       [](P p) { return p.e_prime; }},
  };
  return defs;
}
}  // namespace

output::Table scaling_table(const std::vector<ScalingPoint>& points) {
  output::Table t;
  for (const ColumnDef& d : column_defs()) {
    output::Column c{d.name, d.unit, d.description, d.integer, {}, {}};
    for (const ScalingPoint& p : points) c.values.push_back(d.value(p));
    t.columns.push_back(std::move(c));
  }
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
      {"per_accelerator_batch", "batch/acc", "{:.3g}", 1},
      {"step_time_s", "step ms", "{:.2f}", 1e3},
      {"compute_s", "compute ms", "{:.2f}", 1e3},
      {"comm_s", "comm ms", "{:.2f}", 1e3},
      {"exposed_comm_s", "exposed ms", "{:.2f}", 1e3},
      {"time_to_train_min", "TTT min", "{:.3f}", 1},
      {"speedup", "speedup", "{:.2f}", 1},
      {"e_prime", "E'", "{:.3f}", 1},
  };
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const Shown& s : shown) {
    std::vector<std::string> col{s.header};
    const output::Column& c = t.column(s.column);
    for (double v : c.values) col.push_back(fmt::format(fmt::runtime(s.format), v * s.scale));
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
