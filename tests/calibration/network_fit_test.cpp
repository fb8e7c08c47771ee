// Piecewise alpha-beta fits: recovery from synthetic data, regime changes, failure on
// unphysical data, and a platform carrying measured segments reproducing them by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/network/alpha_beta_fit.hpp"
#include "models/collective/collective.hpp"

namespace sp::calibration {

namespace {
using models::CollectiveOp;

// Ring all-reduce over p ranks: 2(p-1) steps of alpha, 2(p-1)/p x n / beta.
double ring_all_reduce(int p, double n, double alpha, double beta) {
  return 2.0 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / beta;
}

std::vector<FitPoint> synthetic(const std::vector<int>& ranks, double lo, double hi,
                                double (*t)(int, double)) {
  std::vector<FitPoint> pts;
  for (int p : ranks) {
    for (double n = lo; n <= hi; n *= 2) pts.push_back({CollectiveOp::all_reduce, false, p, n, t(p, n)});
  }
  return pts;
}
}  // namespace

TEST(AlphaBeta, CoefficientsAreTheModelsRingTerms) {
  // all-reduce over 4: 2(p-1) = 6 steps, 2(p-1)/p = 1.5 bytes per byte; all-gather (p-1), (p-1)/p.
  auto c = alpha_beta_coefficients({CollectiveOp::all_reduce, false, 4, 0, 1});
  EXPECT_NEAR(c.first, 6.0, 1e-9);
  EXPECT_NEAR(c.second, 1.5, 1e-9);
  c = alpha_beta_coefficients({CollectiveOp::all_gather, false, 4, 0, 1});
  EXPECT_NEAR(c.first, 3.0, 1e-9);
  EXPECT_NEAR(c.second, 0.75, 1e-9);
  c = alpha_beta_coefficients({CollectiveOp::all_reduce, true, 2, 0, 1});  // ping-pong
  EXPECT_EQ(c, std::make_pair(1.0, 1.0));
}

TEST(AlphaBeta, RecoversOneLineFromSyntheticDataWithNoise) {
  // alpha 2 us, beta 5 GB/s, 2 and 4 ranks, 8 B .. 64 MiB, +-1 % deterministic noise.
  auto pts = synthetic({2, 4}, 8, 64.0 * 1024 * 1024, [](int p, double n) { return ring_all_reduce(p, n, 2e-6, 5e9); });
  for (std::size_t i = 0; i < pts.size(); ++i) pts[i].time_s *= 1 + 0.01 * std::sin(static_cast<double>(i) * 1.7);
  AlphaBetaOptions one;
  one.segments = 1;
  const AlphaBetaFit f = fit_alpha_beta(pts, one);
  ASSERT_TRUE(f.ok) << f.message;
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_NEAR(f.segments[0].alpha_s / 2e-6, 1, 0.02);
  EXPECT_NEAR(f.segments[0].beta_bytes_per_s / 5e9, 1, 0.02);
  EXPECT_LT(f.max_abs_relative_error, 0.02);
  EXPECT_GT(f.r_squared, 0.99);
  // Chosen freely, the criterion keeps one segment: more would only fit the noise.
  EXPECT_EQ(fit_alpha_beta(pts).segments.size(), 1u);
}

TEST(AlphaBeta, FindsTheRegimesAndOneLineMissesThem) {
  // In cache up to 64 KiB (alpha 1 us, 10 GB/s), a protocol switch (alpha 20 us, 8 GB/s) up to
  // 4 MiB, out of cache beyond (alpha 20 us, 2 GB/s): three segments with their parameters.
  const auto t = [](int p, double n) {
    if (n <= 64 * 1024) return ring_all_reduce(p, n, 1e-6, 10e9);
    if (n <= 4 * 1024 * 1024) return ring_all_reduce(p, n, 20e-6, 8e9);
    return ring_all_reduce(p, n, 20e-6, 2e9);
  };
  const auto pts = synthetic({2, 4}, 8, 1024.0 * 1024 * 1024, t);
  const AlphaBetaFit f = fit_alpha_beta(pts);
  ASSERT_TRUE(f.ok) << f.message;
  ASSERT_EQ(f.segments.size(), 3u);
  EXPECT_DOUBLE_EQ(f.segments[1].from_bytes, 128 * 1024);
  EXPECT_DOUBLE_EQ(f.segments[2].from_bytes, 8 * 1024 * 1024);
  EXPECT_NEAR(f.segments[0].alpha_s, 1e-6, 1e-9);
  EXPECT_NEAR(f.segments[1].beta_bytes_per_s / 8e9, 1, 1e-6);
  EXPECT_NEAR(f.segments[2].beta_bytes_per_s / 2e9, 1, 1e-6);
  EXPECT_LT(f.max_abs_relative_error, 1e-6);
  AlphaBetaOptions one;
  one.segments = 1;
  EXPECT_GT(fit_alpha_beta(pts, one).max_abs_relative_error, 0.6);
}

TEST(AlphaBeta, UnphysicalDataIsAFailedFitNotAClampedOne) {
  // Times that fall as messages grow need a negative beta: no split is physical.
  std::vector<FitPoint> pts;
  for (double n = 1024; n <= 1024 * 1024; n *= 2) pts.push_back({CollectiveOp::all_reduce, false, 2, n, 1e-3 / std::log2(n)});
  AlphaBetaOptions one;
  one.segments = 1;
  const AlphaBetaFit f = fit_alpha_beta(pts, one);
  EXPECT_FALSE(f.ok);
  EXPECT_NE(f.message.find("positive alpha and beta"), std::string::npos) << f.message;
  EXPECT_FALSE(fit_alpha_beta({{CollectiveOp::all_reduce, false, 2, 8, -1}}).ok);
}

TEST(AlphaBeta, APlatformWithMeasuredSegmentsReproducesThem) {
  // One node of 4, segments: below 1 MiB alpha 2 us and 5 GB/s, from 1 MiB on 10 us and 3 GB/s.
  models::Platform p;
  p.name = "measured";
  p.topology.accelerators_per_node = 4;
  models::Tier up;
  up.name = "scale_up";
  up.size = 4;
  up.bandwidth = BytesPerSecond(1e9);
  up.measured = {{Bytes(0), microseconds(2), BytesPerSecond(5e9)},
                 {Bytes(1024.0 * 1024), microseconds(10), BytesPerSecond(3e9)}};
  models::Tier out;
  out.name = "scale_out";
  out.kind = models::TierKind::fat_tree;
  out.bandwidth = BytesPerSecond(1e9);
  p.topology.tiers = {up, out};
  auto& simple = p.protocols[static_cast<int>(models::Protocol::simple)];
  simple.available = true;
  simple.launch = microseconds(50);  // replaced: the measurement holds the launch
  simple.step = {microseconds(100), microseconds(100)};
  p.library_algorithms = {models::Algorithm::tree};  // replaced by the ring the fit assumed
  const models::Group four{{4, 1}};
  // 64 KiB: 6 x 2 us + 1.5 x 65536 / 5e9 s = 12 + 19.6608 = 31.6608 us.
  EXPECT_NEAR(to_seconds(models::select_collective(p, four, CollectiveOp::all_reduce, Bytes(65536)).time) * 1e6,
              31.6608, 1e-6);
  // 4 MiB: 6 x 10 us + 1.5 x 4194304 / 3e9 s = 60 + 2097.152 = 2157.152 us.
  EXPECT_NEAR(to_seconds(models::select_collective(p, four, CollectiveOp::all_reduce, Bytes(4194304)).time) * 1e6,
              2157.152, 1e-6);
}

}  // namespace sp::calibration
