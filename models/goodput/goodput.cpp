#include "models/goodput/goodput.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/goodput/checkpoint_interval.hpp"
#include "sim/core/error.hpp"
#include "sim/core/quantile.hpp"

namespace sp::models {

namespace {
// Beyond this many times its failure-free length a plan is not a run anyone would start (and its
// simulation would not end): the closed form says so without simulating.
constexpr double kHopeless = 1000;
}  // namespace

GoodputEstimate estimate_goodput(const Reliability& r, const TrainingEstimate& e, const Workload& w,
                                 const Platform& p, int samples, std::uint64_t seed, std::uint64_t point,
                                 bool timeline) {
  GoodputEstimate g;
  if (!e.ok()) return g;
  g.job = job_reliability(r, w, p, e.accelerators);
  const double work = to_seconds(e.run_time);
  const double lambda = g.job.failures_per_hour / 3600;
  RunPlan plan;
  plan.work_s = work;
  plan.stall_s = to_seconds(g.job.stall);
  plan.write_s = r.async_checkpoint ? to_seconds(g.job.write) : plan.stall_s;
  plan.async = r.async_checkpoint;
  plan.restart_s = to_seconds(g.job.restart);
  plan.failures_per_s = lambda;
  plan.node_share = g.job.node_share;
  plan.spare_nodes = r.spare_nodes;
  plan.repair_s = to_seconds(r.repair);
  // An async checkpoint loses on average its write time more work at a failure (it is not yet
  // durable), to first order a longer restart; a checkpoint every step is the floor, and so is a
  // million checkpoints a run (the simulation's bound, below).
  constexpr double kMaxCheckpoints = 1e6;
  const double lag = plan.async ? plan.write_s : 0;
  const double min_tau = std::max({to_seconds(e.step.step), lag, work / kMaxCheckpoints});
  g.interval_optimal = !r.checkpoint_interval;
  plan.interval_s = r.checkpoint_interval ? to_seconds(*r.checkpoint_interval)
                                          : optimal_interval_s(work, plan.stall_s, plan.restart_s + lag, lambda, min_tau);
  plan.interval_s = std::min(plan.interval_s, work);
  // Work bounded by what is asked: a run is simulated checkpoint by checkpoint.
  if (work / plan.interval_s > kMaxCheckpoints * (1 + 1e-9)) {
    throw ModelError(fmt::format("N={}: a checkpoint every {:.3g} s of a {:.3g} s run is {:.3g} checkpoints; at most {:.0e} "
                                 "(set reliability.checkpoint.interval longer, or 'optimal')",
                                 e.accelerators, plan.interval_s, work, work / plan.interval_s, kMaxCheckpoints));
  }
  g.interval_s = plan.interval_s;
  g.expected_wall_s = expected_run_s(work, plan.interval_s, plan.stall_s, plan.restart_s + lag, lambda);
  if (!(lambda > 0)) {
    // Nothing fails: the checkpoints (if any are asked for) are all there is, and no draw is needed.
    g.mean_wall_s = g.p10_wall_s = g.p50_wall_s = g.p90_wall_s = g.expected_wall_s;
  } else {
    if (!(g.expected_wall_s < kHopeless * work)) {
      throw ModelError(fmt::format("N={}: with a failure every {:.3g} h and a restart of {:.0f} s the run would take more "
                                   "than {:.0f} times its failure-free time; check reliability.sources",
                                   e.accelerators, g.job.mtbf_hours(), plan.restart_s, kHopeless));
    }
    g.counted = true;
    RngStream rng(seed, point, "failures");
    std::vector<double> walls;
    double excess = 0;  // the mean of wall - work: exactly 0 (goodput 1) when no replicate lost anything
    const int n = std::max(samples, 1);
    for (int k = 0; k < n; ++k) {
      std::vector<RunSpan> spans;
      const RunOutcome o = simulate_run(plan, rng, timeline && k == 0 ? &spans : nullptr);
      if (timeline && k == 0) g.timeline = run_trace_json(spans);
      walls.push_back(o.wall_s);
      excess += (o.wall_s - work) / n;
      g.interruptions += static_cast<double>(o.failures) / n;
      g.checkpoints += static_cast<double>(o.checkpoints) / n;
      g.lost_s += o.lost_s / n;
      g.checkpoint_s += o.checkpoint_s / n;
      g.restart_s += o.restart_s / n;
      g.wait_s += o.wait_s / n;
    }
    std::sort(walls.begin(), walls.end());
    g.mean_wall_s = work + excess;
    g.p10_wall_s = sorted_quantile(walls, 0.1);
    g.p50_wall_s = sorted_quantile(walls, 0.5);
    g.p90_wall_s = sorted_quantile(walls, 0.9);
  }
  g.goodput = work / g.mean_wall_s;
  if (!g.counted) {
    // Checkpoints without failures are deterministic stalls: a whole number of them.
    g.checkpoints = std::max(0.0, std::ceil(work / plan.interval_s - 1e-9) - 1);
    g.checkpoint_s = g.checkpoints * plan.stall_s;
  }
  const double ttt = to_seconds(e.time_to_train);
  // Exactly the time to train when nothing is lost (no division that could move its last bit).
  const auto effective = [&](double wall) { return wall == work ? ttt : ttt * (wall / work); };
  g.effective_s = effective(g.mean_wall_s);
  g.effective_p10_s = effective(g.p10_wall_s);
  g.effective_p50_s = effective(g.p50_wall_s);
  g.effective_p90_s = effective(g.p90_wall_s);
  return g;
}

}  // namespace sp::models
