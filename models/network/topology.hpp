// The network of a platform as tiers, innermost first: a scale-up domain (NVSwitch, PCIe, an
// NVLink bridge between pairs, a TPU ICI torus), optionally a host PCIe tier joining several
// scale-up domains inside a node, and the scale-out fabric between nodes (NICs on a
// rail-optimised fat tree). A communication group spans a number of units at each tier (its
// fan-out), and the collective cost models read bandwidths, latencies and fan-outs from here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

enum class TierKind { switch_, pcie, bridge, torus, fat_tree };
const char* tier_kind_name(TierKind k);

/// Reduction done by the fabric itself: NVLink SHARP (NVLS) on an NVSwitch, SHARP on an
/// InfiniBand fat tree. Each rank sends and receives its data once through the switch.
struct InNetworkReduction {
  std::string name;   // "nvls", "sharp"
  double efficiency;  // algorithm bandwidth / per-accelerator line rate
  Duration latency;   // start-up of one reduction (pipeline fill, switch set-up)
};

/// A measured regime of one tier (`scalepoint calibrate network`): from this collective size up
/// to the next segment's, every algorithm step costs `latency` and streams at `bandwidth` (per
/// accelerator inside a node; per node for the scale-out tier, measured one rank per node).
/// Segments may be measured per group size: a group uses those of the nearest measured size
/// at that tier (ranks 0: any size).
struct MeasuredSegment {
  Bytes from;
  Duration latency;
  BytesPerSecond bandwidth;
  int ranks = 0;
};

struct Tier {
  std::string name;       // "scale_up", "host", "scale_out"
  TierKind kind = TierKind::switch_;
  int size = 0;           // units of the tier below per unit of this tier; 0 = unbounded
  BytesPerSecond bandwidth;  // per accelerator, per direction, line rate
  double efficiency = 1;  // fraction of the line rate sustained by ring traffic (Simple protocol)
  double oversubscription = 1;  // fat tree: downlink / uplink capacity of a leaf switch
  int nodes_per_leaf = 0;       // fat tree: nodes under one leaf switch (0: one non-blocking switch)
  int nics_per_node = 0;        // fat tree: switch ports each node uses (what the switch count follows)
  std::optional<InNetworkReduction> reduction;
  std::vector<MeasuredSegment> measured;  // ascending `from`; empty: the line rate and protocol costs
  /// SMs a collective crossing this tier keeps busy (NCCL channels, one CTA per SM, never shared
  /// with compute kernels): compute beside it runs on the rest (step_executor.hpp).
  int communication_sms = 0;

  BytesPerSecond effective() const { return bandwidth * efficiency; }
};

struct Topology {
  std::vector<Tier> tiers;  // innermost first; the last one is unbounded
  int accelerators_per_node = 1;
};

/// How a group of ranks spreads over the tiers: fan_out[t] units of tier t-1 inside each unit of
/// tier t (fan_out[0] accelerators per scale-up domain). The product is the group size.
struct Group {
  std::vector<int> fan_out;

  int ranks() const;
  /// Ranks inside one unit of tier t (product of fan_out[0..t]).
  int ranks_below(std::size_t t) const;
  /// The outermost tier the group actually spans (fan_out > 1), or 0.
  std::size_t top_tier() const;
};

/// The group of the first `ranks` accelerators, packed tier by tier (a data-parallel group over
/// the whole job, or a tensor-parallel group inside a node).
Group packed_group(const Topology& topo, int ranks);

}  // namespace sp::models
