#include "models/energy/energy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "models/catalog.hpp"
#include "sim/config/loader.hpp"

namespace sp::models {

namespace {
double fraction_in(const config::ConfigNode& n, const char* key, double lo, double hi, double fallback) {
  const auto x = n.find(key);
  if (!x) return fallback;
  const double v = x->as_number();
  if (!(v >= lo && v <= hi)) x->fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}
}  // namespace

PowerCalibration parse_power_calibration(const config::ConfigNode& n) {
  n.expect_only({"compute_fraction", "wait_fraction", "idle_fraction", "context_fraction", "host_per_accelerator",
                 "source", "fit"});
  PowerCalibration c;
  // The ranges are the physical ones: a fit outside them means a wrong mechanism, not a value.
  c.compute_fraction = fraction_in(n, "compute_fraction", 0.3, 1.0, c.compute_fraction);
  c.wait_fraction = fraction_in(n, "wait_fraction", 0.0, 0.5, c.wait_fraction);
  c.idle_fraction = fraction_in(n, "idle_fraction", 0.02, 0.5, c.idle_fraction);
  c.context_fraction = fraction_in(n, "context_fraction", 0.0, 0.2, c.context_fraction);
  if (auto h = n.find("host_per_accelerator")) {
    c.host_per_accelerator = h->as_power();
    if (c.host_per_accelerator.value() < 0 || c.host_per_accelerator.value() > 5000) h->fail("must be between 0 and 5 kW");
  }
  c.source = n.find("source") ? n.at("source").as_string() : n.location().file;
  return c;
}

const PowerCalibration& default_power_calibration() {
  static const PowerCalibration cached = [] {
    const std::filesystem::path file = data_root() / "calibration" / "params" / "power_v4.1.yaml";
    return std::filesystem::exists(file) ? parse_power_calibration(config::load_file(file.string()))
                                         : PowerCalibration{};
  }();
  return cached;
}

std::optional<AcceleratorPower> accelerator_power(const Accelerator& a, const PowerCalibration& c) {
  if (!a.tdp) return std::nullopt;
  const Watts idle = a.idle_power ? *a.idle_power : *a.tdp * c.idle_fraction;
  const Watts range = *a.tdp - idle;
  return AcceleratorPower{idle, idle + range * c.compute_fraction, idle + range * c.wait_fraction,
                          idle + range * c.context_fraction};
}

int clos_switches(long long endpoints, int radix) {
  if (endpoints <= 0) return 0;
  // k tiers of radix-R switches join R (R/2)^(k-1) ports without blocking: every tier below the
  // top has ceil(E / (R/2)) switches (half their ports down), the top ceil(E / R) (all down).
  const long long down = radix / 2;
  int tiers = 1;
  for (long double reach = radix; reach < static_cast<long double>(endpoints); reach *= down) ++tiers;
  const long long lower = (endpoints + down - 1) / down, top = (endpoints + radix - 1) / radix;
  return static_cast<int>((tiers - 1) * lower + top);
}

Duration busy_time(const TrainingEstimate& e) {
  const StepResult& s = e.step;
  const Duration per_step = std::min(s.step, s.forward + s.backward + s.optimizer + s.interference);
  return scale(per_step, e.steps) + scale(e.evaluation.forward, e.evaluation.evaluations);
}

EnergyEstimate estimate_energy(const TrainingEstimate& e, const Platform& p, const PowerCalibration& c,
                               std::optional<Duration> run) {
  EnergyEstimate out;
  const auto acc = accelerator_power(p.accelerator, c);
  if (!e.ok()) {
    out.why = "no time to train";
    return out;
  }
  if (!acc) {
    out.why = p.accelerator.name + " has no tdp in its hardware file";
    return out;
  }
  out.ok = true;
  out.run = run.value_or(e.run_time);  // the runs' wall time, not the normalised score
  out.busy = std::min(busy_time(e), out.run);
  out.accelerator = *acc;
  out.host = p.power.host ? *p.power.host : c.host_per_accelerator * p.accelerators_per_node();
  const Tier& outer = p.topology.tiers.back();
  if (e.nodes > 1 && outer.kind == TierKind::fat_tree && outer.nics_per_node > 0) {
    out.switches = clos_switches(static_cast<long long>(e.nodes) * outer.nics_per_node, p.power.switch_radix);
  }
  const double n = e.accelerators;
  out.accelerators = (acc->busy * out.busy + acc->wait * (out.run - out.busy)) * n;
  out.hosts = out.host * out.run * static_cast<double>(e.nodes);
  out.network = p.power.switch_power * out.run * static_cast<double>(out.switches);
  out.psu_efficiency = p.power.psu_efficiency;
  out.pue = p.power.pue;
  return out;
}

}  // namespace sp::models
