// What a collective's closed-form terms come to, and the facts about a collective that other
// models ask for without building its terms: CostTerms' time for n bytes, nccl-tests' bus factor,
// the HBM traffic a collective causes, NCCL's double binary tree, and the share of a group's
// traffic that crosses a fat tree's leaf. Apart from algorithms.cpp, which derives each
// algorithm's terms, because the step graph, the chunk and flow fidelities and the collective
// benchmark use these directly.
#include <cmath>

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

int dbt_parent(int tree, int i, int nodes) {
  if (tree == 0) return i == 0 ? -1 : (i - 1) / 2;
  const int m = nodes - 1 - i;
  return m == 0 ? -1 : nodes - 1 - (m - 1) / 2;
}

double dbt_max_load(int nodes) {
  // Counted by hand on the heap and its mirror (tests/models/fidelity_test.cpp checks these
  // against a brute-force count up to 2,000 vertices): two vertices exchange one half each way;
  // with three or four every vertex sends at most three halves; from five on some vertex has two
  // children and a parent in one tree and a parent in the other: four halves.
  if (nodes < 2) return 0;
  if (nodes == 2) return 1.0;
  if (nodes <= 4) return 1.5;
  return 2.0;
}

double placed_leaf_crossing(Algorithm a, double units, double on_leaf) {
  if (!(on_leaf > 0) || on_leaf >= units) return 0;  // none of the group here, or all of it
  if (a == Algorithm::ring || a == Algorithm::hierarchical || a == Algorithm::sharp) return 1.0;
  return on_leaf * (units - on_leaf) / units;
}

}  // namespace sp::models
