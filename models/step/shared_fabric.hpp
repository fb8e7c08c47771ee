// Several jobs on one cluster's fat tree, in flow fidelity: each job's step graph is played step
// after step on one engine, its own GPUs' links (NVLink ports, NICs) private to it, and each
// leaf's uplinks one link that every job with nodes under that leaf shares max-min fairly with
// the others. A collective of a job spread over several leaves loads each of them with what
// crosses it (placed_leaf_crossing: a ring once, NCCL's trees by their edges leaving the leaf), so two
// jobs whose rings cross one oversubscribed uplink at once each get half of it, and jobs under
// disjoint leaves never meet. Jobs are not in lock-step: each starts its next step when its last
// one ends, so their phases drift over the steps simulated.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/network/platform.hpp"
#include "models/step/step_executor.hpp"
#include "models/step/step_graph.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct FabricJob {
  const StepGraph* graph = nullptr;
  std::vector<int> leaf_nodes;  // the job's nodes under each leaf of the cluster (index: leaf)
  int steps = 1;
  Duration start;               // when its first step starts
  const Platform* platform = nullptr;  // its accelerators and their calibration (else the cluster's)
};

struct FabricJobSteps {
  std::vector<Duration> steps;  // each step's time, in order
  Duration mean() const;
};

struct FabricRun {
  std::vector<FabricJobSteps> jobs;
  std::vector<double> leaf_utilization;  // per leaf: bytes its uplinks carried / (capacity x run)
  Duration span;                         // from the first start to the last step's end
  std::uint64_t events = 0;
};

/// The scale-out tier whose leaves jobs share: the platform's fat tree with nodes_per_leaf set.
/// Throws ModelError naming the platform when it has none.
std::size_t leaf_tier(const Platform& platform);

/// Plays every job's steps together on `leaves` leaves of `platform`'s fat tree; `on_step`, when
/// given, sees each step's operations (absolute times) as it ends.
using StepSeen = std::function<void(std::size_t job, const Execution& step)>;
FabricRun run_shared_fabric(const Platform& platform, int leaves, const std::vector<FabricJob>& jobs,
                            const StepSeen& on_step = nullptr);

/// Where jobs of the given node counts go on `leaves` leaves of `nodes_per_leaf` nodes each:
/// packed fills leaves in order, job after job; spread deals each job's nodes round the leaves
/// that have room, one at a time; random gives each job free nodes drawn uniformly (a scheduler
/// that ignores the fabric), from `seed`. Throws ModelError when the jobs do not fit.
enum class Placement { packed, spread, random, listed };  // listed: the scenario's node lists (cluster.hpp)
std::vector<std::vector<int>> place_jobs(Placement policy, const std::vector<int>& job_nodes, int leaves,
                                         int nodes_per_leaf, std::uint64_t seed = 0);

}  // namespace sp::models
