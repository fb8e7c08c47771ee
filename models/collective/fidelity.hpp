// One interface, three fidelities for a collective (DESIGN.md "Fidelity and speed"):
//  - analytic: the closed form of the chosen algorithm, O(1);
//  - flow: the algorithm's bandwidth terms become flows on the tiers' links of a FlowNetwork,
//    after the start-up the closed form charges beyond those transfers; alone on the network this
//    gives the analytic time, beside other traffic the flows share the links;
//  - chunk: every rank, message by message (chunk_sim.hpp), for rings and trees.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/network/flow_network.hpp"

namespace sp::models {

enum class Fidelity { analytic, flow, chunk };
const char* fidelity_name(Fidelity f);
std::optional<Fidelity> fidelity_from_name(const std::string& name);

/// The links of one representative of each tier in a FlowNetwork: per tier, one instance of its
/// links (an accelerator's scale-up port, a scale-up domain's host links, a node's NICs), and for
/// a fat tree of several leaves the uplinks of one leaf (nodes_per_leaf nodes' NICs /
/// oversubscription), which carry what crosses the spine.
struct NetworkLinks {
  std::vector<std::size_t> tier;
  std::vector<std::optional<std::size_t>> leaf;
  /// A job placed on a cluster among others (shared_fabric.hpp): per tier, the leaves its nodes
  /// sit under, each a link shared by every job there, with how many of its `placed_nodes` each
  /// holds; where set, these replace `leaf`.
  struct LeafShare {
    std::size_t link;
    int nodes;
  };
  std::vector<std::vector<LeafShare>> placed;
  int placed_nodes = 0;
};
NetworkLinks add_network_links(FlowNetwork& net, const Platform& platform);

/// One unit of tier `tier`'s links: its per-accelerator bandwidth times the accelerators of one
/// unit of the tier below (a node's NICs for the scale-out tier).
BytesPerSecond tier_link_capacity(const Platform& platform, std::size_t tier);
/// A leaf's uplinks on a fat tree: nodes_per_leaf units' links / oversubscription.
BytesPerSecond leaf_uplink_capacity(const Platform& platform, std::size_t tier);

/// Starts the collective described by `terms` on `net` now; `done` runs when it has finished.
/// `peer`: for a transfer between two ranks whose links are represented apart (pipeline stages),
/// the receiver's links, which its flows cross as well. `group`: the ranks, for a placed job's
/// leaf shares (their nodes under each leaf in proportion to the job's).
void start_collective_flows(Engine& engine, FlowNetwork& net, const NetworkLinks& links, const Platform& platform,
                            const CostTerms& terms, Bytes n, std::function<void()> done,
                            const NetworkLinks* peer = nullptr, const Group* group = nullptr);

struct CollectiveTiming {
  Duration time;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  std::uint64_t events = 0;
};

/// The messages the chunk fidelity would play for this collective, its algorithm chosen as
/// time_collective chooses it (chunk_sim.hpp's kChunkMessageBudget bounds them).
std::uint64_t chunk_messages_for(const Platform& platform, const Group& group, CollectiveOp op, Bytes n,
                                 const CollectiveChoice& choice);

/// One collective alone on the network, at a fidelity. The algorithm and protocol are chosen
/// (or forced) as in select_collective; the chunk fidelity plays rings and trees only, so unless
/// forced it chooses among those.
CollectiveTiming time_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes n,
                                 const CollectiveChoice& choice, Fidelity fidelity);

}  // namespace sp::models
