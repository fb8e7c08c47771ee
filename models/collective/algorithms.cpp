// Closed-form cost terms of each collective algorithm on a tiered topology. Notation: p ranks,
// n bytes, f_t the group's fan-out at tier t, B_t the effective per-accelerator bandwidth of
// tier t (line rate x ring efficiency x protocol factor), a_t the protocol's step latency there.
// What the terms come to for n bytes, and what the other models ask of a collective without
// building its terms, are in cost_terms.cpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective/collective.hpp"

namespace sp::models {

namespace {

struct Ctx {
  const Platform& platform;
  const Group& group;
  const ProtocolCosts& proto;
  std::size_t top;  // outermost tier the group spans
  int p;

  const Tier& tier(std::size_t t) const { return platform.topology.tiers[t]; }
  Duration alpha(std::size_t t) const { return proto.step[t]; }
  BytesPerSecond bw(std::size_t t) const { return tier(t).effective() * proto.bandwidth_factor; }
  /// Ranks of the group inside one unit of tier t (t = -1: a single rank).
  int below(int t) const { return t < 0 ? 1 : group.ranks_below(static_cast<std::size_t>(t)); }
};

bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }
int ceil_log2(int x) {
  int k = 0;
  while ((1 << k) < x) ++k;
  return k;
}
// The depth NCCL's tuning model gives a tree over x vertices (its log2i, floor of log2).
int floor_log2(int x) {
  int k = 0;
  while ((2 << k) <= x) ++k;
  return k;
}

// Near-cubic dimensions of a torus slice of `chips` (TPU slices are 3-D).
std::vector<int> torus_dims(int chips) {
  std::vector<int> d = {1, 1, 1};
  int left = chips;
  for (int f = 2; left > 1;) {
    if (left % f == 0) {
      std::sort(d.begin(), d.end());
      d[0] *= f;
      left /= f;
    } else {
      ++f;
    }
  }
  return d;
}

// Edges per tier of a path through every rank inside one unit of tier `upto`, ranks packed tier
// by tier: at tier t it crosses (units of tier t-1) - (units of tier t) boundaries. A cyclic path
// (a ring) adds the wrap-around edge at the outermost tier it spans.
std::vector<std::int64_t> path_edges(const Ctx& c, std::size_t upto, bool cyclic) {
  std::vector<std::int64_t> e(upto + 1, 0);
  const int ranks = c.below(static_cast<int>(upto));
  for (std::size_t t = 0; t <= upto; ++t) {
    const int units_lower = ranks / c.below(static_cast<int>(t) - 1);
    const int units_here = ranks / c.below(static_cast<int>(t));
    e[t] = units_lower - units_here;
  }
  if (cyclic && ranks > 1) {
    std::size_t t = upto;
    while (t > 0 && e[t] == 0) --t;
    e[t] += 1;
  }
  if (c.tier(0).kind == TierKind::torus && c.group.fan_out[0] > 1) {
    // A torus runs one ring per dimension: sum(d_i - 1) steps through a slice, not f_0 - 1.
    const std::int64_t slices = ranks / c.group.fan_out[0];
    std::int64_t per_slice = 0;
    for (int d : torus_dims(c.group.fan_out[0])) per_slice += d - 1;
    e[0] += slices * (per_slice - (c.group.fan_out[0] - 1));
  }
  return e;
}

// laps x (edges - 1) steps, p - 1 on a cyclic path through every rank (on a torus, per-dimension
// rings: sum(d_i - 1) inside each slice); in steady state every step costs the average hop of the
// ring, so tier t contributes its share e_t / edges of the ring's edges to every step.
// The nodes the group spans: its units of the scale-out tier, the outermost (an NVLink domain of
// several nodes, NVL72's, is one node to the collective library); 1 where it stays inside one.
int nodes_spanned(const Platform& platform, const Group& group) {
  const std::vector<Tier>& tiers = platform.topology.tiers;
  const std::size_t out = tiers.size() - 1;
  if (tiers[out].name != "scale_out" || group.top_tier() < out) return 1;
  return group.fan_out[out];
}

// One step of a ring on tier t. Once the ring spans nodes, NCCL prices every step inside a node
// at least at its network overhead (tuning.cc: "Inter-node rings still have to launch nsteps *
// net overhead"), for all-reduce, reduce-scatter and all-gather, not for broadcast's chain.
Duration ring_step(const Platform& platform, const Group& group, const ProtocolCosts& proto, std::size_t t,
                   bool cyclic) {
  const std::size_t out = platform.topology.tiers.size() - 1;
  if (!cyclic || t >= out || nodes_spanned(platform, group) < 2) return proto.step[t];
  return max(proto.step[t], proto.across(platform.host_cpu).ring_node_step);
}

void add_ring_latency(const Ctx& c, CostTerms& terms, int laps, bool cyclic) {
  const std::vector<std::int64_t> e = path_edges(c, c.top, cyclic);
  std::int64_t edges = 0;
  for (std::int64_t x : e) edges += x;
  const double steps = static_cast<double>(laps) * static_cast<double>(edges - (cyclic && c.p > 1 ? 1 : 0));
  for (std::size_t t = 0; t < e.size(); ++t) {
    if (e[t] > 0) {
      terms.latency.push_back({t, steps * static_cast<double>(e[t]) / static_cast<double>(edges),
                               ring_step(c.platform, c.group, c.proto, t, cyclic)});
    }
  }
}

// Bottleneck of a ring through the tiers its path uses (`edges` from path_edges): where the
// ring leaves a unit of tier t-1 it crosses tier t, and all the group's accelerators in that unit
// share tier t's links (a node's NICs, channels spread over them), so the unit's aggregate bounds
// the ring.
BandwidthTerm ring_bandwidth(const Ctx& c, const std::vector<std::int64_t>& edges, double factor) {
  std::optional<BandwidthTerm> best;
  for (std::size_t t = 0; t < edges.size(); ++t) {
    if (edges[t] == 0) continue;
    const BytesPerSecond unit = c.bw(t) * c.below(static_cast<int>(t) - 1);
    if (!best || unit < best->bandwidth) best = BandwidthTerm{c.tier(t).name, t, factor, unit};
  }
  return best ? *best : BandwidthTerm{c.tier(0).name, 0, factor, c.bw(0)};
}

// Latency terms for RS + AG rings inside one unit of tier `upto` (2(g-1) steps).
void add_inner_rs_ag(const Ctx& c, CostTerms& t, std::size_t upto, int g) {
  const std::vector<std::int64_t> e = path_edges(c, upto, true);
  std::int64_t drop = 2;
  for (std::size_t i = 0; i < e.size(); ++i) {
    std::int64_t steps = 2 * e[i];
    const std::int64_t d = std::min(drop, steps);
    steps -= d;
    drop -= d;
    if (steps > 0) t.latency.push_back({i, static_cast<double>(steps), c.alpha(i)});
  }
  t.bandwidth.push_back(ring_bandwidth(c, e, 2.0 * (g - 1) / g));
}

std::optional<CostTerms> ring(const Ctx& c, CollectiveOp op) {
  CostTerms t;
  int laps = 1;
  double factor = static_cast<double>(c.p - 1) / c.p;
  bool cyclic = true;
  switch (op) {
    case CollectiveOp::all_reduce: laps = 2; factor *= 2; break;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather: break;
    case CollectiveOp::broadcast: factor = 1; cyclic = false; break;  // a pipelined chain
    case CollectiveOp::all_to_all: return std::nullopt;
  }
  add_ring_latency(c, t, laps, cyclic);
  if (!cyclic) {  // a chain streams at its slowest hop
    t.bandwidth.push_back(ring_bandwidth(c, path_edges(c, c.top, cyclic), factor));
    return t;
  }
  t.combine = Combine::ring;
  const std::vector<std::int64_t> e = path_edges(c, c.top, true);
  std::int64_t edges = 0;
  for (std::int64_t x : e) edges += x;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i] == 0) continue;
    t.bandwidth.push_back({c.tier(i).name, i, factor, c.bw(i) * c.below(static_cast<int>(i) - 1),
                           static_cast<double>(e[i]) / static_cast<double>(edges)});
  }
  return t;
}

// Inside a node a chain; across nodes NCCL's double binary tree. Each node is an inner node of
// one tree and a leaf of the other, so with more than two nodes it sends and receives 2n (up and
// down, both trees); with two nodes n.
std::optional<CostTerms> tree(const Ctx& c, CollectiveOp op) {
  // NCCL runs broadcast (and reduce) on rings only (src/graph/tuning.cc skips every other
  // algorithm for them).
  if (op != CollectiveOp::all_reduce) return std::nullopt;
  CostTerms t;
  const int nodes = c.top > 0 ? c.group.fan_out[c.top] : 1;
  const std::size_t inner_top = c.top > 0 ? c.top - 1 : 0;
  const std::vector<std::int64_t> chain = path_edges(c, inner_top, false);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] > 0) t.latency.push_back({i, 2.0 * static_cast<double>(chain[i]), c.alpha(i)});
  }
  if (nodes > 1) t.latency.push_back({c.top, 2.0 * floor_log2(nodes), c.alpha(c.top)});
  if (c.below(static_cast<int>(inner_top)) > 1 || nodes == 1) {
    BandwidthTerm inner = ring_bandwidth(c, chain, 2.0);
    inner.bandwidth = inner.bandwidth * kTreeBandwidthFactor;
    t.bandwidth.push_back(inner);
  }
  if (nodes > 1) {
    const double across = dbt_max_load(nodes);
    const BytesPerSecond node = c.bw(c.top) * c.below(static_cast<int>(c.top) - 1) * kTreeBandwidthFactor;
    t.bandwidth.push_back({c.tier(c.top).name, c.top, across, node});
  }
  // Pipeline fill: a chunk climbs the chain and the tree and comes back down, hop by
  // hop, before the busiest link streams the rest; two trees (across nodes) halve the buffer.
  t.chunk = c.proto.chunk;
  t.pieces = nodes > 1 ? 2 : 1;
  double hops_time = 0;  // seconds per byte along the chunk's path
  const int passes = 2;
  const double inner_bw = ring_bandwidth(c, chain, 1.0).bandwidth.value() * kTreeBandwidthFactor;
  std::int64_t chain_hops = 0;
  for (std::int64_t x : chain) chain_hops += x;
  hops_time += passes * static_cast<double>(chain_hops) / inner_bw;
  if (nodes > 1) {
    const double node_bw = (c.bw(c.top) * c.below(static_cast<int>(c.top) - 1)).value() * kTreeBandwidthFactor;
    hops_time += passes * floor_log2(nodes) / node_bw;
  }
  double stream = 0;  // seconds per byte of one piece's chunk on the busiest link
  for (const BandwidthTerm& b : t.bandwidth) stream = std::max(stream, b.bytes_factor / b.bandwidth.value());
  t.fill_per_byte = hops_time - stream;
  return t;
}

// NVLink SHARP: the switch reduces, each GPU sends and receives its buffer once; across nodes
// NCCL's NVLS-tree runs a tree on each GPU's shard, pipelined with the switch reduction.
std::optional<CostTerms> nvls(const Ctx& c, CollectiveOp op) {
  const Tier& up = c.tier(0);
  if (op != CollectiveOp::all_reduce || !up.reduction) return std::nullopt;
  if (c.top > 1 || (c.top == 1 && c.platform.topology.tiers.size() != 2)) return std::nullopt;
  // The switch reduces among a node's GPUs: NCCL 2.18-2.28.3 (the releases of MLPerf v4.1 and
  // v5.0) set up NVLS only for a communicator with more than two of them in a node (nvls.cc:
  // gpuCount <= 2 turns it off; 2.28.7 allows two), so not for a data-parallel group of one
  // rank a node, nor for pairs.
  if (c.group.fan_out[0] <= 2) return std::nullopt;
  CostTerms t;
  t.fixed = up.reduction->latency;
  t.bandwidth.push_back({"scale_up nvls", 0, 1.0, up.bandwidth * up.reduction->efficiency});
  if (c.top == 1) {
    const int nodes = c.group.fan_out[1];
    t.latency.push_back({1, 2.0 * floor_log2(nodes), c.alpha(1)});
    t.bandwidth.push_back({c.tier(1).name, 1, dbt_max_load(nodes), c.bw(1) * c.group.fan_out[0]});
  }
  return t;
}

// Reduction in the fat tree's switches across nodes; inside the node NVLS when the switch has it,
// else a ring reduce-scatter and all-gather.
std::optional<CostTerms> sharp(const Ctx& c, CollectiveOp op) {
  const Tier& out = c.tier(c.platform.topology.tiers.size() - 1);
  if (op != CollectiveOp::all_reduce || !out.reduction || c.top == 0) return std::nullopt;
  if (c.top != c.platform.topology.tiers.size() - 1) return std::nullopt;
  CostTerms t;
  t.fixed = out.reduction->latency;
  const int g = c.below(static_cast<int>(c.top) - 1);
  const Tier& up = c.tier(0);
  if (up.reduction && c.top == 1 && g > 2) {
    t.fixed += up.reduction->latency;
    t.bandwidth.push_back({"scale_up nvls", 0, 1.0, up.bandwidth * up.reduction->efficiency});
  } else if (g > 1) {
    add_inner_rs_ag(c, t, c.top - 1, g);
  }
  t.bandwidth.push_back({out.name + " sharp", c.top, 1.0, out.bandwidth * out.reduction->efficiency * g});
  return t;
}

// Reduce-scatter inside the node, an all-reduce of n/g per rank across nodes (each rank on its
// own share of the NICs), all-gather inside: one after another.
std::optional<CostTerms> hierarchical(const Ctx& c, CollectiveOp op) {
  if (op != CollectiveOp::all_reduce || c.top == 0) return std::nullopt;
  CostTerms t;
  t.combine = Combine::sum;
  const int g = c.below(static_cast<int>(c.top) - 1);
  const int nodes = c.group.fan_out[c.top];
  if (g > 1) add_inner_rs_ag(c, t, c.top - 1, g);
  t.latency.push_back({c.top, 2.0 * (nodes - 1), c.alpha(c.top)});
  t.bandwidth.push_back({c.tier(c.top).name, c.top, 2.0 * (nodes - 1) / nodes / g, c.bw(c.top)});
  return t;
}

// Recursive halving (reduce-scatter) then doubling (all-gather), nearest partners first, so the
// bytes halve before they reach the slower tiers. Needs a power-of-two fan-out at every tier.
std::optional<CostTerms> halving_doubling(const Ctx& c, CollectiveOp op) {
  if (op == CollectiveOp::broadcast || op == CollectiveOp::all_to_all) return std::nullopt;
  for (int f : c.group.fan_out) {
    if (!is_power_of_two(f)) return std::nullopt;
  }
  const int phases = op == CollectiveOp::all_reduce ? 2 : 1;
  CostTerms t;
  t.combine = Combine::sum;
  for (std::size_t i = 0; i <= c.top; ++i) {
    const int f = c.group.fan_out[i];
    if (f == 1) continue;
    t.latency.push_back({i, static_cast<double>(phases * ceil_log2(f)), c.alpha(i)});
    // Bytes exchanged at this tier: n / (ranks below) x (1 - 1/f), per phase.
    const double factor = phases * (1.0 - 1.0 / f) / c.below(static_cast<int>(i) - 1);
    t.bandwidth.push_back({c.tier(i).name, i, factor, c.bw(i)});
  }
  return t;
}

// All-to-all as p-1 concurrent exchanges: n/p to every other rank, each over the tier that
// separates the pair, every tier's links busy at once.
std::optional<CostTerms> pairwise(const Ctx& c, CollectiveOp op) {
  if (op != CollectiveOp::all_to_all) return std::nullopt;
  CostTerms t;
  for (std::size_t i = 0; i <= c.top; ++i) {
    const int peers = c.below(static_cast<int>(i)) - c.below(static_cast<int>(i) - 1);
    if (peers <= 0) continue;
    t.latency.push_back({i, static_cast<double>(peers), c.alpha(i)});
    t.bandwidth.push_back({c.tier(i).name, i, static_cast<double>(peers) / c.p, c.bw(i)});
  }
  return t;
}

// Per leaf of a fat tree spanning `units` nodes, the traffic its uplinks carry in units of one
// node's traffic (placed_leaf_crossing): a ring (and the ring across nodes of the hierarchical
// algorithm) enters and leaves each leaf once, an in-switch reduction sends one stream per leaf
// up, NCCL's trees what their few edges leaving a leaf carry, halving-doubling exchanges the
// share of partners outside the leaf, (units - k) / units of its k nodes' traffic.
double leaf_crossing(Algorithm a, int units, int nodes_per_leaf) {
  if (a == Algorithm::tree || a == Algorithm::nvls) return tree_leaf_crossing(units, nodes_per_leaf);
  return placed_leaf_crossing(a, units, 0, nodes_per_leaf);
}

void apply_spine(const Ctx& c, CostTerms& t) {
  for (BandwidthTerm& b : t.bandwidth) {
    const Tier& tier = c.tier(b.tier);
    const int units = c.group.fan_out[b.tier];
    if (tier.kind != TierKind::fat_tree || tier.nodes_per_leaf <= 0 || units <= tier.nodes_per_leaf) continue;
    b.leaf_crossing = leaf_crossing(t.algorithm, units, tier.nodes_per_leaf);
    b.spine_share = std::min(1.0, tier.nodes_per_leaf / (tier.oversubscription * b.leaf_crossing));
    b.bandwidth = b.bandwidth * b.spine_share;
  }
}

bool protocol_allowed(Algorithm a, Protocol p) {
  return a == Algorithm::ring || a == Algorithm::tree || p == Protocol::simple;
}

}  // namespace

namespace {

// The protocol's bus-bandwidth ceiling where tier t is the scale-out tier and the group spans
// nodes (LL's, NCCL's llMaxBws): two nodes or more.
std::optional<BytesPerSecond> bus_ceiling(const Ctx& c, std::size_t t) {
  if (t + 1 != c.platform.topology.tiers.size()) return std::nullopt;
  const int nodes = nodes_spanned(c.platform, c.group);
  if (nodes < 2) return std::nullopt;
  const ProtocolCosts::AcrossNodes& x = c.proto.across(c.platform.host_cpu);
  return nodes > 2 ? x.bus_ceiling_more_nodes : x.bus_ceiling_two_nodes;
}

// A ring or a tree streams no faster than its slowest term: the terms crossing the scale-out
// tier at most at the ceiling.
void apply_bus_ceiling(const Ctx& c, CostTerms& t) {
  for (BandwidthTerm& b : t.bandwidth) {
    if (const auto ceiling = bus_ceiling(c, b.tier); ceiling && *ceiling < b.bandwidth) b.bandwidth = *ceiling;
  }
}

}  // namespace

namespace {

// `protocol`'s costs as `algorithm` pays them, copied into `storage` only where the tree's own
// differ: cost_terms runs for every algorithm and protocol of every collective the search prices.
const ProtocolCosts& costs_for(const Platform& platform, Protocol protocol, Algorithm algorithm,
                               std::optional<ProtocolCosts>& storage) {
  const ProtocolCosts& base = platform.costs(protocol);
  if (algorithm != Algorithm::tree || !base.tree) return base;
  return storage.emplace(base.for_algorithm(algorithm));
}

}  // namespace

Hop hop(const Platform& platform, const Group& group, Protocol protocol, std::size_t tier, Algorithm algorithm,
        CollectiveOp op) {
  std::optional<ProtocolCosts> tree_costs;
  const ProtocolCosts& proto = costs_for(platform, protocol, algorithm, tree_costs);
  const Ctx c{platform, group, proto, group.top_tier(), group.ranks()};
  BytesPerSecond bandwidth = c.bw(tier) * c.below(static_cast<int>(tier) - 1);
  // The tree's streams reach 0.92 of the links (kTreeBandwidthFactor), and then the ceiling.
  if (algorithm == Algorithm::tree) bandwidth = bandwidth * kTreeBandwidthFactor;
  if (const auto ceiling = bus_ceiling(c, tier); ceiling && *ceiling < bandwidth) bandwidth = *ceiling;
  if (algorithm != Algorithm::ring) return Hop{bandwidth, c.alpha(tier)};
  return Hop{bandwidth, ring_step(platform, group, proto, tier, op != CollectiveOp::broadcast)};
}

std::optional<CostTerms> cost_terms(const Platform& platform, const Group& group, CollectiveOp op,
                                    Algorithm algorithm, Protocol protocol) {
  if (!platform.costs(protocol).available || !protocol_allowed(algorithm, protocol)) return std::nullopt;
  std::optional<ProtocolCosts> tree_costs;
  const ProtocolCosts& proto = costs_for(platform, protocol, algorithm, tree_costs);
  const Ctx c{platform, group, proto, group.top_tier(), group.ranks()};
  if (c.p <= 1) return std::nullopt;
  std::optional<CostTerms> t;
  switch (algorithm) {
    case Algorithm::ring: t = ring(c, op); break;
    case Algorithm::tree: t = tree(c, op); break;
    case Algorithm::nvls: t = nvls(c, op); break;
    case Algorithm::sharp: t = sharp(c, op); break;
    case Algorithm::hierarchical: t = hierarchical(c, op); break;
    case Algorithm::halving_doubling: t = halving_doubling(c, op); break;
    case Algorithm::pairwise: t = pairwise(c, op); break;
  }
  if (!t) return std::nullopt;
  t->op = op;
  t->algorithm = algorithm;
  t->protocol = protocol;
  t->fixed += proto.launch;
  apply_bus_ceiling(c, *t);
  apply_spine(c, *t);
  return t;
}

}  // namespace sp::models
