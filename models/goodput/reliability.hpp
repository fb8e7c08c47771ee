// What stops a long training run and what it costs to go on: the failure sources of a cluster
// (each a mean time between failures per accelerator or per node, with its public source in the
// data file), how long a job takes to notice a failure and restart, where checkpoints go and how
// fast, and whether spare nodes wait. The defaults are models/goodput/gpu_cluster.yaml; a platform
// file and a scenario may override any key under `reliability:`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/network/platform.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct FailureSource {
  std::string name;
  enum class Per { accelerator, node } per = Per::node;
  double mtbf_hours = 0;    // of one component (one accelerator or one node)
  bool takes_node = true;   // hardware: the node leaves the job until repaired or replaced
};

struct Reliability {
  bool failures = true;  // false: no run ever fails; effective time = time to train
  std::vector<FailureSource> sources;
  Duration detection;       // from the failure to the job stopping (health checks, watchdogs)
  Duration relaunch;        // scheduler, containers and processes: the same at any size
  Duration init_per_node;   // rendezvous and communicators: grows with the nodes
  BytesPerSecond write_per_node, read_per_node;  // to and from the checkpoint storage
  std::optional<BytesPerSecond> storage_limit;   // the file system's aggregate; none: grows with the nodes
  bool async_checkpoint = true;
  BytesPerSecond snapshot_per_accelerator;  // device to host copy that an async checkpoint stalls for
  std::optional<Duration> checkpoint_interval;  // of training; none: the one minimising expected time
  std::optional<int> spare_nodes;               // none: a replacement is always there
  Duration repair;                              // a failed node's time away when spares are counted
};

/// Reads `node`'s keys over `base` (every key optional): the platform's over the defaults, the
/// scenario's over the platform's.
Reliability parse_reliability(const config::ConfigNode& node, Reliability base);
/// models/goodput/gpu_cluster.yaml, read once.
const Reliability& default_reliability();

/// What the reliability of a cluster means for one job of `accelerators`.
struct JobReliability {
  double failures_per_hour = 0;  // of the whole job, all sources
  double node_share = 0;         // of the failures, those that take a node away
  Bytes checkpoint;              // weights and optimizer states of the trainable parameters
  Bytes restore;                 // read at a restart: the checkpoint and the frozen weights
  Duration write;                // one checkpoint to storage, all nodes writing their shards
  Duration stall;                // training time lost per checkpoint: the write, or the snapshot (async)
  Duration restart;              // detection + relaunch + init of every node + reading `restore`
  int nodes = 0;

  double mtbf_hours() const { return failures_per_hour > 0 ? 1 / failures_per_hour : 0; }
};

JobReliability job_reliability(const Reliability& r, const Workload& w, const Platform& p, int accelerators);

}  // namespace sp::models
