// A measurement of the user's own system at one accelerator count: its time to train, the
// scenario's `anchor: {accelerators: 8, time_to_train: "28.2 min"}` (or `run --anchor 8=28.2min`),
// or its steady training step, `anchor: {accelerators: 8, step_time: "3.68 s"}` (`run --anchor
// 8=3.68s/step`). It sets the system's software level, the accelerator's efficiency_scale, to what
// makes the model give that time at that N, before the scaling is predicted: what the software,
// the convergence and the cluster of that one measurement share with the larger systems is taken
// from it, and only what changes with N is the model's (validate --scaling judges exactly that).
// A step time needs no run to convergence (minutes of one node instead of a training run) and
// carries none of a run's convergence spread (about 9 % a run for Llama2-70B LoRA, the RCP's
// spread), but neither the evaluations' and set-up's share of the measured run.
#pragma once

#include <optional>
#include <string>

#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"

namespace sp {

struct ScenarioSpec;

struct Anchor {
  enum class Quantity { time_to_train, step_time };
  int accelerators = 0;
  Quantity quantity = Quantity::time_to_train;
  Duration measured;  // the time to train, or one training step's time
  // What it did: the model's value of that quantity at that N before, and the factor on the
  // software level.
  Duration modelled_before;
  double software_factor = 1;
};

/// Parses `anchor:` (accelerators and one of time_to_train, step_time).
Anchor parse_anchor(const config::ConfigNode& node);

/// Sets spec's software level so that the model's time to train (or step time) at the anchor's N
/// is the measured one (the layout the search takes there held fixed while solving); fills the
/// anchor's modelled_before and software_factor. An anchor the model cannot meet within
/// [models::kSoftwareLevelMin, kSoftwareLevelMax], or at an N without a batch or a layout, is an InputError
/// at `where`.
void apply_anchor(ScenarioSpec& spec, Anchor& anchor, const config::ConfigNode& where);

/// One line for the terminal and the manifest: what was measured, what the model gave, the level.
std::string describe_anchor(const Anchor& anchor);

}  // namespace sp
