// A platform: nodes of one accelerator kind joined by a scale-up link inside the node and a
// scale-out fabric (NICs) between nodes. Each tier is an alpha-beta link: a per-step latency and
// a bandwidth, of which collectives reach a measured fraction (protocol overhead).
#pragma once

#include <string>

#include "models/catalog.hpp"
#include "models/hardware/accelerator.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct LinkTier {
  BytesPerSecond bandwidth;  // line rate, per direction
  double efficiency = 1.0;   // fraction of the line rate a ring collective sustains
  Duration latency;          // per algorithm step (alpha)

  BytesPerSecond effective() const { return bandwidth * efficiency; }
};

struct Platform {
  std::string name;
  Accelerator accelerator;
  int accelerators_per_node = 1;
  LinkTier scale_up;  // per accelerator
  int nics_per_node = 0;
  LinkTier nic;  // per NIC

  int nodes_for(int accelerators) const {
    return (accelerators + accelerators_per_node - 1) / accelerators_per_node;
  }
};

/// Parses a platform mapping; quantities missing from scale_up/scale_out default to the
/// accelerator's hardware file (its scale-up link and typical node).
Platform parse_platform(const config::ConfigNode& node, const Catalog& catalog);

}  // namespace sp::models
