// A cluster scenario: several training jobs on one platform's fat tree (leaves, spines,
// oversubscription), placed by a policy, their steps played together in flow fidelity
// (models/step/shared_fabric.hpp). Each job is a scenario of its own (workload, batch,
// layouts, counts) on the cluster's platform; at most one job lists several accelerator counts,
// and the cluster is simulated at each of them with the others fixed, so that its break-even N
// can be read alone and beside its neighbours under each placement.
//
// A job's time to train beside the others is its time alone with every step as long as it was
// together: run_time + steps x (step together - step alone, both on its placement), times the
// RCP normalisation (time_to_train.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/step/shared_fabric.hpp"
#include "sim/output/table.hpp"
#include "sim/scenario/break_even.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

struct ClusterJobSpec {
  ScenarioSpec scenario;  // its workload, batch, layouts and counts on the cluster's platform
  Duration start;         // when its first step starts in the window
  std::vector<int> nodes;  // for the `explicit` placement: its nodes (leaf = node / nodes_per_leaf), first ones used
};

struct ClusterSpec {
  std::string name, description, file;
  std::string resolved_yaml;
  std::uint64_t seed = 0;  // of the random placement (point k draws from seed + k)
  models::Platform platform;
  int leaves = 0;
  std::vector<models::Placement> placements;
  int steps = 0;  // steps each job plays together
  std::vector<ClusterJobSpec> jobs;
  int varied = -1;  // the job whose accelerator count varies, or -1

  /// The varied job's counts, or one 0 when none varies.
  std::vector<int> sizes() const;
  /// Job j's count at point k of sizes().
  int accelerators(std::size_t job, std::size_t k) const;
};

ClusterSpec load_cluster(const std::string& file, const std::vector<config::Override>& overrides,
                         const models::Catalog& catalog);

struct ClusterJobRow {
  models::Placement placement = models::Placement::packed;
  std::size_t point = 0;  // index into sizes()
  std::size_t job = 0;
  std::string status = "ok";  // or why the job did not run (out_of_memory ...)
  models::TrainingEstimate alone;  // as `run` gives it
  std::vector<int> leaf_nodes;     // its nodes under each leaf
  Duration step_alone, step_together;  // on its placement, host time included; mean over steps
  double busiest_uplink = 0;  // utilisation of the busiest leaf uplink it uses, while together
  int busiest_leaf = -1;
  double ttt_alone_s = 0, ttt_together_s = 0;
};

struct ClusterResult {
  std::vector<ClusterJobRow> rows;  // by placement, then point, then job
  /// Per placement: the varied job's break-even points alone (first) and together.
  std::vector<std::vector<BreakEven>> break_even_alone, break_even_together;
  std::string timeline;  // Chrome trace: a window of every job's steps, first placement, last point
};

/// `progress(done, total)` after each simulated point.
ClusterResult run_cluster(const ClusterSpec& spec, const std::function<void(int, int)>& progress = nullptr);

output::Table cluster_table(const ClusterSpec& spec, const ClusterResult& result);

const char* placement_name(models::Placement p);

}  // namespace sp
