// Several jobs on one fat tree (shared_fabric.hpp), against cases worked by hand: a job alone is
// today's step exactly; two jobs whose rings cross one oversubscribed uplink at once each get half
// of it; jobs under disjoint leaves do not slow each other; placement policies.
#include <gtest/gtest.h>

#include <numeric>

#include "models/step/shared_fabric.hpp"
#include "models/step/step_executor.hpp"
#include "models/step/step_model.hpp"
#include "sim/core/error.hpp"
#include "test_fixtures.hpp"

namespace sp::models {
namespace {

// simple_platform with leaves of 2 nodes and 2:1 oversubscription: a leaf's uplinks carry
// 2 nodes x 40 GB/s / 2 = one node's NICs (40 GB/s, 5 GB/s per GPU).
Platform two_node_leaves() {
  Platform p = testing::simple_platform();
  p.accelerator.compute.parallel_units = 128;
  p.topology.tiers[1].nodes_per_leaf = 2;
  p.topology.tiers[1].oversubscription = 2;
  return p;
}

// A step of one 1 GB all-reduce across two nodes (one rank a node) on the DP stream.
StepGraph one_all_reduce(const Platform& p) {
  const Group g{{1, 2}};
  const Bytes n(1e9);
  const Selected s = select_collective(p, g, CollectiveOp::all_reduce, n, {Algorithm::ring, Protocol::simple});
  StepGraph graph;
  graph.comms = {GraphComm{s.terms, n, g.top_tier(), g, Duration{}}};
  GraphOp op;
  op.phase = Phase::dp_comm;
  op.stream = StreamKind::dp;
  op.work = s.terms.time(n);
  op.comm = 0;
  graph.ops = {op};
  return graph;
}

}  // namespace

TEST(SharedFabric, TwoRingsOnOneUplinkEachGetHalfAndDisjointLeavesDoNotMeet) {
  // Each job's ring over its two nodes, one under leaf 0 and one under leaf 1, crosses each
  // leaf once with one node's traffic. Alone: the leaf's uplinks (one node's NICs) carry it at
  // the NIC's rate, start-up D plus transfer F. Two such jobs at once on leaves 0 and 1: two
  // nodes' traffic on one node's uplinks, each at half: D + 2F. On leaves 0-1 and 2-3: D + F each.
  const Platform p = two_node_leaves();
  const StepGraph g = one_all_reduce(p);
  const Execution alone = execute_step(g, p, Fidelity::flow);
  Duration transfer;
  for (const BandwidthTerm& b : g.comms[0].terms.bandwidth) transfer = max(transfer, g.comms[0].bytes * b.bytes_factor / b.bandwidth);
  ASSERT_GT(transfer, Duration::zero());
  const Duration d_plus_f = alone.end - SimTime::zero();

  const FabricRun shared = run_shared_fabric(p, 4, {{&g, {1, 1}, 1, {}}, {&g, {1, 1}, 1, {}}});
  for (const FabricJobSteps& j : shared.jobs) {
    ASSERT_EQ(j.steps.size(), 1u);
    EXPECT_NEAR(to_seconds(j.steps[0]), to_seconds(d_plus_f + transfer), 1e-9);
  }
  const FabricRun apart = run_shared_fabric(p, 4, {{&g, {1, 1, 0, 0}, 1, {}}, {&g, {0, 0, 1, 1}, 1, {}}});
  for (const FabricJobSteps& j : apart.jobs) EXPECT_EQ(j.steps[0].ps(), d_plus_f.ps());
  // Both nodes of each job under one leaf: nothing crosses an uplink, each as alone.
  const FabricRun packed = run_shared_fabric(p, 2, {{&g, {2, 0}, 1, {}}, {&g, {0, 2}, 1, {}}});
  for (const FabricJobSteps& j : packed.jobs) EXPECT_EQ(j.steps[0].ps(), d_plus_f.ps());
  // The second job starting after the first has ended: no overlap, no slowdown; three steps each.
  const FabricRun later = run_shared_fabric(p, 2, {{&g, {1, 1}, 3, {}}, {&g, {1, 1}, 3, d_plus_f * 4}});
  for (const FabricJobSteps& j : later.jobs) {
    ASSERT_EQ(j.steps.size(), 3u);
    for (Duration s : j.steps) EXPECT_EQ(s.ps(), d_plus_f.ps());
  }
}

TEST(SharedFabric, AJobAloneIsItsStepExactly) {
  // A shipped workload's whole step (compute, TP, DP buckets) on 8 nodes of a DGX H100 fat tree
  // with 2 nodes a leaf at 4:1, packed on 4 leaves: the same flows as a job alone, to the ps.
  Platform p = testing::shipped_platform("dgx_h100");
  p.topology.tiers[1].nodes_per_leaf = 2;
  p.topology.tiers[1].oversubscription = 4;
  const Workload w = testing::shipped_workload("bert");
  ParallelSpec spec;
  const ParallelLayout lay = testing::layout(p, 64, 1024, spec);
  const StepGraph g = build_step_graph(w, p, lay);
  const Execution alone = execute_step(g, p, Fidelity::flow);
  const auto where = place_jobs(Placement::packed, {8}, 4, 2);
  EXPECT_EQ(where[0], (std::vector<int>{2, 2, 2, 2}));
  const FabricRun run = run_shared_fabric(p, 4, {{&g, where[0], 2, {}}});
  ASSERT_EQ(run.jobs[0].steps.size(), 2u);
  EXPECT_EQ(run.jobs[0].steps[0].ps(), (alone.end - SimTime::zero()).ps());
  EXPECT_EQ(run.jobs[0].steps[1].ps(), (alone.end - SimTime::zero()).ps());
  // Spread over 8 leaves with a second copy beside it, it is slower: the uplinks are shared.
  const auto spread = place_jobs(Placement::spread, {8, 8}, 8, 2);
  EXPECT_EQ(spread[0], (std::vector<int>(8, 1)));
  const FabricRun two = run_shared_fabric(p, 8, {{&g, spread[0], 1, {}}, {&g, spread[1], 1, {}}});
  EXPECT_GT(two.jobs[0].steps[0], alone.end - SimTime::zero());
}

TEST(SharedFabric, PlacementPoliciesFillOrDealAndRefuseWhatDoesNotFit) {
  // Jobs of 3 and 2 nodes on 3 leaves of 2: packed fills leaf 0, then 1: {2,1,0} and {0,1,1};
  // spread deals round the leaves: {1,1,1} and {1,1,0}.
  EXPECT_EQ(place_jobs(Placement::packed, {3, 2}, 3, 2), (std::vector<std::vector<int>>{{2, 1, 0}, {0, 1, 1}}));
  EXPECT_EQ(place_jobs(Placement::spread, {3, 2}, 3, 2), (std::vector<std::vector<int>>{{1, 1, 1}, {1, 1, 0}}));
  EXPECT_THROW(place_jobs(Placement::packed, {4, 3}, 3, 2), ModelError);
  // Random: every job gets its nodes, no leaf more than it holds, the same draw for the same seed
  // and (almost surely) another for another seed.
  const auto a = place_jobs(Placement::random, {5, 6}, 4, 4, 7), b = place_jobs(Placement::random, {5, 6}, 4, 4, 7);
  EXPECT_EQ(a, b);
  for (std::size_t l = 0; l < 4; ++l) EXPECT_LE(a[0][l] + a[1][l], 4);
  EXPECT_EQ(std::accumulate(a[0].begin(), a[0].end(), 0), 5);
  EXPECT_EQ(std::accumulate(a[1].begin(), a[1].end(), 0), 6);
  bool other = false;
  for (std::uint64_t seed = 8; seed < 12; ++seed) other = other || place_jobs(Placement::random, {5, 6}, 4, 4, seed) != a;
  EXPECT_TRUE(other);
  EXPECT_THROW(leaf_tier(testing::simple_platform()), ModelError);
}

}  // namespace sp::models
