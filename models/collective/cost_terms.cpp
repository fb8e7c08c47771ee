// What a collective's closed-form terms come to, and the facts about a collective that other
// models ask for without building its terms: CostTerms' time for n bytes, nccl-tests' bus factor,
// the HBM traffic a collective causes, NCCL's double binary tree, and the share of a group's
// traffic that crosses a fat tree's leaf. Apart from algorithms.cpp, which derives each
// algorithm's terms, because the step graph, the chunk and flow fidelities and the collective
// benchmark use these directly.
#include <algorithm>
#include <cmath>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/network/kinds.hpp"
#include "models/network/platform.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

Duration CostTerms::latency_total() const {
  Duration d = fixed;
  for (const LatencyTerm& l : latency) d += scale(l.per_step, l.steps);
  return d;
}

Duration CostTerms::time(Bytes n) const {
  Duration data;
  if (combine == Combine::ring) {
    Duration average;
    for (const BandwidthTerm& b : bandwidth) {
      const Duration d = n * b.bytes_factor / b.bandwidth;
      average += scale(d, b.weight);
      data = max(data, d);
    }
    return fixed + max(latency_total() - fixed + average, data);
  }
  for (const BandwidthTerm& b : bandwidth) {
    const Duration d = n * b.bytes_factor / b.bandwidth;
    data = combine == Combine::max ? max(data, d) : data + d;
  }
  Duration fill;
  if (fill_per_byte != 0) {
    const double piece = n.value() / pieces;
    const double c = piece / std::ceil(piece / chunk.value());
    fill = seconds(c * fill_per_byte);
  }
  return latency_total() + data + fill;
}

double bus_factor(CollectiveOp op, int ranks) {
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (ranks - 1) / ranks;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return static_cast<double>(ranks - 1) / ranks;
    case CollectiveOp::broadcast: return 1.0;
  }
  return 1.0;
}

Duration collective_memory_time(const Platform& p, Algorithm algorithm, CollectiveOp op, int ranks, Bytes bytes) {
  if (ranks < 2 || !(p.accelerator.memory_bandwidth.value() > 0)) return Duration{};
  const bool in_network = algorithm == Algorithm::nvls || algorithm == Algorithm::sharp;
  const double per_byte = !in_network                         ? p.collective_memory_traffic * bus_factor(op, ranks)
                          : op == CollectiveOp::all_reduce ? 2.0
                                                           : 1.0 + 1.0 / ranks;
  return bytes * per_byte / p.accelerator.memory_bandwidth;
}

namespace {

// NCCL's binary tree over `nodes` vertices (ncclGetBtree, NVIDIA/nccl src/graph/trees.cc): laid
// out on the vertices' bits, a vertex's parent is the vertex with its lowest set bit cleared and
// the bit above it set (only cleared, where that is out of range), so every subtree holds
// consecutive vertices.
int btree_parent(int vertex, int nodes) {
  if (vertex == 0) return -1;
  int bit = 1;
  while (!(bit & vertex)) bit <<= 1;
  const int up = (vertex ^ bit) | (bit << 1);
  return up < nodes ? up : vertex ^ bit;
}

// Edges of the two trees with one end among the `count` consecutive vertices from `first`.
int edges_leaving(int first, int count, int nodes) {
  int edges = 0;
  const auto inside = [&](int v) { return v >= first && v < first + count; };
  for (int t = 0; t < 2; ++t) {
    for (int v = 0; v < nodes; ++v) {
      const int parent = dbt_parent(t, v, nodes);
      if (parent >= 0 && inside(v) != inside(parent)) ++edges;
    }
  }
  return edges;
}

}  // namespace

int dbt_parent(int tree, int i, int nodes) {
  if (tree == 0) return btree_parent(i, nodes);
  // ncclGetDtree: the second tree is the first's mirror image for an even count, else the first
  // shifted by one vertex.
  if (nodes % 2 == 1) {
    const int up = btree_parent((i - 1 + nodes) % nodes, nodes);
    return up < 0 ? -1 : (up + 1) % nodes;
  }
  const int up = btree_parent(nodes - 1 - i, nodes);
  return up < 0 ? -1 : nodes - 1 - up;
}

double dbt_max_load(int nodes) {
  // Counted by hand on NCCL's two trees (tests/models/fidelity_test.cpp checks these against a
  // brute-force count up to 2,000 vertices): two vertices exchange one half each way; with three
  // every vertex sends at most three halves; from four on some vertex has two children and a
  // parent in one tree and a parent in the other: four halves.
  if (nodes < 2) return 0;
  if (nodes == 2) return 1.0;
  if (nodes == 3) return 1.5;
  return 2.0;
}

double tree_range_crossing(int units, int first, int count) {
  if (count <= 0 || count >= units || units < 2) return 0;
  // Every tree edge leaving the leaf carries half the buffer each way, against the 2 x
  // dbt_max_load halves of a busiest node's NICs.
  return edges_leaving(first, std::min(count, units - first), units) / (2.0 * dbt_max_load(units));
}

double tree_leaf_crossing(int units, int on_leaf) {
  if (on_leaf <= 0 || on_leaf >= units || units < 2) return 0;
  // One pass over both trees' edges, each leaving edge counted at both its leaves: linear in the
  // nodes, however many leaves (16,384 nodes in leaves of 2 would be 8,192 scans of all edges).
  std::vector<int> leaving(static_cast<std::size_t>((units + on_leaf - 1) / on_leaf), 0);
  for (int t = 0; t < 2; ++t) {
    for (int v = 0; v < units; ++v) {
      const int parent = dbt_parent(t, v, units);
      if (parent < 0 || v / on_leaf == parent / on_leaf) continue;
      ++leaving[static_cast<std::size_t>(v / on_leaf)];
      ++leaving[static_cast<std::size_t>(parent / on_leaf)];
    }
  }
  return *std::max_element(leaving.begin(), leaving.end()) / (2.0 * dbt_max_load(units));
}

double placed_leaf_crossing(Algorithm a, double units, double first, double on_leaf) {
  if (!(on_leaf > 0) || on_leaf >= units) return 0;  // none of the group here, or all of it
  if (a == Algorithm::ring || a == Algorithm::hierarchical || a == Algorithm::sharp) return 1.0;
  if (a == Algorithm::tree || a == Algorithm::nvls) {
    const int count = std::max(1, static_cast<int>(std::lround(on_leaf)));
    return tree_range_crossing(static_cast<int>(std::lround(units)), static_cast<int>(std::lround(first)), count);
  }
  return on_leaf * (units - on_leaf) / units;  // halving-doubling: the share of partners outside
}

}  // namespace sp::models
