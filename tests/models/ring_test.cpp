#include <gtest/gtest.h>

#include "models/collective/ring.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

TEST(RingAllReduce, SingleNodeMatchesTheClosedForm) {
  // t = 2(p-1) alpha + 2(p-1)/p * n / B with p = 8, alpha = 1 us, n = 1 GB, B = 100 GB/s:
  //   14 us + 1.75 * 10 ms = 17.514 ms
  const Platform p = testing::simple_platform();
  EXPECT_EQ(ring_all_reduce_time(p, 8, Bytes(1e9)).ps(), seconds(14e-6 + 1.75 * 1e9 / 100e9).ps());
  const RingCostTerms t = ring_all_reduce_terms(p, 8);
  EXPECT_EQ(t.intra_steps, 14);
  EXPECT_EQ(t.inter_steps, 0);
  EXPECT_DOUBLE_EQ(t.bytes_factor, 1.75);
  EXPECT_DOUBLE_EQ(t.bus_bandwidth.value(), 100e9);
}

TEST(RingAllReduce, PartialNodeUsesOnlyTheScaleUpLink) {
  // p = 2: 2 steps, 2(1)/2 = 1 byte per byte: 2 us + 1e9 / 100e9 s.
  const Platform p = testing::simple_platform();
  EXPECT_EQ(ring_all_reduce_time(p, 2, Bytes(1e9)).ps(), seconds(2e-6 + 0.01).ps());
}

TEST(RingAllReduce, AcrossNodesTheNicsAreTheBottleneck) {
  // p = 32 on 4 nodes: 62 steps, 2(nodes-1) = 6 of them cross nodes (10 us), 56 stay inside
  // (1 us). Bus bandwidth = min(100 GB/s, 4 NICs x 10 GB/s) = 40 GB/s.
  //   t = 56 us + 60 us + 2 * 31/32 * 1 GB / 40 GB/s = 116 us + 48.4375 ms
  const Platform p = testing::simple_platform();
  const RingCostTerms t = ring_all_reduce_terms(p, 32);
  EXPECT_EQ(t.intra_steps, 56);
  EXPECT_EQ(t.inter_steps, 6);
  EXPECT_DOUBLE_EQ(t.bus_bandwidth.value(), 40e9);
  EXPECT_EQ(ring_all_reduce_time(p, 32, Bytes(1e9)).ps(), seconds(116e-6 + 2.0 * 31 / 32 * 1e9 / 40e9).ps());
}

TEST(RingAllReduce, EfficiencyScalesTheLineRate) {
  Platform p = testing::simple_platform();
  p.scale_up.efficiency = 0.5;  // 50 GB/s effective
  EXPECT_EQ(ring_all_reduce_time(p, 8, Bytes(1e9)).ps(), seconds(14e-6 + 1.75 * 1e9 / 50e9).ps());
}

TEST(RingAllReduce, OneRankCostsNothing) {
  EXPECT_EQ(ring_all_reduce_time(testing::simple_platform(), 1, Bytes(1e9)).ps(), 0);
}

TEST(RingAllReduce, SpanningNodesWithoutNicsIsAModelError) {
  Platform p = testing::simple_platform();
  p.nics_per_node = 0;
  EXPECT_THROW(ring_all_reduce_terms(p, 16), ModelError);
}

}  // namespace sp::models
