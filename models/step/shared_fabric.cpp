#include "models/step/shared_fabric.hpp"

#include <fmt/format.h>

#include <memory>
#include <numeric>

#include "models/collective/fidelity.hpp"
#include "models/step/step_executor.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"

namespace sp::models {

Duration FabricJobSteps::mean() const {
  if (steps.empty()) return Duration::zero();
  Duration sum;
  for (Duration d : steps) sum += d;
  return Duration::from_ps(sum.ps() / static_cast<std::int64_t>(steps.size()));
}

std::size_t leaf_tier(const Platform& p) {
  for (std::size_t t = 0; t < p.topology.tiers.size(); ++t) {
    const Tier& tier = p.topology.tiers[t];
    if (tier.kind == TierKind::fat_tree && tier.nodes_per_leaf > 0) return t;
  }
  throw ModelError(fmt::format("platform '{}' has no leaves to share: give scale_out.nodes_per_leaf (and its "
                               "oversubscription)", p.name));
}

FabricRun run_shared_fabric(const Platform& p, int leaves, const std::vector<FabricJob>& jobs, const StepSeen& on_step) {
  const std::size_t tier = leaf_tier(p);
  Engine engine;
  FlowNetwork net(engine);
  // One leaf's uplinks, as add_network_links sizes them for a job alone.
  std::vector<std::size_t> leaf_links;
  for (int l = 0; l < leaves; ++l) leaf_links.push_back(net.add_link(leaf_uplink_capacity(p, tier)));

  FabricRun run;
  run.jobs.resize(jobs.size());
  std::vector<std::unique_ptr<StepPlayer>> players;
  std::vector<SimTime> began(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const FabricJob& job = jobs[j];
    if (static_cast<int>(job.leaf_nodes.size()) > leaves) throw ModelError(fmt::format("job {} is placed on more than {} leaves", j, leaves));
    // The job's leaves, shared with the other jobs there; every stage sees all of them.
    std::vector<std::vector<NetworkLinks::LeafShare>> placed(p.topology.tiers.size());
    int placed_nodes = 0;
    for (std::size_t l = 0; l < job.leaf_nodes.size(); ++l) {
      if (job.leaf_nodes[l] > 0) placed[tier].push_back({leaf_links[l], job.leaf_nodes[l]});
      placed_nodes += job.leaf_nodes[l];
    }
    std::vector<NetworkLinks> stages;
    for (int s = 0; s < job.graph->stages; ++s) {
      NetworkLinks links = add_network_links(net, p);
      links.placed = placed;
      links.placed_nodes = placed_nodes;
      stages.push_back(std::move(links));
    }
    players.push_back(std::make_unique<StepPlayer>(*job.graph, job.platform ? *job.platform : p, engine, net, std::move(stages)));
  }
  // Each job's next step starts when its last one ends.
  auto step = std::make_shared<std::function<void(std::size_t)>>();
  *step = [&, step](std::size_t j) {
    began[j] = engine.now();
    players[j]->start([&, j, step] {
      run.jobs[j].steps.push_back(engine.now() - began[j]);
      if (on_step) on_step(j, players[j]->result());
      if (static_cast<int>(run.jobs[j].steps.size()) < jobs[j].steps) (*step)(j);
    });
  };
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].steps > 0) engine.schedule_after(jobs[j].start, [step, j] { (*step)(j); });
  }
  engine.run();
  *step = nullptr;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (static_cast<int>(run.jobs[j].steps.size()) != jobs[j].steps) {
      throw std::logic_error("shared fabric: a job's step graph never finished");
    }
  }
  run.events = engine.events_processed();
  run.span = engine.now() - SimTime::zero();
  for (std::size_t l : leaf_links) {
    const double capacity_bytes = net.capacity(l).value() * to_seconds(run.span);
    run.leaf_utilization.push_back(capacity_bytes > 0 ? net.carried(l) / capacity_bytes : 0);
  }
  return run;
}

std::vector<std::vector<int>> place_jobs(Placement policy, const std::vector<int>& job_nodes, int leaves,
                                         int nodes_per_leaf, std::uint64_t seed) {
  const long long need = std::accumulate(job_nodes.begin(), job_nodes.end(), 0LL);
  if (need > static_cast<long long>(leaves) * nodes_per_leaf) {
    throw ModelError(fmt::format("the jobs need {} nodes; {} leaves of {} hold {}", need, leaves, nodes_per_leaf,
                                 static_cast<long long>(leaves) * nodes_per_leaf));
  }
  std::vector<std::vector<int>> out;
  if (policy == Placement::listed) throw std::logic_error("place_jobs: listed placements come from the scenario");
  if (policy == Placement::random) {
    // Every node slot by its leaf, shuffled (Fisher-Yates on our own generator: the same
    // placement on every machine), then dealt to the jobs in order.
    std::vector<int> slots;
    for (int l = 0; l < leaves; ++l) slots.insert(slots.end(), static_cast<std::size_t>(nodes_per_leaf), l);
    RngStream rng(seed, 0, "placement");
    for (std::size_t i = slots.size(); i > 1; --i) {
      std::swap(slots[i - 1], slots[static_cast<std::size_t>(rng.next_u64() % i)]);
    }
    std::size_t next = 0;
    for (int nodes : job_nodes) {
      std::vector<int> on(static_cast<std::size_t>(leaves), 0);
      for (int n = 0; n < nodes; ++n) ++on[static_cast<std::size_t>(slots[next++])];
      out.push_back(std::move(on));
    }
    return out;
  }
  std::vector<int> free(static_cast<std::size_t>(leaves), nodes_per_leaf);
  std::size_t next = 0;  // spread: the leaf to deal to next
  std::size_t fill = 0;  // packed: the first leaf with room
  for (int nodes : job_nodes) {
    std::vector<int> on(static_cast<std::size_t>(leaves), 0);
    for (int n = 0; n < nodes; ++n) {
      std::size_t& at = policy == Placement::packed ? fill : next;
      while (free[at] == 0) at = (at + 1) % free.size();
      ++on[at];
      --free[at];
      if (policy == Placement::spread) at = (at + 1) % free.size();
    }
    out.push_back(std::move(on));
  }
  return out;
}

}  // namespace sp::models
