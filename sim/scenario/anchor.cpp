#include "sim/scenario/anchor.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/training/layout_search.hpp"
#include "sim/core/det_math.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

Anchor parse_anchor(const config::ConfigNode& n) {
  n.expect_only({"accelerators", "time_to_train"});
  Anchor a;
  a.accelerators = n.at("accelerators").as_count();
  const config::ConfigNode t = n.at("time_to_train");
  a.time_to_train = t.as_duration();
  if (!(a.time_to_train > Duration::zero())) t.fail("must be a positive time, e.g. \"28.2 min\"");
  return a;
}

void apply_anchor(ScenarioSpec& spec, Anchor& a, const config::ConfigNode& where) {
  const int n = a.accelerators;
  std::int64_t gbs = 0;
  if (spec.batch.kind == BatchPolicy::Kind::by_accelerators) {
    const auto it = spec.batch.by_accelerators.find(n);
    if (it != spec.batch.by_accelerators.end()) {
      gbs = it->second;
    } else if (spec.batch.typical) {
      gbs = models::typical_global_batch(spec.workload, n, spec.parallel_spec(n));  // as at the scenario's N
    } else {
      where.at("accelerators").fail(fmt::format("the batch gives no global batch at N={}", n),
                                    "add it to batch.global_by_accelerators");
    }
  } else {
    gbs = spec.batch.global_batch(n);
  }
  const auto first = models::fastest_layout(spec.workload, spec.platform, n, gbs, spec.parallel_spec(n),
                                            spec.layout_search(n), spec.fidelity);
  if (!first || !first->ok()) {
    where.at("accelerators").fail(fmt::format("the model has no layout at N={} (global batch {}){}", n, gbs,
                                              first ? ": " + first->message : ""));
  }
  a.modelled_before = first->time_to_train;
  // The layout found, held while the level moves: the time then falls smoothly with the level.
  models::ParallelSpec layout = spec.parallel_spec(n);
  layout.fix_sizes({first->layout.tp, first->layout.cp, first->layout.pp});
  layout.micro_batch = first->layout.micro_batch;
  layout.declared = true;
  const double base = spec.platform.accelerator.efficiency_scale;
  const double target = det::log(to_seconds(a.time_to_train));
  const auto log_time = [&](double factor) {
    models::Platform p = spec.platform;
    p.accelerator.efficiency_scale = base * factor;
    return det::log(to_seconds(models::estimate_training(spec.workload, p, n, gbs, layout, spec.fidelity).time_to_train));
  };
  // The secant method on log time against log factor (time falls about as 1 / factor).
  double x0 = 0, f0 = det::log(to_seconds(a.modelled_before)) - target;
  double x1 = f0, f1 = log_time(det::exp(x1)) - target;
  for (int i = 0; i < 40 && std::fabs(f1) > 1e-9; ++i) {
    if (f1 == f0) break;
    const double x2 = x1 - f1 * (x1 - x0) / (f1 - f0);
    x0 = x1;
    f0 = f1;
    x1 = std::clamp(x2, det::log(kAnchorFactorMin) - 1, det::log(kAnchorFactorMax) + 1);
    f1 = log_time(det::exp(x1)) - target;
  }
  a.software_factor = det::exp(x1);
  if (std::fabs(f1) > 1e-6 || a.software_factor < kAnchorFactorMin || a.software_factor > kAnchorFactorMax) {
    // The search stops a step past the plausible range: there it says only on which side.
    const std::string level = std::fabs(f1) > 1e-6 ? fmt::format("{} x{}", f1 > 0 ? "above" : "below", f1 > 0 ? kAnchorFactorMax : kAnchorFactorMin)
                                                    : fmt::format("x{:.3g}", a.software_factor);
    where.at("time_to_train").fail(
        fmt::format("the model gives {:.4g} min at N={}; meeting {:.4g} min takes a software level {}, outside the "
                    "plausible {}..{}",
                    to_seconds(a.modelled_before) / 60, n, to_seconds(a.time_to_train) / 60, level, kAnchorFactorMin,
                    kAnchorFactorMax),
        "check the time and that the scenario describes the measured system");
  }
  spec.platform.accelerator.efficiency_scale = base * a.software_factor;
}

}  // namespace sp
