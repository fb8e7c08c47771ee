// Collective cost terms against their closed forms, worked by hand on the test platform of
// test_fixtures.hpp (B0 = 100 GB/s inside a node, 5 GB/s NIC share per accelerator, a0 = 1 us,
// a1 = 10 us, Simple protocol, no launch cost).
#include <gtest/gtest.h>

#include "models/collective/collective.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

namespace {
const Platform kTest = testing::simple_platform();

CostTerms terms(int ranks, CollectiveOp op, Algorithm a, Protocol proto = Protocol::simple,
                const Platform& p = kTest) {
  const auto t = cost_terms(p, packed_group(p.topology, ranks), op, a, proto);
  EXPECT_TRUE(t.has_value()) << algorithm_name(a) << " " << op_name(op) << " on " << ranks;
  return t ? *t : CostTerms{};
}
}  // namespace

TEST(Ring, AllReduceInsideANodeIsTheTextbookClosedForm) {
  // 2(p-1) a + 2(p-1)/p n / B = 14 us + 1.75 x 1 GB / 100 GB/s = 14 us + 17.5 ms
  const CostTerms t = terms(8, CollectiveOp::all_reduce, Algorithm::ring);
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), seconds(14e-6 + 1.75 * 1e9 / 100e9).ps());
  ASSERT_EQ(t.latency.size(), 1u);
  EXPECT_EQ(t.latency[0].steps, 14);
  ASSERT_EQ(t.bandwidth.size(), 1u);
  EXPECT_EQ(t.bandwidth[0].link, "scale_up");
  EXPECT_DOUBLE_EQ(t.bandwidth[0].bytes_factor, 1.75);
}

TEST(Ring, ReduceScatterAndAllGatherAreOneLap) {
  // (p-1) a + (p-1)/p n / B = 7 us + 0.875 x 10 ms
  for (CollectiveOp op : {CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    EXPECT_EQ(terms(8, op, Algorithm::ring).time(Bytes(1e9)).ps(), seconds(7e-6 + 0.875e-2).ps());
  }
}

TEST(Ring, AcrossNodesEveryStepCostsTheAverageHopUnlessOneLinkIsSlower) {
  // 32 ranks on 4 nodes: of the ring's 32 edges 28 stay in a node (1 us, 100 GB/s) and 4 cross
  // nodes (10 us, the node's 8 x 5 = 40 GB/s of NICs). 62 steps of n/32 bytes each.
  //   latency: 62 x (28/32 x 1 us + 4/32 x 10 us) = 54.25 + 77.5 = 131.75 us
  //   transfer terms: 2 x 31/32 x n / 100 GB/s and 2 x 31/32 x n / 40 GB/s, weighted 28/32, 4/32
  const CostTerms t = terms(32, CollectiveOp::all_reduce, Algorithm::ring);
  EXPECT_EQ(t.combine, Combine::ring);
  ASSERT_EQ(t.latency.size(), 2u);
  EXPECT_DOUBLE_EQ(t.latency[0].steps, 54.25);
  EXPECT_DOUBLE_EQ(t.latency[1].steps, 7.75);
  ASSERT_EQ(t.bandwidth.size(), 2u);
  EXPECT_EQ(t.bandwidth[1].link, "scale_out");
  EXPECT_DOUBLE_EQ(t.bandwidth[1].bandwidth.value(), 40e9);
  EXPECT_DOUBLE_EQ(t.bandwidth[1].weight, 0.125);
  // 1 GB: the NICs are the bottleneck, every hop waits for them and latency hides behind them:
  //   max(131.75 us + 0.875 x 19.375 ms + 0.125 x 48.4375 ms, 48.4375 ms) = 48.4375 ms
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), seconds(2.0 * 31 / 32 * 1e9 / 40e9).ps());
  // 1 MB: latency-bound, 131.75 us + 0.875 x 19.375 us + 0.125 x 48.4375 us
  EXPECT_EQ(t.time(Bytes(1e6)).ps(), seconds(131.75e-6 + 0.875 * 19.375e-6 + 0.125 * 48.4375e-6).ps());
}

TEST(Ring, OnATorusEachDimensionIsItsOwnRing) {
  // 64 chips in one 4 x 4 x 4 torus (1 us a step, 100 GB/s a chip): per-dimension rings take
  // 3 + 3 + 3 = 9 steps a lap, not 63, so an all-reduce pays 2 x 9 = 18 steps of latency; the
  // bytes are those of any ring, 2 x 63/64 n.
  Platform torus = testing::simple_platform();
  torus.topology.accelerators_per_node = 64;
  torus.topology.tiers[0].kind = TierKind::torus;
  torus.topology.tiers[0].size = 64;
  const CostTerms t = terms(64, CollectiveOp::all_reduce, Algorithm::ring, Protocol::simple, torus);
  ASSERT_EQ(t.latency.size(), 1u);
  EXPECT_DOUBLE_EQ(t.latency[0].steps, 18);
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), seconds(18e-6 + 2.0 * 63 / 64 * 1e9 / 100e9).ps());
  // A pipelined broadcast chain: 9 hops. The same 64 on a switch: 63.
  EXPECT_DOUBLE_EQ(terms(64, CollectiveOp::broadcast, Algorithm::ring, Protocol::simple, torus).latency[0].steps, 9);
  Platform flat = torus;
  flat.topology.tiers[0].kind = TierKind::switch_;
  EXPECT_DOUBLE_EQ(terms(64, CollectiveOp::broadcast, Algorithm::ring, Protocol::simple, flat).latency[0].steps, 63);
}

TEST(Ring, BroadcastIsAPipelinedChain) {
  // p-1 steps, every rank forwards the whole buffer once: 7 us + 1 GB / 100 GB/s
  EXPECT_EQ(terms(8, CollectiveOp::broadcast, Algorithm::ring).time(Bytes(1e9)).ps(), seconds(7e-6 + 1e-2).ps());
}

TEST(Tree, ChainInsideDoubleBinaryTreeAcross) {
  // 64 ranks, 8 nodes. Latency 2 ((8-1) a0 + log2(8) a1) = 2 (7 + 30) us = 74 us.
  // Bandwidth, pipelined, x 0.92 (NCCL's tree factor): inside 2n / 100 GB/s; across, more than
  // two nodes: 2n over the node's 40 GB/s; the NICs bound it: 2 x 1 GB / (0.92 x 40 GB/s).
  // Pipeline fill: the buffer is split over the two trees (5e8 B each) in chunks of at most
  // 512 KiB: 954 chunks of c = 5e8/954 B. A chunk crosses 14 chain hops at 92 GB/s and 6 tree
  // hops at 36.8 GB/s; the streaming term already counts one chunk on the busiest link (the
  // NICs, 2 x c / 36.8 GB/s per piece): fill = c (14/92e9 + 6/36.8e9 - 2/36.8e9).
  const CostTerms t = terms(64, CollectiveOp::all_reduce, Algorithm::tree);
  EXPECT_EQ(t.latency_total().ps(), microseconds(74).ps());
  const double c = 5e8 / 954;
  const double fill = c * (14 / 92e9 + 6 / 36.8e9 - 2 / 36.8e9);
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), (microseconds(74) + seconds(2e9 / (0.92 * 40e9)) + seconds(fill)).ps());
}

TEST(Tree, TwoNodesExchangeOnce) {
  // With two nodes each is the other's child: n crosses the NICs once each way.
  const CostTerms t = terms(16, CollectiveOp::all_reduce, Algorithm::tree);
  EXPECT_DOUBLE_EQ(t.bandwidth.back().bytes_factor, 1.0);
}

TEST(Tree, BeatsTheRingOnLatencyAtScale) {
  // 1024 ranks: ring 2 x 1023 steps, tree 2 (7 + 7) steps.
  const Bytes small(1024);
  EXPECT_LT(terms(1024, CollectiveOp::all_reduce, Algorithm::tree).time(small),
            terms(1024, CollectiveOp::all_reduce, Algorithm::ring).time(small));
}

TEST(Tree, PaysNcclsTreeLatenciesNotTheRings) {
  // NCCL's tuning model (src/graph/tuning.cc) prices a tree all-reduce of 2 DGX H100 nodes in LL
  // at baseLat 6.8 + 2 ((8 - 1) x 0.6 us on NVLink + log2(2) x 5.0 us on the network) = 25.2 us;
  // NCCL's own log for 2 x 8 H100 prints "64 Bytes -> Algo 0 proto 0 time 25.207"
  // (NVIDIA/nccl issue 1453). The ring's network step (2.7 us) would give 20.6 us.
  const Platform dgx = testing::shipped_platform("dgx_h100");
  const auto t = cost_terms(dgx, packed_group(dgx.topology, 16), CollectiveOp::all_reduce, Algorithm::tree, Protocol::ll);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(to_seconds(t->latency_total()) * 1e6, 25.2, 1e-9);
  // LL128: 14 + 2 (7 x 1.25 + 8.5) = 48.5 us; Simple: 8.4 + 2 (7 x 4.0 + 14) = 92.4 us.
  const auto t128 = cost_terms(dgx, packed_group(dgx.topology, 16), CollectiveOp::all_reduce, Algorithm::tree, Protocol::ll128);
  const auto simple = cost_terms(dgx, packed_group(dgx.topology, 16), CollectiveOp::all_reduce, Algorithm::tree, Protocol::simple);
  EXPECT_NEAR(to_seconds(t128->latency_total()) * 1e6, 48.5, 1e-9);
  EXPECT_NEAR(to_seconds(simple->latency_total()) * 1e6, 92.4, 1e-9);
  // The tree streams LL at 1/3.8 of its bandwidth (the ring at 1/2): over 8 nodes, 2n through a
  // node's 8 NDR NICs at 8 x 0.94 x 50 GB/s x 0.92 x 0.263 = 91.0 GB/s, which LL's ceiling over
  // more than two nodes, 20.4 GB/s, lowers.
  const auto t8 = cost_terms(dgx, packed_group(dgx.topology, 64), CollectiveOp::all_reduce, Algorithm::tree, Protocol::ll);
  EXPECT_NEAR(t8->bandwidth.back().bandwidth.value(), 20.4e9, 1.0);
  EXPECT_NEAR(t8->bandwidth.back().bytes_factor, 2.0, 1e-12);
}

TEST(Ring, LlAcrossNodesIsCappedAtItsBusCeiling) {
  // NCCL caps LL's bus bandwidth across nodes (llMaxBws on x86 Intel hosts: 39 GB/s over two
  // nodes, 20.4 over more): 1 GiB over 64 DGX H100 GPUs in LL streams at 20.4 GB/s of busbw,
  // 2 x 63/64 x 2^30 B / 20.4 GB/s = 103.6 ms, where the NICs' 0.5 x 8 x 47 GB/s would give 11 ms.
  const Platform dgx = testing::shipped_platform("dgx_h100");
  const auto t = cost_terms(dgx, packed_group(dgx.topology, 64), CollectiveOp::all_reduce, Algorithm::ring, Protocol::ll);
  ASSERT_TRUE(t.has_value());
  const double n = 1 << 30;
  EXPECT_NEAR(to_seconds(t->time(Bytes(n))), 2.0 * 63 / 64 * n / 20.4e9 + to_seconds(t->fixed), 2e-4);
  // Two nodes: 39 GB/s; inside a node no ceiling.
  const auto two = cost_terms(dgx, packed_group(dgx.topology, 16), CollectiveOp::all_reduce, Algorithm::ring, Protocol::ll);
  double slowest = 1e30;
  for (const BandwidthTerm& b : two->bandwidth) slowest = std::min(slowest, b.bandwidth.value());
  EXPECT_NEAR(slowest, 39e9, 1.0);
  const auto one = cost_terms(dgx, packed_group(dgx.topology, 8), CollectiveOp::all_reduce, Algorithm::ring, Protocol::ll);
  for (const BandwidthTerm& b : one->bandwidth) EXPECT_GT(b.bandwidth.value(), 39e9);
  // Simple has no ceiling.
  const auto simple = cost_terms(dgx, packed_group(dgx.topology, 64), CollectiveOp::all_reduce, Algorithm::ring, Protocol::simple);
  for (const BandwidthTerm& b : simple->bandwidth) EXPECT_GT(b.bandwidth.value(), 100e9);
}

TEST(Ring, StepsInsideANodeWaitForTheNetworkOverheadOnceTheRingSpansNodes) {
  // NCCL (tuning.cc, since 2.18): a ring spanning nodes pays at least its network overhead on each
  // step inside a node: 1 us on Intel hosts, 2 us on AMD, three times that for Simple. An 8-byte
  // all-reduce over 2 DGX H100 nodes (16 ranks): 2 x 15 = 30 steps, 14 of the ring's 16 edges
  // inside a node (26.25 steps) and 2 across (3.75 steps at 2.7 us LL, 14 us Simple):
  //   LL, Intel:      6.6 + 26.25 x max(0.6, 1) + 3.75 x 2.7 = 42.975 us (28.5 without the floor)
  //   LL, AMD:        6.6 + 26.25 x 2             + 10.125    = 69.225 us
  //   Simple, Intel:  8.4 + 26.25 x max(3.4, 3)   + 3.75 x 14 = 150.15 us (unchanged)
  //   Simple, AMD:    8.4 + 26.25 x 6             + 52.5      = 218.4 us
  // Inside one node (8 ranks, 14 steps) no floor: 6.6 + 14 x 0.6 = 15.0 us. A broadcast's chain
  // pays none either (a chain of 15 edges, 14 inside a node: 6.6 + 14 x 0.6 + 2.7 = 17.7 us).
  Platform dgx = testing::shipped_platform("dgx_h100");
  const auto latency_us = [&](int ranks, CollectiveOp op, Protocol p) {
    const auto t = cost_terms(dgx, packed_group(dgx.topology, ranks), op, Algorithm::ring, p);
    return to_seconds(t->time(Bytes(0))) * 1e6;
  };
  EXPECT_NEAR(latency_us(16, CollectiveOp::all_reduce, Protocol::ll), 42.975, 1e-6);
  EXPECT_NEAR(latency_us(16, CollectiveOp::all_reduce, Protocol::simple), 150.15, 1e-6);
  EXPECT_NEAR(latency_us(8, CollectiveOp::all_reduce, Protocol::ll), 15.0, 1e-6);
  EXPECT_NEAR(latency_us(16, CollectiveOp::broadcast, Protocol::ll), 17.7, 1e-6);
  dgx.host_cpu = HostCpu::amd;
  EXPECT_NEAR(latency_us(16, CollectiveOp::all_reduce, Protocol::ll), 69.225, 1e-6);
  EXPECT_NEAR(latency_us(16, CollectiveOp::all_reduce, Protocol::simple), 218.4, 1e-6);
  // AMD hosts cap LL at 22.5 GB/s of busbw over two nodes (llMaxBws), not Intel's 39.
  const auto two = cost_terms(dgx, packed_group(dgx.topology, 16), CollectiveOp::all_reduce, Algorithm::ring, Protocol::ll);
  double slowest = 1e30;
  for (const BandwidthTerm& b : two->bandwidth) slowest = std::min(slowest, b.bandwidth.value());
  EXPECT_NEAR(slowest, 22.5e9, 1.0);
  // The chunk simulation's hops agree: a ring hop inside a node of a spanning ring takes 2 us.
  EXPECT_EQ(hop(dgx, packed_group(dgx.topology, 16), Protocol::ll, 0).latency, seconds(2e-6));
  EXPECT_EQ(hop(dgx, packed_group(dgx.topology, 16), Protocol::ll, 0, Algorithm::ring, CollectiveOp::broadcast).latency,
            seconds(0.6e-6));
}

TEST(HostCpu, AProcessorsNameSaysItsVendor) {
  EXPECT_EQ(host_cpu_of_processor("Intel(R) Xeon(R) Platinum 8480C"), HostCpu::intel);
  EXPECT_EQ(host_cpu_of_processor("AMD EPYC 9654 96-Core Processor"), HostCpu::amd);
  EXPECT_EQ(host_cpu_of_processor("2x EPYC 9474F"), HostCpu::amd);
  EXPECT_EQ(host_cpu_of_processor("NVIDIA Grace CPU"), HostCpu::arm);
  EXPECT_EQ(host_cpu_of_processor("Ampere Altra Max M128-30"), HostCpu::arm);  // Neoverse N1 cores
  EXPECT_EQ(host_cpu_of_processor(""), std::nullopt);
  EXPECT_EQ(host_cpu_from_name("AMD"), HostCpu::amd);
  EXPECT_EQ(host_cpu_from_name("sparc"), std::nullopt);
}

TEST(HalvingDoubling, RabenseifnerClosedForm) {
  // One node of 8: 2 log2(8) a + 2 (p-1)/p n / B = 6 us + 1.75 x 10 ms.
  EXPECT_EQ(terms(8, CollectiveOp::all_reduce, Algorithm::halving_doubling).time(Bytes(1e9)).ps(),
            seconds(6e-6 + 1.75e-2).ps());
  // 4 nodes: inside 2 x 3 steps, n (1 - 1/8) each way at 100 GB/s; across 2 x 2 steps, the n/8
  // left per rank x (1 - 1/4) each way over its own 5 GB/s NIC share:
  //   6 us + 40 us + 2 x 0.875 x 10 ms + 2 x 0.75/8 x 1 GB / 5 GB/s
  EXPECT_EQ(terms(32, CollectiveOp::all_reduce, Algorithm::halving_doubling).time(Bytes(1e9)).ps(),
            seconds(46e-6 + 1.75e-2 + 2 * 0.75 / 8 * 1e9 / 5e9).ps());
  // Needs powers of two.
  EXPECT_FALSE(cost_terms(kTest, packed_group(kTest.topology, 24), CollectiveOp::all_reduce,
                          Algorithm::halving_doubling, Protocol::simple));
}

TEST(Hierarchical, InsideAcrossInsideOneAfterAnother) {
  // 32 ranks on 4 nodes: RS+AG inside 2 x 7 steps and 2 x 7/8 n at 100 GB/s; all-reduce of n/8
  // across 2 x 3 steps at 10 us, 2 x 3/4 x n/8 over the 5 GB/s share.
  const CostTerms t = terms(32, CollectiveOp::all_reduce, Algorithm::hierarchical);
  EXPECT_EQ(t.combine, Combine::sum);
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), seconds(14e-6 + 60e-6 + 1.75e-2 + 2 * 0.75 / 8 * 1e9 / 5e9).ps());
}

TEST(AllToAll, PairwiseOverEveryTierAtOnce) {
  // 16 ranks, 2 nodes: 7 peers inside (7/16 n at 100 GB/s), 8 across (8/16 n at 5 GB/s):
  // latency 7 x 1 + 8 x 10 us; the NIC term dominates: 0.5 x 1 GB / 5 GB/s = 100 ms.
  const CostTerms t = terms(16, CollectiveOp::all_to_all, Algorithm::pairwise);
  EXPECT_EQ(t.time(Bytes(1e9)).ps(), seconds(87e-6 + 0.1).ps());
}

TEST(InNetwork, NvlsAndSharpNeedTheirSwitches) {
  EXPECT_FALSE(cost_terms(kTest, packed_group(kTest.topology, 8), CollectiveOp::all_reduce, Algorithm::nvls,
                          Protocol::simple));
  Platform p = kTest;
  p.topology.tiers[0].reduction = InNetworkReduction{"nvls", 0.5, microseconds(20)};
  // One node: start-up + n / (0.5 x 100 GB/s)
  const auto t = cost_terms(p, packed_group(p.topology, 8), CollectiveOp::all_reduce, Algorithm::nvls, Protocol::simple);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time(Bytes(1e9)).ps(), (microseconds(20) + seconds(1e9 / 50e9)).ps());
  // NVLS is Simple only and all-reduce only.
  EXPECT_FALSE(cost_terms(p, packed_group(p.topology, 8), CollectiveOp::all_reduce, Algorithm::nvls, Protocol::ll));
  EXPECT_FALSE(cost_terms(p, packed_group(p.topology, 8), CollectiveOp::all_gather, Algorithm::nvls, Protocol::simple));
}

// NCCL 2.18-2.28.3 builds NVLS only where a communicator has more than two GPUs in a node
// (src/transport/nvls.cc): a data-parallel group of one rank a node (BERT's and Stable
// Diffusion's gradients across nodes, sharded within them), or of two, takes the tree or ring. Across nodes the switch then has
// nothing to reduce, and SHARP's price keeps no NVLS term either: n / (0.8 x 5 GB/s) + 30 us.
// Broadcast is NCCL's ring only (src/graph/tuning.cc).
TEST(InNetwork, NoSwitchReductionForOneRankANodeAndBroadcastOnRingsOnly) {
  Platform p = kTest;
  p.topology.tiers[0].reduction = InNetworkReduction{"nvls", 0.5, microseconds(20)};
  const Group one_a_node{{1, 4}};
  EXPECT_FALSE(cost_terms(p, one_a_node, CollectiveOp::all_reduce, Algorithm::nvls, Protocol::simple));
  EXPECT_FALSE(cost_terms(p, Group{{2, 4}}, CollectiveOp::all_reduce, Algorithm::nvls, Protocol::simple));
  EXPECT_TRUE(cost_terms(p, Group{{4, 4}}, CollectiveOp::all_reduce, Algorithm::nvls, Protocol::simple));
  p.topology.tiers[1].reduction = InNetworkReduction{"sharp", 0.8, microseconds(30)};
  const auto sharp = cost_terms(p, one_a_node, CollectiveOp::all_reduce, Algorithm::sharp, Protocol::simple);
  ASSERT_TRUE(sharp);
  EXPECT_EQ(sharp->time(Bytes(1e9)).ps(), (microseconds(30) + seconds(1e9 / 4e9)).ps());
  EXPECT_FALSE(cost_terms(kTest, packed_group(kTest.topology, 32), CollectiveOp::broadcast, Algorithm::tree,
                          Protocol::simple));
}

TEST(BusFactor, AsNcclTestsDefinesIt) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::broadcast, 8), 1.0);
}

// NCCL's tuner on a real platform: latency-bound sizes take LL, mid sizes LL128, and the
// largest go to NVLS inside a DGX H100; across 16 DGX H100 nodes (no SHARP) small messages take
// the tree and large ones the ring.
TEST(Selection, PicksLikeNcclOnDgxH100) {
  const Platform dgx = testing::shipped_platform("dgx_h100");
  const Group node = packed_group(dgx.topology, 8);
  EXPECT_EQ(select_collective(dgx, node, CollectiveOp::all_reduce, Bytes(8)).terms.protocol, Protocol::ll);
  EXPECT_EQ(select_collective(dgx, node, CollectiveOp::all_reduce, Bytes(16 << 20)).terms.protocol, Protocol::ll128);
  EXPECT_EQ(select_collective(dgx, node, CollectiveOp::all_reduce, Bytes(1 << 30)).terms.algorithm, Algorithm::nvls);

  Platform no_nvls = dgx;
  no_nvls.library_algorithms = {Algorithm::ring, Algorithm::tree};
  const Group cluster = packed_group(dgx.topology, 128);
  EXPECT_EQ(select_collective(no_nvls, cluster, CollectiveOp::all_reduce, Bytes(64 << 10)).terms.algorithm,
            Algorithm::tree);
  EXPECT_EQ(select_collective(no_nvls, cluster, CollectiveOp::all_reduce, Bytes(4.0 * (1 << 30))).terms.algorithm,
            Algorithm::ring);
  // Forcing works, and an impossible force is a model error.
  EXPECT_EQ(select_collective(dgx, node, CollectiveOp::all_reduce, Bytes(8), {Algorithm::ring, Protocol::simple})
                .terms.protocol,
            Protocol::simple);
  EXPECT_THROW(select_collective(dgx, node, CollectiveOp::all_gather, Bytes(8), {Algorithm::nvls, std::nullopt}),
               ModelError);
}

TEST(Topology, PackedGroupsFillInnerTiersFirst) {
  const Platform nvl = testing::shipped_platform("h100_nvl_pcie");  // bridge pairs, PCIe host, NICs
  EXPECT_EQ(packed_group(nvl.topology, 2).fan_out, (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(packed_group(nvl.topology, 8).fan_out, (std::vector<int>{2, 4, 1}));
  EXPECT_EQ(packed_group(nvl.topology, 32).fan_out, (std::vector<int>{2, 4, 4}));
  EXPECT_EQ(packed_group(nvl.topology, 32).top_tier(), 2u);
  // A ring over one 8-card server: half its hops cross a bridge (300 x 0.8 GB/s), half go over
  // PCIe between pairs (2 cards x 63 x 0.8 GB/s per pair); for large buffers PCIe bounds it.
  const auto t = cost_terms(nvl, packed_group(nvl.topology, 8), CollectiveOp::all_reduce, Algorithm::ring,
                            Protocol::simple);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->bandwidth.size(), 2u);
  EXPECT_EQ(t->bandwidth[1].link, "host");
  EXPECT_DOUBLE_EQ(t->bandwidth[1].bandwidth.value(), 2 * 63e9 * 0.8);
  EXPECT_DOUBLE_EQ(t->bandwidth[0].weight, 0.5);
  EXPECT_EQ(t->time(Bytes(1e10)).ps(), (t->fixed + Bytes(1e10) * 1.75 / BytesPerSecond(2 * 63e9 * 0.8)).ps());
}

TEST(Collective, ItsHbmTimeIsThreeTimesItsBusBytesOrTwoWaysInTheSwitch) {
  // A ring all-gather of 64 MiB over 4 ranks: nccl-tests' bus bytes 64 MiB x 3/4 = 50.3 MB, what
  // a rank receives; NCCL stages every byte in memory, reads it back and touches the user buffer
  // (3 bytes a byte): 151.0 MB at the H100's 3.35 TB/s, 45.07 us (in 200 us: 22.5 % of HBM). An
  // NVLS all-reduce stages nothing: the input read, the output written, 2 x 64 MiB = 40.06 us.
  // One rank moves nothing.
  const Platform p = testing::shipped_platform("dgx_h100");
  const Bytes n(64.0 * 1024 * 1024);
  const Duration ring = collective_memory_time(p, Algorithm::ring, CollectiveOp::all_gather, 4, n);
  EXPECT_NEAR(to_seconds(ring), 3 * 64.0 * 1024 * 1024 * 0.75 / 3.35e12, 1e-12);  // whole picoseconds
  EXPECT_NEAR(to_seconds(ring) / 200e-6, 0.2254, 1e-4);
  EXPECT_NEAR(to_seconds(collective_memory_time(p, Algorithm::nvls, CollectiveOp::all_reduce, 8, n)), 2 * 64.0 * 1024 * 1024 / 3.35e12, 1e-12);
  EXPECT_EQ(collective_memory_time(p, Algorithm::ring, CollectiveOp::all_gather, 1, Bytes(1e6)), Duration{});
}

}  // namespace sp::models
