#include "sim/scenario/anchor.hpp"

#include <cmath>

#include <fmt/format.h>

#include "models/training/layout_search.hpp"
#include "models/training/time_to_train.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

Anchor parse_anchor(const config::ConfigNode& n) {
  n.expect_only({"accelerators", "time_to_train", "step_time"});
  Anchor a;
  a.accelerators = n.at("accelerators").as_count();
  const auto ttt = n.find("time_to_train"), step = n.find("step_time");
  if (ttt && step) step->fail("give time_to_train or step_time, not both");
  if (!ttt && !step) n.fail("needs time_to_train (\"28.2 min\") or step_time (\"3.68 s\")");
  const config::ConfigNode t = ttt ? *ttt : *step;
  a.quantity = ttt ? Anchor::Quantity::time_to_train : Anchor::Quantity::step_time;
  a.measured = t.as_duration();
  if (!(a.measured > Duration::zero())) t.fail(ttt ? "must be a positive time, e.g. \"28.2 min\"" : "must be a positive time, e.g. \"3.68 s\"");
  return a;
}

std::string describe_anchor(const Anchor& a) {
  if (a.quantity == Anchor::Quantity::step_time) {
    return fmt::format("anchored: N={} measured a {:.4g} s step where the model gave {:.4g}: software level x{:.4g}",
                       a.accelerators, to_seconds(a.measured), to_seconds(a.modelled_before), a.software_factor);
  }
  return fmt::format("anchored: N={} measured {:.4g} min where the model gave {:.4g}: software level x{:.4g}", a.accelerators,
                     to_seconds(a.measured) / 60, to_seconds(a.modelled_before) / 60, a.software_factor);
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
  // The quantity measured, as the model gives it.
  const bool step = a.quantity == Anchor::Quantity::step_time;
  const auto of = [step](const models::TrainingEstimate& e) { return step ? e.step.step : e.time_to_train; };
  a.modelled_before = of(*first);
  // The layout found, held whole while the level moves (its virtual stages and recomputation
  // too): the time then falls smoothly with the level, and at factor 1 is the one found.
  const models::ParallelSpec layout = models::spec_of(first->layout);
  const char* key = step ? "step_time" : "time_to_train";
  const auto shown = [step](Duration d) {
    return step ? fmt::format("{:.4g} s", to_seconds(d)) : fmt::format("{:.4g} min", to_seconds(d) / 60);
  };
  models::LevelSolution level;
  try {
    level = models::solve_software_level(
        [&](double factor) { return of(models::estimate_at_level(spec.workload, spec.platform, n, gbs, layout, factor, spec.fidelity)); },
        a.measured, models::kSoftwareLevelMin, models::kSoftwareLevelMax);
  } catch (const ModelError& e) {
    // A slow step at a large N: the level that meets it makes the whole run longer than the
    // simulator holds. The anchor is why, not the scenario (found by a hostile-input review).
    where.at(key).fail(fmt::format("the model gives {} at N={}; on the way to a software level that meets {}, the run "
                                   "became one the model cannot simulate ({})",
                                   shown(a.modelled_before), n, shown(a.measured), e.what()),
                       "check the time and that the scenario describes the measured system");
  }
  a.software_factor = level.factor;
  if (!std::isfinite(level.residual)) {
    where.at(key).fail(fmt::format("the model gives no time at N={} for a software level near x{:.3g}", n, level.factor),
                       "check the time and that the scenario describes the measured system");
  }
  if (!level.met(models::kSoftwareLevelMin, models::kSoftwareLevelMax)) {
    // The search stops a step past the plausible range: there it says only on which side.
    const double f1 = level.residual;
    const std::string side = std::fabs(f1) > 1e-6 ? fmt::format("{} x{}", f1 > 0 ? "above" : "below", f1 > 0 ? models::kSoftwareLevelMax : models::kSoftwareLevelMin)
                                                   : fmt::format("x{:.3g}", a.software_factor);
    where.at(key).fail(fmt::format("the model gives {} at N={}; meeting {} takes a software level {}, outside the plausible {}..{}",
                          shown(a.modelled_before), n, shown(a.measured), side, models::kSoftwareLevelMin, models::kSoftwareLevelMax),
              "check the time and that the scenario describes the measured system");
  }
  spec.platform.accelerator.efficiency_scale *= a.software_factor;
}

}  // namespace sp
