#include "models/network/topology.hpp"

#include <stdexcept>

namespace sp::models {

const char* tier_kind_name(TierKind k) {
  switch (k) {
    case TierKind::switch_: return "switch";
    case TierKind::pcie: return "pcie";
    case TierKind::bridge: return "bridge";
    case TierKind::torus: return "torus";
    case TierKind::fat_tree: return "fat_tree";
  }
  return "?";
}

int Group::ranks() const {
  int n = 1;
  for (int f : fan_out) n *= f;
  return n;
}

int Group::ranks_below(std::size_t t) const {
  int n = 1;
  for (std::size_t i = 0; i <= t && i < fan_out.size(); ++i) n *= fan_out[i];
  return n;
}

std::size_t Group::top_tier() const {
  for (std::size_t t = fan_out.size(); t-- > 0;) {
    if (fan_out[t] > 1) return t;
  }
  return 0;
}

Group packed_group(const Topology& topo, int ranks) {
  if (ranks < 1) throw std::invalid_argument("a group needs at least one rank");
  Group g;
  int left = ranks;
  for (std::size_t t = 0; t < topo.tiers.size(); ++t) {
    const int size = topo.tiers[t].size;
    const bool last = t + 1 == topo.tiers.size() || size == 0;
    if (last) {
      g.fan_out.push_back(left);
      left = 1;
    } else {
      const int here = left < size ? left : size;
      if (left % here != 0) {
        throw std::invalid_argument(std::to_string(ranks) + " ranks do not fill whole units of tier " +
                                    topo.tiers[t].name + " (size " + std::to_string(size) + ")");
      }
      g.fan_out.push_back(here);
      left /= here;
    }
  }
  while (g.fan_out.size() < topo.tiers.size()) g.fan_out.push_back(1);
  return g;
}

}  // namespace sp::models
