#include "models/training/evaluation.hpp"

#include <algorithm>
#include <cmath>

namespace sp::models {

double evaluation_interval_samples(const Workload& w, std::int64_t gbs) {
  const EvaluationRule& e = w.evaluation;
  if (e.interval_epochs > 0) return e.interval_epochs * static_cast<double>(w.train_samples);
  double interval = e.interval_per_global_batch * static_cast<double>(gbs) + e.interval_samples;
  if (e.round_down_to > 0) {
    const double r = static_cast<double>(e.round_down_to);
    interval = std::max(r, std::floor(interval / r) * r);
  }
  if (e.round_up_to_global_batch) {
    const double g = static_cast<double>(gbs);
    interval = std::ceil(interval / g) * g;
  }
  return interval;
}

double evaluations_skipped(const Workload& w, std::int64_t gbs) {
  const EvaluationRule& e = w.evaluation;
  return std::floor(e.skip_per_global_batch * static_cast<double>(gbs) + static_cast<double>(e.skip_count));
}

double first_evaluation_samples(const Workload& w, std::int64_t gbs) {
  return (evaluations_skipped(w, gbs) + 1) * evaluation_interval_samples(w, gbs);
}

double evaluations_performed(const Workload& w, std::int64_t gbs, double samples) {
  return std::max(0.0, samples / evaluation_interval_samples(w, gbs) - evaluations_skipped(w, gbs));
}

Duration exposed_scoring(Duration scoring, Duration between, double evaluations) {
  if (evaluations <= 0 || scoring <= Duration{}) return Duration{};
  // One worker, first in first out: evaluation i ends at i x between and its scoring starts when
  // the worker is free, so the last one finishes scoring + (k - 1) x max(0, scoring - between)
  // after the last evaluation.
  const Duration backlog = std::max(Duration{}, scoring - between);
  return scoring + scale(backlog, std::max(0.0, evaluations - 1.0));
}

Duration evaluation_fixed_cost(const Workload& w, int nodes) {
  return w.evaluation_costs.overhead + w.evaluation_costs.host_work / std::max(1, nodes);
}

EvaluationCost evaluation_cost(const Workload& w, const ParallelLayout& lay, MicroBatchForward pass,
                               Duration step, int nodes, double samples_to_converge, std::int64_t gbs) {
  EvaluationCost c;
  const EvaluationRule& e = w.evaluation;
  if (!e.timed) return c;
  const double interval = evaluation_interval_samples(w, gbs);
  c.evaluations = evaluations_performed(w, gbs, samples_to_converge);
  // Each replica evaluates its share of the set in whole micro-batches, through every stage.
  const std::int64_t per_replica = (e.samples + lay.dp - 1) / lay.dp;
  const std::int64_t micro_batches = (per_replica + lay.micro_batch - 1) / lay.micro_batch;
  const std::int64_t passes = micro_batches + lay.pp - 1;
  c.forward = pass.compute * passes;
  c.waits = pass.waits * passes;
  const Duration forward = c.forward + c.waits;
  // The loop's steps: the set in training global batches (the last one partial), or each
  // replica's micro-batches one at a time.
  c.batches = e.batch_is_global_batch ? (e.samples + gbs - 1) / gbs : micro_batches;
  const EvaluationCosts& k = w.evaluation_costs;
  c.each = forward + scale(k.batch_overhead, static_cast<double>(c.batches)) + evaluation_fixed_cost(w, nodes);
  c.scoring = exposed_scoring(k.asynchronous_scoring, scale(step, interval / static_cast<double>(gbs)) + c.each,
                              c.evaluations);
  if (c.evaluations > 0) {
    double loaders = 1;
    if (const auto& l = k.first_overhead_per_loader) {
      loaders = (lay.micro_batch > l->micro_batch_above ? 1 : 0) + (per_replica > l->evaluation_samples_above ? 1 : 0);
    }
    c.first = scale(k.first_overhead, loaders);
  }
  c.total = scale(c.each, c.evaluations) + c.scoring + c.first;
  return c;
}

}  // namespace sp::models
