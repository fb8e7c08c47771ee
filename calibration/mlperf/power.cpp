#include "calibration/mlperf/power.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace sp::calibration {

std::vector<PowerResult> read_power_results(const config::CsvTable& t) {
  std::vector<PowerResult> out;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    PowerResult r;
    r.system.row = i;
    r.system.line = t.line(i);
    r.system.benchmark = t.cell(i, "benchmark");
    r.system.submitter = t.cell(i, "submitter");
    r.system.system_name = t.cell(i, "system_folder");
    r.system.accelerator = t.cell(i, "accelerator");
    const auto count = [&](const char* column) {
      const auto v = t.integer(i, column);
      if (!v || *v < 1 || *v > 10'000'000) t.fail(i, column, "needs a count between 1 and 10^7");
      return static_cast<int>(*v);
    };
    r.system.accelerators = count("accelerators_total");
    r.system.nodes = count("nodes");
    if (r.system.accelerators % r.system.nodes != 0) t.fail(i, "nodes", "must divide accelerators_total");
    r.system.accelerators_per_node = r.system.accelerators / r.system.nodes;
    const auto positive = [&](const char* column) {
      const auto v = t.number(i, column);
      if (!v || !(*v > 0)) t.fail(i, column, "needs a positive number");
      return *v;
    };
    r.system.time_to_train_min = positive("time_to_train_min");
    if (const std::string why = time_to_train_problem(*r.system.time_to_train_min); !why.empty()) t.fail(i, "time_to_train_min", why);
    r.energy_kj = positive("energy_kj_per_run");
    r.power_w = positive("avg_power_w_system");
    // The model's node power excludes switches; take out any the score counted.
    if (t.has_column("interconnect_power_w_counted")) {
      if (auto sw = t.number(i, "interconnect_power_w_counted")) r.power_w -= *sw;
    }
    if (!(r.power_w > 0)) t.fail(i, "avg_power_w_system", "is not above the counted interconnect power");
    // Per accelerator slot (board, host share, fans) a system draws tens of watts to a few
    // kilowatts; outside that a unit slipped (kW for W), and the fit would pin at its bounds.
    const double per_slot = r.power_w / r.system.accelerators;
    if (per_slot < 10 || per_slot > 10'000) {
      t.fail(i, "avg_power_w_system",
             fmt::format("is {:.3g} W per accelerator; a training system draws 10 W to 10 kW per accelerator (W, not kW?)",
                         per_slot));
    }
    // Energy is power x time: a row whose three disagree by more than its measurement allows
    // (runs and the window differ a few per cent) is not one run's record.
    const double implied_kj = r.power_w * *r.system.time_to_train_min * 60 / 1e3;
    if (r.energy_kj < 0.5 * implied_kj || r.energy_kj > 2 * implied_kj) {
      t.fail(i, "energy_kj_per_run",
             fmt::format("{:.4g} kJ is not avg_power_w_system x time_to_train_min ({:.4g} kJ)", r.energy_kj, implied_kj));
    }
    out.push_back(r);
  }
  if (out.empty()) throw InputError({t.file(), 0, 0}, "", "no power rows to fit");
  return out;
}

PowerFit fit_power(const std::vector<PowerResult>& rows, const SystemModelInputs& inputs,
                   const models::PowerCalibration& start) {
  PowerFit fit;
  fit.calibration = start;
  // Nodes' power = a + b u in the share u: a holds hosts, idle boards and waiting, b the busy part.
  double num = 0, den = 0;
  for (const PowerResult& r : rows) {
    PowerFitRow f{r, predict_system(r.system, inputs), 0, 0, 0, 0, 0, 0};
    if (f.prediction.status != "ok") {
      throw ModelError(fmt::format("power row {} ({} {}): {}", r.system.line, r.system.submitter, r.system.system_name,
                                   f.prediction.message));
    }
    models::PowerCalibration none = start, full = start;
    none.compute_fraction = 0;
    full.compute_fraction = 1;
    const auto at0 = models::estimate_energy(f.prediction.estimate, f.prediction.platform, none);
    const auto at1 = models::estimate_energy(f.prediction.estimate, f.prediction.platform, full);
    if (!at0.ok) throw ModelError(fmt::format("power row {}: {}", r.system.line, at0.why));
    const double a = (at0.nodes() / at0.run).value(), b = (at1.nodes() / at1.run).value() - a;
    num += (b / r.power_w) * (1 - a / r.power_w);
    den += (b / r.power_w) * (b / r.power_w);
    f.busy_share = at0.busy_share();
    fit.rows.push_back(f);
  }
  const double u = den > 0 ? num / den : start.compute_fraction;
  fit.calibration.compute_fraction = std::clamp(u, 0.3, 1.0);
  fit.at_bound = fit.calibration.compute_fraction != u;
  fit.calibration.source = "scalepoint calibrate power";
  for (PowerFitRow& f : fit.rows) {
    const auto e = models::estimate_energy(f.prediction.estimate, f.prediction.platform, fit.calibration);
    f.predicted_power_w = (e.nodes() / e.run).value();
    // MLPerf Power's energy per run is a score like the time (the row's energy / power is its
    // published, RCP-scaled time), so the model's run energy is scaled the same way here.
    f.predicted_energy_kj = e.nodes().value() / 1e3 * f.prediction.estimate.rcp_normalisation;
    f.power_error = f.predicted_power_w / f.row.power_w - 1;
    f.energy_error = f.predicted_energy_kj / f.row.energy_kj - 1;
    f.time_error = to_seconds(f.prediction.estimate.time_to_train) / 60 / *f.row.system.time_to_train_min - 1;
  }
  return fit;
}

std::string power_yaml(const PowerFit& fit, const std::string& data, const std::string& sha,
                       const std::string& command) {
  const models::PowerCalibration& c = fit.calibration;
  std::string out = fmt::format(
      "# The power model's constants (models/energy/energy.hpp), written by:\n#   {}\n"
      "# from {} (sha256 {}).\n"
      "# compute_fraction is fitted (closed-form least squares of the rows' average node power);\n"
      "# the others are estimates with their sources, held fixed: one row cannot separate them.\n"
      "source: \"{}\"\n"
      "compute_fraction: {:.4f}        # share of the idle-to-TDP range while training kernels run{}\n"
      "wait_fraction: {}               # estimate: only communication kernels and links busy (plausible 0-0.3)\n"
      "idle_fraction: {}              # idle board power / TDP where a hardware file has no idle_power: H100 112-145 W\n"
      "                                 # with a context and memory allocated, B200 187 W (nvidia-smi tables, e.g.\n"
      "                                 # github.com/wilicc/gpu-burn issue 114): 0.16-0.21 of TDP\n"
      "context_fraction: {}            # an idle CUDA context over idle (co-location): H100 120-127 W against\n"
      "                                 # 101-110 W without (calibration/data/colocation/h100_coloc_bench.csv)\n"
      "host_per_accelerator: \"{:.0f} W\"  # node power beside the accelerators, per slot: Dell XE9680 set-up phase\n"
      "                                 # floor 2.78 kW per node (MLPerf v4.1 power logs, node_*.txt before run_start)\n"
      "                                 # less 8 idle H100 (~70 W each) = 2.2 kW per 8 slots\n"
      "fit:\n",
      command, data, sha, c.source, c.compute_fraction, fit.at_bound ? " (AT ITS BOUND)" : "", c.wait_fraction,
      c.idle_fraction, c.context_fraction, c.host_per_accelerator.value());
  for (const PowerFitRow& f : fit.rows) {
    out += fmt::format(
        "  - {{line: {}, system: \"{} {}\", benchmark: {}, accelerators: {}, busy_share: {:.3f}, "
        "power_w: {:.0f}, predicted_power_w: {:.0f}, power_error: {:+.4f}, time_error: {:+.4f}, "
        "energy_kj: {:.0f}, predicted_energy_kj: {:.0f}, energy_error: {:+.4f}}}\n",
        f.row.system.line, f.row.system.submitter, f.row.system.system_name, f.row.system.benchmark,
        f.row.system.accelerators, f.busy_share, f.row.power_w, f.predicted_power_w, f.power_error, f.time_error,
        f.row.energy_kj, f.predicted_energy_kj, f.energy_error);
  }
  return out;
}

}  // namespace sp::calibration
