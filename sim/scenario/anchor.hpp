// A measured time to train of the user's own system at one accelerator count: the scenario's
// `anchor: {accelerators: 8, time_to_train: "28.2 min"}` (or `run --anchor 8=28.2min`). It sets
// the system's software level, the accelerator's efficiency_scale, to what makes the model give
// that time at that N, before the scaling is predicted: what the software, the convergence and the
// cluster of that one measurement share with the larger systems is taken from it, and only what
// changes with N is the model's (validate --scaling judges exactly that).
#pragma once

#include <optional>

#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"

namespace sp {

struct ScenarioSpec;

struct Anchor {
  int accelerators = 0;
  Duration time_to_train;
  // What it did: the model's time at that N before, and the factor on the software level.
  Duration modelled_before;
  double software_factor = 1;
};

/// The software level's plausible range: a measurement further from the model than this says the
/// input (or the system) is not what the scenario describes.
inline constexpr double kAnchorFactorMin = 0.2, kAnchorFactorMax = 5.0;

/// Parses `anchor:` (accelerators, time_to_train).
Anchor parse_anchor(const config::ConfigNode& node);

/// Sets spec's software level so that the model's time to train at the anchor's N is the
/// measured one (the layout the search takes there held fixed while solving); fills the anchor's
/// modelled_before and software_factor. An anchor the model cannot meet within
/// [kAnchorFactorMin, kAnchorFactorMax], or at an N without a batch or a layout, is an InputError
/// at `where`.
void apply_anchor(ScenarioSpec& spec, Anchor& anchor, const config::ConfigNode& where);

}  // namespace sp
