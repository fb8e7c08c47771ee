// One long training run on the event engine, failure by failure: training advances between
// checkpoints; a failure (a Poisson process of the job's rate, drawn whatever the job is doing,
// restarts included) throws away the training since the last durable checkpoint and costs a
// restart; a node-taking failure waits for a spare when spares are counted and none is left.
// Synchronous checkpoints stop training for their write; asynchronous ones for a snapshot copy,
// and become durable a write time later (a failure before that falls back to the previous one).
// Runs last days to months, beyond the step engine's picosecond clock (about 106 days), so this
// engine's ticks are nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/rng.hpp"

namespace sp::models {

struct RunPlan {
  double work_s = 0;      // training without failures or checkpoints (the run's time to train)
  double interval_s = 0;  // of training between checkpoints (>= work_s: none)
  double stall_s = 0;     // training stopped per checkpoint
  double write_s = 0;     // from the snapshot to the checkpoint being durable (async; sync: stall_s)
  bool async = false;
  double restart_s = 0;   // detection to training again
  double failures_per_s = 0;
  double node_share = 0;  // of failures that take a node away
  std::optional<int> spare_nodes;  // none: never wait for a replacement
  double repair_s = 0;             // a node's time away when spares are counted
};

struct RunSpan {
  enum class Kind { train, checkpoint, restart, wait_spare, failure } kind;  // failure: an instant
  double start_s, end_s;
};

struct RunOutcome {
  double wall_s = 0;
  int failures = 0;
  int checkpoints = 0;
  double lost_s = 0;        // training done and thrown away
  double checkpoint_s = 0;  // training stopped for checkpoints
  double restart_s = 0;     // restarting, interrupted restarts included
  double wait_s = 0;        // waiting for a spare node
};

/// One run; `trace` (when given) receives its spans in time order.
RunOutcome simulate_run(const RunPlan& plan, RngStream& rng, std::vector<RunSpan>* trace = nullptr);

/// The spans as Chrome trace JSON (one row per kind, failures as instants).
std::string run_trace_json(const std::vector<RunSpan>& spans);

}  // namespace sp::models
