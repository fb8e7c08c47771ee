// A platform: nodes of one accelerator kind, the network tiers that join them, and the cost
// constants of its collective library's protocols. Platform files live in scenarios/platforms/.
#pragma once

#include <array>
#include <string>

#include "models/catalog.hpp"
#include "models/collective/kinds.hpp"
#include "models/hardware/accelerator.hpp"
#include "models/network/topology.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

struct Platform {
  std::string name;
  Accelerator accelerator;
  Topology topology;
  std::array<ProtocolCosts, 3> protocols;  // indexed by Protocol
  /// The algorithms the platform's collective library chooses among (NCCL: ring, tree, nvls,
  /// sharp); the others run only when asked for.
  std::vector<Algorithm> library_algorithms;
  /// Relative standard deviation of one accelerator's compute time from step to step (OS noise,
  /// clocks, thermal throttling): what stragglers are drawn from.
  double compute_jitter = 0;

  int accelerators_per_node() const { return topology.accelerators_per_node; }
  int nodes_for(int accelerators) const {
    const int per = accelerators_per_node();
    return (accelerators + per - 1) / per;
  }
  const ProtocolCosts& costs(Protocol p) const { return protocols[static_cast<int>(p)]; }
};

/// Parses a platform mapping (see scenarios/platforms/*.yaml). Quantities missing from the
/// tiers default to the accelerator's hardware file (scale-up link, typical node and NICs).
Platform parse_platform(const config::ConfigNode& node, const Catalog& catalog);

}  // namespace sp::models
