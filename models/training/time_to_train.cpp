#include "models/training/time_to_train.hpp"

#include "models/compute/compute_model.hpp"

namespace sp::models {

TrainingEstimate estimate_training(const Workload& w, const Platform& p, int accelerators,
                                   std::int64_t global_batch, Fidelity fidelity) {
  TrainingEstimate e;
  e.accelerators = accelerators;
  e.nodes = p.nodes_for(accelerators);
  e.global_batch = global_batch;
  e.per_accelerator_batch = static_cast<double>(global_batch) / accelerators;
  const ComputeModel compute = compute_model_for(w, p.accelerator.peak.at(w.precision));
  e.compute_efficiency = compute.efficiency(e.per_accelerator_batch);
  e.step = simulate_step(w, p, accelerators, e.per_accelerator_batch, fidelity);
  e.convergence = samples_to_converge(w, global_batch);
  e.steps = e.convergence.mean_samples / static_cast<double>(global_batch);
  e.evaluation = evaluation_cost(w, compute, accelerators, e.nodes, e.per_accelerator_batch,
                                 e.convergence.mean_samples, global_batch);
  e.time_to_train = scale(e.step.step, e.steps) + e.evaluation.total;
  return e;
}

}  // namespace sp::models
