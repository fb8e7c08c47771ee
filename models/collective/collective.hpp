// Collective operations and their algorithms as closed-form cost terms (the "analytic"
// fidelity). Each algorithm returns its terms as data: a fixed start-up, latency terms (steps x
// per-step latency at a tier) and bandwidth terms (bytes factor x n / bandwidth), combined in one
// of three ways:
//  - sum: phases one after another;  latency + sum of the bandwidth terms;
//  - max: streams that overlap;      latency + the slowest bandwidth term;
//  - ring: the steady state of a dataflow ring whose hops differ: every step costs the average
//    hop (its latency and transfer) unless one link's transfer is slower still, so
//      time = fixed + max(latency + sum_t weight_t x term_t, max_t term_t)
//    which is the textbook 2(p-1)a + 2(p-1)/p n/B when all hops are alike.
// Each form is linear in the latencies and inverse bandwidths inside one regime, so calibration
// can fit them.
//
// Sizes follow nccl-tests: n is the per-rank buffer of an all-reduce or broadcast, the whole
// gathered buffer of an all-gather or reduce-scatter, and the per-rank send buffer of an
// all-to-all; bus bandwidth = n / time x (2(p-1)/p for all-reduce, (p-1)/p for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/network/kinds.hpp"
#include "models/network/platform.hpp"
#include "models/network/topology.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// nccl-tests' bus-bandwidth factor for `op` over p ranks.
double bus_factor(CollectiveOp op, int ranks);

/// The HBM traffic a collective of `op` over `ranks` on `bytes` (nccl-tests' size) by `algorithm`
/// causes on one rank, as time at the accelerator's memory bandwidth. Staged (ring, tree and their
/// compositions): collective_memory_traffic x bytes x bus_factor (nccl-tests' bus bytes, what a
/// rank receives); in-network (NVLS, SHARP): the input read once and the output written once,
/// 2 x bytes for an all-reduce, (1 + 1/ranks) x bytes for an all-gather or reduce-scatter.
/// Zero for one rank.
Duration collective_memory_time(const Platform& platform, Algorithm algorithm, CollectiveOp op, int ranks, Bytes bytes);

/// The traffic a leaf's uplinks carry for a collective over `units` nodes of which `on_leaf`
/// sit under that leaf, ranks `first` .. `first + on_leaf - 1` (ranks are numbered leaf by leaf,
/// as a topology-aware launcher lists the hosts), in units of one node's traffic: a ring (and the
/// hierarchical and in-switch algorithms) enters and leaves the leaf once; NCCL's trees (and
/// NVLS's tree across nodes) what their edges leaving the leaf carry (tree_range_crossing);
/// halving-doubling exchanges reach the share of partners outside it, on_leaf (units - on_leaf)
/// / units; 0 when the leaf holds none or all of the group.
double placed_leaf_crossing(Algorithm a, double units, double first, double on_leaf);
/// NCCL's two trees over `units` nodes: what the tree edges leaving ranks `first` .. `first +
/// count - 1` carry, each half the buffer each way, over a busiest node's 2 x dbt_max_load
/// halves. Subtrees hold consecutive ranks, so few edges leave a leaf (at most 8 for leaves of 32
/// nodes up to 4,096 nodes): about a ring's once, not every node's traffic.
double tree_range_crossing(int units, int first, int count);
/// The same for the busiest of leaves of `on_leaf` consecutive ranks each.
double tree_leaf_crossing(int units, int on_leaf);

struct LatencyTerm {
  std::size_t tier;
  double steps;  // may be fractional: an average over the ranks of a ring
  Duration per_step;
};

struct BandwidthTerm {
  std::string link;     // which link limits this term, for reports ("scale_up", "scale_out sharp")
  std::size_t tier;     // the tier whose links carry it (for the flow fidelity)
  double bytes_factor;  // bytes crossing that link per byte of n
  BytesPerSecond bandwidth;
  double weight = 1;    // ring: share of the ring's hops on this link
  /// On a fat tree of several leaves: each leaf's uplinks carry `leaf_crossing` times one node's
  /// traffic of this term (a ring crosses each leaf once: 1; a tree or a halving-doubling sends
  /// most of every node's traffic through the spine), so the term runs at `spine_share` of its
  /// bandwidth unblocked, min(1, nodes_per_leaf / (oversubscription x leaf_crossing)), already
  /// in `bandwidth` (the flow fidelity puts it back and lets the leaf's link decide).
  double leaf_crossing = 0;
  double spine_share = 1;
};

enum class Combine { sum, max, ring };

struct CostTerms {
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  Duration fixed;  // launch and in-network start-up
  std::vector<LatencyTerm> latency;
  std::vector<BandwidthTerm> bandwidth;
  Combine combine = Combine::max;
  /// Chunked pipelines (trees): the first chunk crosses every hop before the pipeline streams.
  /// With per-piece chunk c (the buffer is split into `pieces` trees, each cut into chunks of at
  /// most `chunk`), the time gains c x fill_per_byte: the hops' c/B_h minus the one chunk the
  /// streaming (bandwidth) terms already count.
  Bytes chunk;
  double pieces = 1;
  double fill_per_byte = 0;  // seconds per byte of one chunk

  Duration latency_total() const;
  Duration time(Bytes n) const;
};

/// The terms of `algorithm` with `protocol` for `op` on `group`, or nullopt when the
/// combination does not exist on this platform (no NVLS switch, p not a power of two, ...).
std::optional<CostTerms> cost_terms(const Platform& platform, const Group& group, CollectiveOp op,
                                    Algorithm algorithm, Protocol protocol);

/// What one message crossing tier t sees on this group: the group's share of the tier's link
/// (a node's NICs are shared by all the node's accelerators in the group), times the protocol's
/// bandwidth factor (a tree's at kTreeBandwidthFactor of it), at most the protocol's bus ceiling
/// across nodes, and the protocol's step latency there, as `algorithm` pays them for `op` (a
/// ring's steps inside a node at least the network overhead once it spans nodes, but for a
/// broadcast's chain).
struct Hop {
  BytesPerSecond bandwidth;
  Duration latency;
};
Hop hop(const Platform& platform, const Group& group, Protocol protocol, std::size_t tier,
        Algorithm algorithm = Algorithm::ring, CollectiveOp op = CollectiveOp::all_reduce);

/// NCCL's double binary tree over `nodes` vertices (ncclGetDtree, NVIDIA/nccl src/graph/trees.cc):
/// tree 0 laid out on the vertices' bits (a subtree holds consecutive vertices), tree 1 its
/// mirror image (an even count) or tree 0 shifted by one (odd), so leaves of one are inner
/// vertices of the other. -1 for a root.
int dbt_parent(int tree, int vertex, int nodes);
/// The most any vertex sends per byte of the buffer in an all-reduce over the two trees (each
/// carries half, up to the parent and down to the children): 1 for two vertices, 1.5 for three,
/// 2 from four up.
double dbt_max_load(int nodes);

/// NCCL's tuning model scales tree bandwidth by 0.92 (NCCL's tuning model, src/graph/tuning.cc): the chain and the double
/// binary tree do not stream quite as evenly as a ring.
inline constexpr double kTreeBandwidthFactor = 0.92;

/// What the caller allows; unset means "as the platform's library would choose".
struct CollectiveChoice {
  std::optional<Algorithm> algorithm;
  std::optional<Protocol> protocol;
};

struct Selected {
  CostTerms terms;
  Duration time;
};

/// The fastest allowed (algorithm, protocol) for `bytes`, as NCCL's tuner picks: among the
/// platform's library algorithms unless one is forced. Throws ModelError if none applies.
Selected select_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes bytes,
                           const CollectiveChoice& choice = {});

}  // namespace sp::models
