#include "models/collective/fidelity.hpp"

#include <memory>

#include "models/collective/chunk_sim.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

const char* fidelity_name(Fidelity f) {
  switch (f) {
    case Fidelity::analytic: return "analytic";
    case Fidelity::flow: return "flow";
    case Fidelity::chunk: return "chunk";
  }
  return "?";
}

std::optional<Fidelity> fidelity_from_name(const std::string& name) {
  for (Fidelity f : {Fidelity::analytic, Fidelity::flow, Fidelity::chunk}) {
    if (name == fidelity_name(f)) return f;
  }
  return std::nullopt;
}

BytesPerSecond tier_link_capacity(const Platform& platform, std::size_t tier) {
  int below = 1;  // accelerators in one unit of the tier below
  for (std::size_t t = 0; t < tier; ++t) below *= platform.topology.tiers[t].size > 0 ? platform.topology.tiers[t].size : 1;
  return platform.topology.tiers[tier].effective() * below;
}

BytesPerSecond leaf_uplink_capacity(const Platform& platform, std::size_t tier) {
  const Tier& t = platform.topology.tiers[tier];
  return tier_link_capacity(platform, tier) * (t.nodes_per_leaf / t.oversubscription);
}

NetworkLinks add_network_links(FlowNetwork& net, const Platform& platform) {
  NetworkLinks links;
  for (std::size_t i = 0; i < platform.topology.tiers.size(); ++i) {
    const Tier& t = platform.topology.tiers[i];
    const BytesPerSecond capacity = tier_link_capacity(platform, i);
    // A tier without bandwidth (no NICs) still gets a link so indices line up; nothing uses it.
    links.tier.push_back(net.add_link(capacity.value() > 0 ? capacity : BytesPerSecond(1)));
    const bool leaves = t.kind == TierKind::fat_tree && t.nodes_per_leaf > 0 && capacity.value() > 0;
    links.leaf.push_back(leaves ? std::optional(net.add_link(leaf_uplink_capacity(platform, i))) : std::nullopt);
  }
  return links;
}

void start_collective_flows(Engine& engine, FlowNetwork& net, const NetworkLinks& links, const Platform& platform,
                            const CostTerms& terms, Bytes n, std::function<void()> done, const NetworkLinks* peer,
                            const Group* group) {
  // Transfers alone, as the closed form counts them; the rest of its time is start-up.
  std::vector<Duration> alone;
  Duration transfers;
  for (const BandwidthTerm& b : terms.bandwidth) {
    alone.push_back(n * b.bytes_factor / b.bandwidth);
    transfers = terms.combine == Combine::sum ? transfers + alone.back() : max(transfers, alone.back());
  }
  const Duration start_up = max(Duration::zero(), terms.time(n) - transfers);

  // A flow per term on its tier's link, weighted so that alone it moves at the term's bandwidth.
  struct State {
    std::size_t next = 0;
    std::size_t running = 0;
    std::function<void()> done;
  };
  auto state = std::make_shared<State>();
  state->done = std::move(done);
  auto launch = std::make_shared<std::function<void(std::size_t)>>();
  *launch = [&net, &links, peer, group, &platform, &terms, n, state, launch](std::size_t i) {
    const BandwidthTerm& b = terms.bandwidth[i];
    const double capacity = tier_link_capacity(platform, b.tier).value();
    // Alone, the flow runs at the term's unblocked bandwidth on its tier's link; across leaves
    // the leaf's uplinks, shared with whatever else crosses them, take the spine's share.
    const double weight = capacity * b.spine_share / b.bandwidth.value();
    std::vector<FlowNetwork::Use> uses = {{links.tier[b.tier], weight}};
    const bool placed = group && b.tier < links.placed.size() && !links.placed[b.tier].empty();
    if (placed) {
      // The group's nodes under each of the job's leaves, in proportion to the job's nodes there,
      // its ranks numbered leaf after leaf.
      const double units = group->fan_out[b.tier];
      double first = 0;
      for (const NetworkLinks::LeafShare& l : links.placed[b.tier]) {
        const double here = units * l.nodes / links.placed_nodes;
        const double crossing = placed_leaf_crossing(terms.algorithm, units, first, here);
        if (crossing > 0) uses.push_back({l.link, weight * crossing});
        first += here;
      }
    } else if (b.leaf_crossing > 0 && links.leaf[b.tier]) {
      uses.push_back({*links.leaf[b.tier], weight * b.leaf_crossing});
    }
    if (peer) uses.push_back({peer->tier[b.tier], weight});
    ++state->running;
    net.start(n * b.bytes_factor, std::move(uses), [state, launch, &terms] {
      --state->running;
      if (terms.combine == Combine::sum && state->next < terms.bandwidth.size()) {
        (*launch)(state->next++);
      } else if (state->running == 0 && state->next == terms.bandwidth.size()) {
        auto done_fn = std::move(state->done);
        *launch = nullptr;  // break the self-reference
        if (done_fn) done_fn();
      }
    });
  };
  engine.schedule_after(start_up, [state, launch, &terms, &engine] {
    if (terms.bandwidth.empty()) {
      if (state->done) state->done();
      return;
    }
    if (terms.combine == Combine::sum) {
      state->next = 1;
      (*launch)(0);
    } else {
      state->next = terms.bandwidth.size();
      for (std::size_t i = 0; i < terms.bandwidth.size(); ++i) (*launch)(i);
    }
    (void)engine;
  });
}

namespace {
// The chunk fidelity plays rings and trees: it chooses among those the library offers.
Selected select_for(const Platform& platform, const Group& group, CollectiveOp op, Bytes n,
                    const CollectiveChoice& choice, Fidelity fidelity) {
  if (fidelity != Fidelity::chunk || choice.algorithm) return select_collective(platform, group, op, n, choice);
  Platform rings_and_trees = platform;
  std::erase_if(rings_and_trees.library_algorithms, [](Algorithm a) { return a != Algorithm::ring && a != Algorithm::tree; });
  return select_collective(rings_and_trees, group, op, n, choice);
}
}  // namespace

std::uint64_t chunk_messages_for(const Platform& platform, const Group& group, CollectiveOp op, Bytes n,
                                 const CollectiveChoice& choice) {
  if (group.ranks() <= 1) return 0;
  const Selected s = select_for(platform, group, op, n, choice, Fidelity::chunk);
  return chunk_messages(platform, group, op, s.terms.algorithm, s.terms.protocol, n);
}

CollectiveTiming time_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes n,
                                 const CollectiveChoice& choice, Fidelity fidelity) {
  CollectiveTiming out;
  if (group.ranks() <= 1) return out;
  const Selected s = select_for(platform, group, op, n, choice, fidelity);
  out.algorithm = s.terms.algorithm;
  out.protocol = s.terms.protocol;
  switch (fidelity) {
    case Fidelity::analytic:
      out.time = s.time;
      return out;
    case Fidelity::flow: {
      Engine engine;
      FlowNetwork net(engine);
      const NetworkLinks links = add_network_links(net, platform);
      SimTime end;
      start_collective_flows(engine, net, links, platform, s.terms, n, [&] { end = engine.now(); });
      engine.run();
      out.time = end - SimTime::zero();
      out.events = engine.events_processed();
      return out;
    }
    case Fidelity::chunk: {
      const ChunkResult r = simulate_chunks(platform, group, op, s.terms.algorithm, s.terms.protocol, n);
      out.time = r.time;
      out.events = r.events;
      return out;
    }
  }
  return out;
}

}  // namespace sp::models
