#include "models/collective/chunk_sim.hpp"

#include <cmath>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "sim/core/engine.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

namespace {

// One outgoing link: messages start when both they and the link are ready. Events run in time
// order, so serving them as they become ready is first-come, first-served.
struct Link {
  Hop hop;
  SimTime free_at;

  /// When a message of `bytes` ready at `now` arrives at the other end.
  SimTime send(SimTime now, Bytes bytes) {
    const SimTime start = max(now, free_at);
    free_at = start + bytes / hop.bandwidth;
    return free_at + hop.latency;
  }
};

// The outermost tier between consecutive ranks r and r+1 (mod p) of a packed group.
std::size_t hop_tier(const Group& g, int r) {
  const int next = (r + 1) % g.ranks();
  for (std::size_t t = g.fan_out.size(); t-- > 1;) {
    if (next % g.ranks_below(t - 1) == 0 && g.fan_out[t] > 1) return t;
  }
  return 0;
}

// Ring state: every rank's link; events carry (ring, rank, step) only, so they stay inline.
struct RingSim {
  Engine engine;
  std::vector<Link> links;
  Bytes message;
  int p = 0;
  int steps = 0;
  SimTime last;

  // Rank r sends its step-s message; on arrival rank r+1 sends step s+1.
  void send(int r, int s) {
    const SimTime arrive = links[r].send(engine.now(), message);
    engine.schedule_at(arrive, [this, r, s] { arrived((r + 1) % p, s); });
  }
  void arrived(int r, int s) {
    if (s + 1 < steps) {
      send(r, s + 1);
    } else {
      last = max(last, engine.now());
    }
  }
};

// One flat ring through every rank, p - 1 steps a lap, also on a torus, where the analytic
// model costs XLA's per-dimension rings (sum of d_i - 1 steps a lap): there this fidelity plays
// a slower algorithm than the library runs.
ChunkResult ring(const Platform& platform, const Group& group, CollectiveOp op, Protocol proto, Bytes n) {
  RingSim sim;
  sim.p = group.ranks();
  sim.steps = (op == CollectiveOp::all_reduce ? 2 : 1) * (sim.p - 1);
  sim.message = n / sim.p;
  for (int r = 0; r < sim.p; ++r) sim.links.push_back({hop(platform, group, proto, hop_tier(group, r)), SimTime::zero()});
  const SimTime start = SimTime::zero() + platform.costs(proto).launch;
  sim.engine.schedule_at(start, [&sim] {
    for (int r = 0; r < sim.p; ++r) sim.send(r, 0);
  });
  sim.engine.run();
  return {sim.last - SimTime::zero(), sim.engine.events_processed()};
}

// The number of pieces a pipelined algorithm cuts n bytes into, at most `chunk` each (a double:
// counted before the budget is checked, it may be beyond any integer).
double pieces(Bytes n, Bytes chunk) { return std::max(1.0, std::ceil(n.value() / chunk.value())); }

// NCCL's broadcast: a chain from the root along the ring's order, p - 1 hops, the buffer cut into
// the protocol's chunks and each forwarded as soon as it has arrived, so the slowest hop streams
// the buffer while the others keep up.
ChunkResult chain_broadcast(const Platform& platform, const Group& group, Protocol proto, Bytes n) {
  const int p = group.ranks();
  const auto chunks = static_cast<std::int64_t>(pieces(n, platform.costs(proto).chunk));  // within the budget
  const Bytes c = n / static_cast<double>(chunks);
  std::vector<Link> links;
  for (int r = 0; r + 1 < p; ++r) {
    links.push_back({hop(platform, group, proto, hop_tier(group, r), Algorithm::ring, CollectiveOp::broadcast), SimTime::zero()});
  }
  Engine engine;
  SimTime last;
  std::function<void(int)> forward = [&](int r) {  // rank r holds a chunk
    if (r + 1 >= p) {
      last = max(last, engine.now());
      return;
    }
    engine.schedule_at(links[r].send(engine.now(), c), [&forward, r] { forward(r + 1); });
  };
  engine.schedule_at(SimTime::zero() + platform.costs(proto).launch, [&] {
    for (std::int64_t k = 0; k < chunks; ++k) forward(0);
  });
  engine.run();
  return {last - SimTime::zero(), engine.events_processed()};
}

ChunkResult tree(const Platform& platform, const Group& group, CollectiveOp op, Protocol proto, Bytes n,
                 Bytes chunk) {
  if (op != CollectiveOp::all_reduce) throw ModelError("the chunk fidelity plays trees for all-reduce only");
  const std::size_t top = group.top_tier();
  const int nodes = top > 0 ? group.fan_out[top] : 1;
  const int g = group.ranks() / nodes;
  const int trees = nodes > 1 ? 2 : 1;
  const Bytes per_tree = n / trees;
  const int chunks = static_cast<int>(pieces(per_tree, chunk));  // within the budget
  const Bytes c = per_tree / chunks;

  // Every rank's egress link inside its node (chain up and down share it), and every node's
  // egress to the network (both trees, up and down).
  const std::size_t inner_tier = top > 0 ? top - 1 : 0;
  Hop inner_hop = hop(platform, group, proto, 0, Algorithm::tree);
  for (std::size_t t = 1; t <= inner_tier && top > 0; ++t) {
    const Hop h = hop(platform, group, proto, t, Algorithm::tree);
    if (h.bandwidth < inner_hop.bandwidth) inner_hop.bandwidth = h.bandwidth;
    inner_hop.latency = max(inner_hop.latency, h.latency);
  }
  std::vector<Link> rank_link(static_cast<std::size_t>(nodes) * g, Link{inner_hop, SimTime::zero()});
  std::vector<Link> node_link(nodes, Link{hop(platform, group, proto, top, Algorithm::tree), SimTime::zero()});

  // Children of every node in each tree, for counting contributions.
  std::vector<std::vector<int>> kids(static_cast<std::size_t>(trees) * nodes);
  for (int t = 0; t < trees; ++t) {
    for (int i = 0; i < nodes; ++i) {
      const int par = dbt_parent(t, i, nodes);
      if (par >= 0) kids[static_cast<std::size_t>(t) * nodes + par].push_back(i);
    }
  }
  // Inputs still awaited by each node leader, per (tree, chunk): its chain plus its tree children.
  std::vector<int> waiting(static_cast<std::size_t>(trees) * chunks * nodes);
  for (int t = 0; t < trees; ++t) {
    for (int k = 0; k < chunks; ++k) {
      for (int i = 0; i < nodes; ++i) {
        waiting[(static_cast<std::size_t>(t) * chunks + k) * nodes + i] =
            (g > 1 ? 1 : 0) + static_cast<int>(kids[static_cast<std::size_t>(t) * nodes + i].size());
      }
    }
  }

  Engine engine;
  SimTime last;
  std::function<void(int, int, int)> leader_ready;  // (tree, chunk, node): reduced, send up
  std::function<void(int, int, int)> down;          // (tree, chunk, node): result arrived at leader
  // Reduce along the chain: rank j of node i sends to rank j-1; rank 0 is the leader.
  std::function<void(int, int, int, int)> chain_up = [&](int t, int k, int i, int j) {
    const SimTime at = rank_link[static_cast<std::size_t>(i) * g + j].send(engine.now(), c);
    engine.schedule_at(at, [&, t, k, i, j] {
      if (j - 1 > 0) {
        chain_up(t, k, i, j - 1);
      } else if (--waiting[(static_cast<std::size_t>(t) * chunks + k) * nodes + i] == 0) {
        leader_ready(t, k, i);
      }
    });
  };
  // Broadcast down the chain: rank j forwards to j+1.
  std::function<void(int, int, int, int)> chain_down = [&](int t, int k, int i, int j) {
    if (j + 1 >= g) {
      last = max(last, engine.now());
      return;
    }
    const SimTime at = rank_link[static_cast<std::size_t>(i) * g + j].send(engine.now(), c);
    engine.schedule_at(at, [&, t, k, i, j] { chain_down(t, k, i, j + 1); });
  };
  leader_ready = [&](int t, int k, int i) {
    const int par = dbt_parent(t, i, nodes);
    if (par < 0) {
      down(t, k, i);
      return;
    }
    const SimTime at = node_link[i].send(engine.now(), c);
    engine.schedule_at(at, [&, t, k, par] {
      if (--waiting[(static_cast<std::size_t>(t) * chunks + k) * nodes + par] == 0) leader_ready(t, k, par);
    });
  };
  down = [&](int t, int k, int i) {
    for (int kid : kids[static_cast<std::size_t>(t) * nodes + i]) {
      const SimTime at = node_link[i].send(engine.now(), c);
      engine.schedule_at(at, [&, t, k, kid] { down(t, k, kid); });
    }
    chain_down(t, k, i, 0);
  };

  const SimTime start = SimTime::zero() + platform.costs(proto).for_algorithm(Algorithm::tree).launch;
  engine.schedule_at(start, [&] {
    for (int k = 0; k < chunks; ++k) {
      for (int t = 0; t < trees; ++t) {
        for (int i = 0; i < nodes; ++i) {
          if (g > 1) {
            chain_up(t, k, i, g - 1);
          } else if (waiting[(static_cast<std::size_t>(t) * chunks + k) * nodes + i] == 0) {
            leader_ready(t, k, i);
          }
        }
      }
    }
  });
  engine.run();
  return {last - SimTime::zero(), engine.events_processed()};
}

}  // namespace

std::uint64_t chunk_messages(const Platform& platform, const Group& group, CollectiveOp op, Algorithm algorithm,
                             Protocol protocol, Bytes n) {
  const auto p = static_cast<std::uint64_t>(group.ranks());
  if (p <= 1) return 0;
  if (algorithm == Algorithm::ring && op == CollectiveOp::broadcast) {
    return static_cast<std::uint64_t>(std::min(pieces(n, platform.costs(protocol).chunk) * static_cast<double>(p - 1), 1e19));
  }
  if (algorithm == Algorithm::ring) return (op == CollectiveOp::all_reduce ? 2 : 1) * (p - 1) * p;
  // As tree() cuts the buffer: two trees across nodes (one inside a node), each per_tree bytes.
  const std::size_t top = group.top_tier();
  const std::uint64_t trees = top > 0 && group.fan_out[top] > 1 ? 2 : 1;
  const double chunks = pieces(n / static_cast<double>(trees), platform.costs(protocol).chunk);
  return static_cast<std::uint64_t>(std::min(chunks * 2.0 * static_cast<double>(trees * p), 1e19));
}

ChunkResult simulate_chunks(const Platform& platform, const Group& group, CollectiveOp op, Algorithm algorithm,
                            Protocol protocol, Bytes n) {
  if (group.ranks() <= 1) return {};
  if (const std::uint64_t m = chunk_messages(platform, group, op, algorithm, protocol, n); m > kChunkMessageBudget) {
    throw ChunkBudgetError(fmt::format(
        "the chunk fidelity would play {} messages for a {} {} of {:.0f} B over {} ranks, more than its {} (about 1 GB "
        "and half a minute): use the flow fidelity, or fewer ranks or bytes",
        m, algorithm_name(algorithm), op_name(op), n.value(), group.ranks(), kChunkMessageBudget));
  }
  if (algorithm == Algorithm::ring && op == CollectiveOp::broadcast) return chain_broadcast(platform, group, protocol, n);
  if (algorithm == Algorithm::ring && op != CollectiveOp::all_to_all) return ring(platform, group, op, protocol, n);
  if (algorithm == Algorithm::tree) return tree(platform, group, op, protocol, n, platform.costs(protocol).chunk);
  throw ModelError(std::string("the chunk fidelity plays ring and tree only, not ") + algorithm_name(algorithm) +
                   " " + op_name(op));
}

}  // namespace sp::models
