// Algorithm and protocol choice as NCCL's tuner makes it: predict every allowed combination and
// run the cheapest (NCCL's tuning model, src/graph/tuning.cc). Ties go to the earlier algorithm, then protocol, in enum
// order, so the choice is deterministic.
#include <algorithm>

#include "models/collective/collective.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

namespace {

// The platform as its measurements describe it at `bytes`: each measured tier streams at its
// segment's bandwidth with its segment's per-step latency, which already hold the library's
// protocol and algorithm behaviour at that size; so one protocol (Simple, no separate launch)
// and the ring, whose cost form the segments were fitted with.
Platform measured_view(const Platform& platform, const Group& group, Bytes bytes) {
  Platform v = platform;
  ProtocolCosts& simple = v.protocols[static_cast<int>(Protocol::simple)];
  simple.launch = Duration{};
  simple.bandwidth_factor = 1;
  for (Protocol p : kProtocols) {
    if (p != Protocol::simple) v.protocols[static_cast<int>(p)].available = false;
  }
  v.library_algorithms = {Algorithm::ring};
  for (std::size_t t = 0; t < v.topology.tiers.size(); ++t) {
    Tier& tier = v.topology.tiers[t];
    if (tier.measured.empty()) continue;
    // The segments of the measured group size nearest this group's at this tier.
    const int here = t < group.fan_out.size() ? group.fan_out[t] : 1;
    int ranks = tier.measured.front().ranks;
    for (const MeasuredSegment& m : tier.measured) {
      if (std::abs(m.ranks - here) < std::abs(ranks - here)) ranks = m.ranks;
    }
    const MeasuredSegment* seg = nullptr;
    for (const MeasuredSegment& m : tier.measured) {
      if (m.ranks == ranks && (!seg || !(bytes < m.from))) seg = &m;
    }
    const bool per_node = t + 1 == v.topology.tiers.size();
    tier.bandwidth = per_node ? seg->bandwidth / static_cast<double>(v.topology.accelerators_per_node) : seg->bandwidth;
    tier.efficiency = 1;
    simple.step[t] = seg->latency;
    tier.measured.clear();
  }
  return v;
}

}  // namespace

Selected select_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes bytes,
                           const CollectiveChoice& choice) {
  for (const Tier& t : platform.topology.tiers) {
    if (!t.measured.empty()) return select_collective(measured_view(platform, group, bytes), group, op, bytes, choice);
  }
  std::optional<Selected> best;
  for (Algorithm a : kAlgorithms) {
    if (choice.algorithm ? a != *choice.algorithm
                         : (op != CollectiveOp::all_to_all &&
                            std::find(platform.library_algorithms.begin(), platform.library_algorithms.end(), a) ==
                                platform.library_algorithms.end())) {
      continue;
    }
    for (Protocol p : kProtocols) {
      if (choice.protocol && p != *choice.protocol) continue;
      const std::optional<CostTerms> terms = cost_terms(platform, group, op, a, p);
      if (!terms) continue;
      const Duration t = terms->time(bytes);
      if (!best || t < best->time) best = Selected{*terms, t};
    }
  }
  if (!best) {
    std::string what = std::string(op_name(op)) + " over " + std::to_string(group.ranks()) + " ranks";
    if (choice.algorithm) what += std::string(" with ") + algorithm_name(*choice.algorithm);
    if (choice.protocol) what += std::string(" and ") + protocol_name(*choice.protocol);
    throw ModelError("no algorithm applies to " + what + " on platform '" + platform.name + "'");
  }
  return *best;
}

}  // namespace sp::models
