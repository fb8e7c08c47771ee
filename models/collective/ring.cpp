#include "models/collective/ring.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace sp::models {

RingCostTerms ring_all_reduce_terms(const Platform& platform, int ranks) {
  RingCostTerms t;
  if (ranks <= 1) return t;
  const int nodes = platform.nodes_for(ranks);
  const std::int64_t steps = 2 * static_cast<std::int64_t>(ranks - 1);
  t.inter_steps = nodes > 1 ? 2 * static_cast<std::int64_t>(nodes - 1) : 0;
  t.intra_steps = steps - t.inter_steps;
  t.bytes_factor = 2.0 * (ranks - 1) / ranks;
  t.bus_bandwidth = platform.scale_up.effective();
  if (nodes > 1) {
    if (platform.nics_per_node <= 0) {
      throw ModelError("a ring over " + std::to_string(nodes) + " nodes needs NICs, and platform '" +
                       platform.name + "' has none");
    }
    t.bus_bandwidth = std::min(t.bus_bandwidth, platform.nic.effective() * platform.nics_per_node);
  }
  return t;
}

Duration ring_all_reduce_time(const Platform& platform, int ranks, Bytes bytes) {
  const RingCostTerms t = ring_all_reduce_terms(platform, ranks);
  if (ranks <= 1) return Duration::zero();
  return platform.scale_up.latency * t.intra_steps + platform.nic.latency * t.inter_steps +
         bytes * t.bytes_factor / t.bus_bandwidth;
}

}  // namespace sp::models
