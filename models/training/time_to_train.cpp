#include "models/training/time_to_train.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/step/stragglers.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/quantile.hpp"
#include "sim/core/det_math.hpp"

namespace sp::models {

TrainingEstimate estimate_training(const Workload& w, const Platform& p, int accelerators, std::int64_t global_batch,
                                   const ParallelSpec& parallel, Fidelity fidelity) {
  TrainingEstimate e;
  e.accelerators = accelerators;
  e.nodes = p.nodes_for(accelerators);
  e.global_batch = global_batch;
  e.per_accelerator_batch = static_cast<double>(global_batch) / accelerators;
  std::string why;
  const auto layout = resolve_layout(parallel, p.topology, accelerators, global_batch, why);
  if (!layout) {
    e.status = "invalid_layout";
    e.message = why;
    return e;
  }
  e.layout = *layout;
  if (const std::string why_not = unsupported_split(w, e.layout.tp, e.layout.cp, e.layout.pp, e.layout.virtual_stages); !why_not.empty()) {
    e.status = "invalid_layout";
    e.message = why_not;
    return e;
  }
  e.memory = estimate_memory(w, p.accelerator, e.layout);
  if (!e.memory.fits()) {
    e.status = "out_of_memory";
    e.message = e.layout.describe() + " " + e.memory.describe();
    return e;
  }
  e.step = simulate_step(w, p, e.layout, accelerators, fidelity);
  const ObservedConvergence seen = observed_convergence(w, global_batch);
  e.convergence = samples_to_converge(w, global_batch);
  const double rcp_mean = e.convergence.mean_samples;  // what the RCP checker compares with
  e.convergence.mean_samples = seen.expected;  // runs stop at an evaluation
  e.steps = e.convergence.mean_samples / static_cast<double>(global_batch);
  e.evaluation = evaluation_at(e, w, e.convergence.mean_samples);
  e.run_time = scale(e.step.step, e.steps) + e.evaluation.total;
  // The score's expectation: the run time scaled by E[max(mean of runs, RCP mean)] / E[samples]
  // (exact where the time is proportional to the samples; the once-per-run costs are not, a
  // second-order difference).
  e.rcp_normalisation = scored_convergence(seen, rcp_mean, w.runs_per_result).normalisation();
  e.time_to_train = scale(e.run_time, e.rcp_normalisation);
  e.p10 = e.p50 = e.p90 = e.time_to_train;
  e.run_p10 = e.run_p90 = e.run_time;
  return e;
}

EvaluationCost evaluation_at(const TrainingEstimate& e, const Workload& w, double samples) {
  return evaluation_cost(w, e.layout, e.step.evaluation_forward, e.step.step,
                         e.nodes, samples, e.global_batch);
}

Duration time_to_train_at(const TrainingEstimate& e, const Workload& w, double samples) {
  return scale(e.step.step, samples / static_cast<double>(e.global_batch)) + evaluation_at(e, w, samples).total;
}

double olympic_mean(std::vector<double> runs) {
  std::sort(runs.begin(), runs.end());
  std::size_t lo = 0, hi = runs.size();
  if (runs.size() >= 3) {
    ++lo;
    --hi;
  }
  double sum = 0;
  for (std::size_t i = lo; i < hi; ++i) sum += runs[i];
  return sum / static_cast<double>(hi - lo);
}


void add_prediction_interval(TrainingEstimate& e, const Workload& w, const Platform& p, int samples,
                             std::uint64_t seed, std::uint64_t point) {
  if (!e.ok() || samples <= 0) return;
  RngStream convergence(seed, point, "convergence");
  RngStream stragglers(seed, point, "stragglers");
  RngStream model(seed, point, "model_error");
  // The slowest rank costs the step e.step.straggler on average (sigma x M_N of its compute, as the
  // graph hides it or not). Its two parts vary differently over a run: the persistent spread
  // between GPUs is one draw of M_N for the whole run (the same GPU is the slowest every step),
  // the jitter a fresh one each step, whose sum over s steps is close to normal (central limit).
  const MaxMoments m = max_of_normals(e.accelerators);
  const double sigma = p.rank_speed_sd();
  const double per_step = to_seconds(e.step.straggler);
  const double relative_sd = m.mean > 0 ? std::sqrt(m.variance) / m.mean : 0;  // of one draw of M_N
  const double persistent = sigma > 0 ? p.gpu_speed_spread / sigma * relative_sd : 0;
  const double jitter = sigma > 0 ? p.compute_jitter / sigma * relative_sd : 0;
  const double base_step = to_seconds(e.step.step - e.step.straggler);
  const double gbs = static_cast<double>(e.global_batch);
  // Each run pays for the evaluations it performs (those past the ones the rules skip, so not in
  // proportion to its samples); the scoring after the last one and the set-up before the first
  // happen once whatever the run's length.
  const double each_evaluation = to_seconds(e.evaluation.each);
  const double once = to_seconds(e.evaluation.scoring + e.evaluation.first);
  const ObservedConvergence seen = observed_convergence(w, e.global_batch);
  const double rcp_mean = samples_to_converge(w, e.global_batch).mean_samples;
  std::vector<double> scores, run_times;
  std::vector<double> runs(static_cast<std::size_t>(w.runs_per_result));
  std::vector<double> trained(runs.size());
  for (int k = 0; k < samples; ++k) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      double& run = runs[r];
      const double drawn = std::max(gbs, convergence.normal(seen.continuous_mean, seen.stdev));
      const double converge = observe(drawn, seen.interval, seen.first);
      trained[r] = converge;
      const double steps = converge / gbs;
      const double waits = per_step * (steps * (1 + persistent * stragglers.normal(0.0, 1.0)) +
                                       std::sqrt(steps) * jitter * stragglers.normal(0.0, 1.0));
      const double evaluations = w.evaluation.timed ? evaluations_performed(w, e.global_batch, converge) : 0;
      run = steps * base_step + std::max(0.0, waits) + evaluations * each_evaluation + once;
    }
    // RCP normalisation: runs faster than the reference on the olympic mean are scaled up to it.
    const double normalisation = std::max(1.0, rcp_mean / olympic_mean(trained));
    // The model's own error, as calibration measured it on held-out systems, multiplies the score.
    const double run = olympic_mean(runs) * det::exp(model.normal(0.0, w.model_error_at(e.accelerators)));
    run_times.push_back(run);
    scores.push_back(run * normalisation);
  }
  std::sort(scores.begin(), scores.end());
  e.p10 = seconds(sorted_quantile(scores, 0.10));
  e.p50 = seconds(sorted_quantile(scores, 0.50));
  e.p90 = seconds(sorted_quantile(scores, 0.90));
  std::sort(run_times.begin(), run_times.end());
  e.run_p10 = seconds(sorted_quantile(run_times, 0.10));
  e.run_p90 = seconds(sorted_quantile(run_times, 0.90));
}

TrainingEstimate estimate_at_level(const Workload& w, Platform p, int n, std::int64_t gbs, const ParallelSpec& spec, double factor,
                                   Fidelity fidelity) {
  p.accelerator.efficiency_scale *= factor;
  return estimate_training(w, p, n, gbs, spec, fidelity);
}

LevelSolution solve_software_level(const std::function<Duration(double)>& time_at, Duration target, double lo, double hi) {
  const double goal = det::log(to_seconds(target));
  // A time that is not positive and finite (a layout that no longer fits) has no gap: NaN.
  const auto gap = [&](double x) {
    const double t = to_seconds(time_at(det::exp(x)));
    return t > 0 && std::isfinite(t) ? det::log(t) - goal : std::numeric_limits<double>::quiet_NaN();
  };
  const double x_lo = det::log(lo) - 1, x_hi = det::log(hi) + 1;
  double x0 = 0, f0 = gap(x0);
  if (!std::isfinite(f0)) return {1.0, f0};
  double x1 = std::clamp(f0, x_lo, x_hi), f1 = gap(x1);  // time about as 1 / factor: the first guess
  for (int i = 0; i < 40 && std::isfinite(f1) && std::fabs(f1) > 1e-9; ++i) {
    if (f1 == f0) break;
    const double x2 = x1 - f1 * (x1 - x0) / (f1 - f0);
    x0 = x1;
    f0 = f1;
    x1 = std::clamp(x2, x_lo, x_hi);
    f1 = gap(x1);
  }
  return {det::exp(x1), f1};
}

}  // namespace sp::models
