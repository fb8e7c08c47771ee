// The vocabulary of collective communication: operations, algorithms and protocols (in the
// sense of NCCL, NCCL's tuning model, src/graph/tuning.cc), and what a protocol costs on a platform.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

enum class CollectiveOp { all_reduce, reduce_scatter, all_gather, broadcast, all_to_all };
inline constexpr std::array<CollectiveOp, 5> kCollectiveOps = {
    CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather, CollectiveOp::broadcast,
    CollectiveOp::all_to_all};

/// ring; tree (NCCL's double binary tree across nodes, a chain inside); nvls (NVLink SHARP in
/// the switch, NVLS-tree across nodes); sharp (in-network reduction on the fat tree);
/// hierarchical (reduce-scatter inside, all-reduce across, all-gather inside); halving_doubling
/// (Rabenseifner's recursive halving and doubling); pairwise (all-to-all as p-1 concurrent
/// point-to-point exchanges, the only all-to-all algorithm).
enum class Algorithm { ring, tree, nvls, sharp, hierarchical, halving_doubling, pairwise };
inline constexpr std::array<Algorithm, 7> kAlgorithms = {Algorithm::ring,         Algorithm::tree,
                                                         Algorithm::nvls,         Algorithm::sharp,
                                                         Algorithm::hierarchical, Algorithm::halving_doubling,
                                                         Algorithm::pairwise};

/// LL moves 8-byte words with inline flags (lowest latency, half the bandwidth), LL128 128-byte
/// lines (92 %), Simple bulk copies with fences (full bandwidth, highest per-step latency).
enum class Protocol { ll, ll128, simple };
inline constexpr std::array<Protocol, 3> kProtocols = {Protocol::ll, Protocol::ll128, Protocol::simple};

const char* op_name(CollectiveOp op);
const char* algorithm_name(Algorithm a);
const char* protocol_name(Protocol p);
std::optional<CollectiveOp> op_from_name(const std::string& name);
std::optional<Algorithm> algorithm_from_name(const std::string& name);
std::optional<Protocol> protocol_from_name(const std::string& name);

/// The CPU vendor of a platform's hosts, where a collective library prices its network steps by it
/// (NCCL: AMD, or a mix, against everything else).
enum class HostCpu { intel, amd, arm };
const char* host_cpu_name(HostCpu c);
std::optional<HostCpu> host_cpu_from_name(const std::string& name);
/// The vendor a processor's name says ("AMD EPYC 9654", "Intel(R) Xeon(R) Platinum 8480C",
/// "NVIDIA Grace"), or nullopt where it names none.
std::optional<HostCpu> host_cpu_of_processor(const std::string& processor);

/// What one protocol costs on a platform.
struct ProtocolCosts {
  bool available = false;
  double bandwidth_factor = 1;  // fraction of a tier's effective bandwidth this protocol reaches
  Duration launch;              // once per collective (kernel launch, proxy set-up)
  std::vector<Duration> step;   // per algorithm step, by tier (innermost first)
  Bytes chunk{512.0 * 1024};    // bytes a pipelined algorithm (tree) moves per message
  // NCCL prices its tree apart from its ring (src/graph/tuning.cc: the tree's base and per-hop
  // latencies, LL at 1/3.8 and LL128 at 120/128 of the tree's bandwidth where the ring's LL
  // reaches 1/2); unset, the tree costs what the ring does.
  struct Tree {
    double bandwidth_factor = 1;
    Duration launch;
    std::vector<Duration> step;
  };
  std::optional<Tree> tree;
  // What a collective pays once it spans nodes, by the hosts' CPU vendor (NCCL's tuning model,
  // src/graph/tuning.cc): a bus-bandwidth ceiling (nccl-tests' busbw) across two nodes and across
  // more, whatever the links (llMaxBws, LL's), and the least one step of a ring inside a node
  // takes (getNetOverhead: the proxy's network overhead, which every step of a ring through the
  // network waits on).
  struct AcrossNodes {
    std::optional<BytesPerSecond> bus_ceiling_two_nodes, bus_ceiling_more_nodes;
    Duration ring_node_step;
  };
  std::array<AcrossNodes, 2> across_nodes;  // by HostCpu: intel (and every other vendor, as NCCL), amd
  const AcrossNodes& across(HostCpu cpu) const { return across_nodes[cpu == HostCpu::amd ? 1 : 0]; }
  AcrossNodes& across(HostCpu cpu) { return across_nodes[cpu == HostCpu::amd ? 1 : 0]; }

  /// The costs `a` pays: the tree's where they are given, else these.
  ProtocolCosts for_algorithm(Algorithm a) const {
    if (a != Algorithm::tree || !tree) return *this;
    ProtocolCosts c = *this;
    c.bandwidth_factor = tree->bandwidth_factor;
    c.launch = tree->launch;
    c.step = tree->step;
    return c;
  }
};

}  // namespace sp::models
