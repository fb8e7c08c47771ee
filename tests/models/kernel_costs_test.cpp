// The GEMM and streaming kernel costs (models/hardware/kernel_costs.hpp) on a toy accelerator:
// waves of tiles, split-K, bytes, latency, access patterns and the measured-shape correction, each
// against a case worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"
#include "test_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {

using testing::op;

TEST(KernelCosts, LargeGemmRunsInWavesOfTiles) {
  // 4096 x 4096 x 4096: 32 x 32 = 1024 tiles over 100 units = 11 waves (the last one a quarter
  // full). A tile streams 4096 + 64 k steps of 2 x 128 x 128 FLOP at 0.5 x 10 TFLOP/s:
  // 2 x 16384 x 4160 / 5e12 = 27.263 us per wave -> 11 waves 299.89 us + 2 us latency. Its
  // operands, 3 x 32 MiB = 100.7 MB at 0.8 TB/s = 126 us, stream in less. No split: 1024 tiles
  // already fill the units.
  const double wave = 2.0 * 128 * 128 * (4096 + 64) / 5e12;
  EXPECT_NEAR(testing::us(gemm_time(testing::toy_accelerator(), "bf16", GemmShape{4096, 4096, 4096})), 2 + 11 * wave * 1e6, 1e-3);
}

TEST(KernelCosts, ShallowGemmSplitsAlongK) {
  // 512 x 512 x 16384 with memory ten times faster (8 TB/s achieved), so the arithmetic decides:
  // 16 tiles fill 16 of the 100 units. Unsplit: one wave of 2 x 16384 x (16384 + 64) / 5e12 =
  // 107.8 us. Split 16 ways: 256 units in 3 waves of 2 x 16384 x (1024 + 64) / 5e12 = 7.130 us,
  // plus the fp32 partial sums 512 x 512 x 4 B x 16 / 8 TB/s = 2.097 us: 23.487 us, the fastest
  // of the splits (4 ways: 27.787, 8 ways: 28.73).
  Accelerator a = testing::toy_accelerator();
  a.memory_bandwidth = BytesPerSecond(1e13);
  const double split16 = 3 * 2.0 * 16384 * (1024 + 64) / 5e12 + 512.0 * 512 * 4 * 16 / 8e12;
  EXPECT_NEAR(testing::us(gemm_time(a, "bf16", GemmShape{512, 512, 16384})), 2 + split16 * 1e6, 1e-3);
}

TEST(KernelCosts, NarrowGemmIsBoundByItsBytes) {
  // A LoRA down-projection, 8192 x 16 x 8192: 64 tiles of 128 x 16, one wave, 2 x 128 x 16 x
  // 8256 / 5e12 = 6.76 us of arithmetic; but it reads 8192 x 8192 x 2 B of input (134 MB)
  // plus the 16 x 8192 weight and writes 8192 x 16: 134.74 MB at 0.8 TB/s = 168.4 us.
  const double bytes = (8192.0 * 8192 + 8192 * 16) * 2 + 8192.0 * 16 * 2;
  EXPECT_NEAR(testing::us(gemm_time(testing::toy_accelerator(), "bf16", GemmShape{8192, 16, 8192})), 2 + bytes / 0.8e12 * 1e6, 1e-3);
}

TEST(KernelCosts, ABoostedClockSpeedsTheArithmeticNotTheBytes) {
  // The SMs 10 % faster (compute_clock 1.1): the 4096^3 GEMM's 11 waves of arithmetic take
  // 299.89 / 1.1 = 272.63 us, still above its 126 us of operands, + 2 us latency; the LoRA
  // down-projection stays at its 168.4 us of bytes (its arithmetic, 6.76 / 1.1 us, was never the
  // bound), and so does an element-wise kernel: HBM's clock is not the SMs'.
  Accelerator a = testing::toy_accelerator();
  a.compute_clock = 1.1;
  const double wave = 2.0 * 128 * 128 * (4096 + 64) / 5e12;
  EXPECT_NEAR(testing::us(gemm_time(a, "bf16", GemmShape{4096, 4096, 4096})), 2 + 11 * wave * 1e6 / 1.1, 1e-3);
  const double bytes = (8192.0 * 8192 + 8192 * 16) * 2 + 8192.0 * 16 * 2;
  EXPECT_NEAR(testing::us(gemm_time(a, "bf16", GemmShape{8192, 16, 8192})), 2 + bytes / 0.8e12 * 1e6, 1e-3);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 100)), 201.25, 1e-6);
}

TEST(KernelCosts, SmallKernelsCostTheirLatencyNotAFractionOfFlops) {
  // 100 element-wise kernels moving 1 MB in all: 100 x 2 us + 1.25 us. On a chip ten times
  // faster in FLOP/s the latency is the same: small batches do not speed up with peak.
  Accelerator a = testing::toy_accelerator();
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 100)), 201.25, 1e-6);
  a.peak["bf16"] = FlopsPerSecond(1e16);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 100)), 201.25, 1e-6);
}

TEST(KernelCosts, StridedPassesAndTransposesGetAShareOfTheBandwidth) {
  // 1 MB in one kernel at 0.8 TB/s: 2 + 1.25 us vectorised; strided at a quarter of that
  // bandwidth, 2 + 5 us; a transpose at half of it, 2 + 2.5 us.
  Accelerator a = testing::toy_accelerator();
  a.compute.strided_access_fraction = 0.25;
  a.compute.transpose_access_fraction = 0.5;
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1)), 3.25, 1e-9);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1, Access::strided)), 7.0, 1e-9);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1, Access::transpose)), 4.5, 1e-9);
  // cuDNN's transposes around a channels-last convolution: 0.25 MB of activations read and written
  // (0.5 MB) in two launches, 2 x 2 + 0.5 MB / 0.4 TB/s = 5.25 us
  EXPECT_NEAR(testing::us(kernel_time(nchw_transposes(Bytes(0.25e6), "fp16"), a)), 5.25, 1e-9);
  Op ew = op(OpKind::elementwise, "bias_norm");
  ew.strided = true;
  ew.forward_bytes_per_sample = Bytes(1e6);
  ew.forward_kernels = 1;
  const std::vector<Kernel> k = expand(ew, Shard{}, Pass::forward, "fp16");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_NEAR(testing::us(kernel_time(k[0], a)), 7.0, 1e-9);
}

TEST(KernelCosts, AKernelOfFewerBlocksThanSmsReachesThatShareOfTheBandwidth) {
  // The toy's 100 units: 1 MB in one kernel of 50 blocks (a per-channel pass over 50 channels)
  // gets half of 0.8 TB/s: 2 + 2.5 us; 100 or more blocks, or 0 (plenty), the whole: 2 + 1.25 us.
  Accelerator a = testing::toy_accelerator();
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1, Access::vector, 50)), 4.5, 1e-9);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1, Access::vector, 100)), 3.25, 1e-9);
  EXPECT_NEAR(testing::us(stream_time(a, Bytes(1e6), 1, Access::vector, 0)), 3.25, 1e-9);
  // `blocks: {forward: 0, backward: 50}` on an op: its backward kernel is the narrow one.
  const Op o = parse_op(config::load_string(
      "{elementwise: bias, per_sample: {forward: \"1 MB\", backward: \"1 MB\"}, kernels: {forward: 1, backward: 1}, "
      "blocks: {forward: 0, backward: 50}}",
      "op.yaml"));
  EXPECT_NEAR(testing::us(kernel_time(expand(o, Shard{}, Pass::forward, "fp16").at(0), a)), 3.25, 1e-9);
  EXPECT_NEAR(testing::us(kernel_time(expand(o, Shard{}, Pass::backward, "fp16").at(0), a)), 4.5, 1e-9);
}

TEST(KernelCosts, MeasuredShapesCorrectTheTrendNearThemOnly) {
  // A measurement twice the trend at 1024^3: there the model gives 2 / (1 + 0.05) of the way in
  // log space; at 8192^3 (3 octaves away in every dimension) the weight exp(-27/0.5) vanishes.
  Accelerator a = testing::toy_accelerator();
  const Duration trend = gemm_time_modelled(a, "bf16", GemmShape{1024, 1024, 1024});
  a.compute.measured["bf16"] = {MeasuredGemm{1024, 1024, 1024, trend * 2}};
  refresh_measured_ratios(a);
  EXPECT_NEAR(to_seconds(gemm_time(a, "bf16", GemmShape{1024, 1024, 1024})) / to_seconds(trend),
              std::exp(std::log(2.0) / 1.05), 1e-6);  // picosecond rounding
  const GemmShape far{8192, 8192, 8192};
  EXPECT_NEAR(to_seconds(gemm_time(a, "bf16", far)) / to_seconds(gemm_time_modelled(a, "bf16", far)), 1, 1e-9);
}

TEST(KernelCosts, AnotherPartOfTheSameDieKeepsTheRatiosAtItsOwnBandwidth) {
  // A streaming GEMM, 2^20 x 16 x 16 in bf16: 67,109,376 B at 0.8 TB/s on the toy's 1 TB/s part,
  // 83.887 + 2 = 85.887 us by the trend (its tiles take 5.4 us), measured at twice that. A part of
  // the same die with 2 TB/s (H200 against H100) that includes the table, measured_bandwidth 1 TB/s,
  // runs its own trend (41.943 + 2 = 43.943 us) times the same correction, 2^(1/1.05) as in the
  // test above: the ratio is the die's kernels', the bandwidth the part's.
  Accelerator part = testing::toy_accelerator();
  const GemmShape s{1 << 20, 16, 16};
  const Duration measured = gemm_time_modelled(part, "bf16", s) * 2;
  EXPECT_NEAR(testing::us(measured), 2 * 85.887, 1e-2);
  part.memory_bandwidth = BytesPerSecond(2e12);
  EXPECT_NEAR(testing::us(gemm_time_modelled(part, "bf16", s)), 43.943, 1e-2);
  part.compute.measured["bf16"] = {MeasuredGemm{s.m, s.n, s.k, measured}};
  part.compute.measured_bandwidth = BytesPerSecond(1e12);
  refresh_measured_ratios(part);
  EXPECT_NEAR(testing::us(gemm_time(part, "bf16", s)), 43.943 * std::exp(std::log(2.0) / 1.05), 1e-2);
  // Taken at the part's own bandwidth, the same table would carry the slower memory along:
  // (171.774 / 43.943)^(1/1.05).
  part.compute.measured_bandwidth = BytesPerSecond(0);
  refresh_measured_ratios(part);
  EXPECT_NEAR(testing::us(gemm_time(part, "bf16", s)), 43.943 * std::exp(std::log(171.774 / 43.943) / 1.05), 1e-1);
}

TEST(KernelCosts, TheMeasuredPartsBandwidthIsReadWithItsTable) {
  const auto parsed = [](const std::string& compute) {
    return parse_accelerator(config::load_string(
        "{name: X, vendor: V, family: f, software_stack: s, peak: {bf16: \"1 PFLOP/s\"},"
        " memory: {capacity: \"80 GB\", bandwidth: \"2 TB/s\"},"
        " scale_up: {topology: switch, link: l, bandwidth: \"100 GB/s\"}, typical_node: {accelerators: 8, nics: 0},"
        " compute: {source: \"estimate: test\", parallel_units: 100, gemm_tile: [128, 128], kernel_latency: \"2 us\","
        " memory_efficiency: 0.8, gemm: {bf16: {efficiency_max: 0.5, k_overhead: 64}}" + compute + "}}",
        "x.yaml"));
  };
  const Accelerator a = parsed(", measured: {bf16: [[1024, 1024, 1024, \"10 us\"]]}, measured_memory_bandwidth: \"1 TB/s\"");
  EXPECT_DOUBLE_EQ(a.compute.measured_bandwidth.value(), 1e12);
  EXPECT_DOUBLE_EQ(parsed("").compute.measured_bandwidth.value(), 0);  // the part's own
  EXPECT_EQ(input_error_message([&] { parsed(", measured_memory_bandwidth: \"1 TB/s\""); }),
            "x.yaml:1:441: compute.measured_memory_bandwidth: says what the measured table was timed on, and there "
            "is no measured table");
}

}  // namespace sp::models

namespace sp::models {

TEST(KernelCosts, TheMultiFunctionUnitsRateIsReadAndBounded) {
  // `special_functions`: exponentials a second. Optional (0: not charged); a value below one unit
  // at 1 GHz (1e9 a second) is a unit typed wrong, refused at its key.
  const auto parsed = [](const std::string& extra) {
    return parse_accelerator(config::load_string(
        "{name: X, vendor: V, family: f, software_stack: s, peak: {bf16: \"1 PFLOP/s\"}," + extra +
            " memory: {capacity: \"80 GB\", bandwidth: \"2 TB/s\"},"
            " scale_up: {topology: switch, link: l, bandwidth: \"100 GB/s\"}, typical_node: {accelerators: 8, nics: 0},"
            " compute: {source: \"estimate: test\", parallel_units: 100, gemm_tile: [128, 128], kernel_latency: \"2 us\","
            " memory_efficiency: 0.8, gemm: {bf16: {efficiency_max: 0.5, k_overhead: 64}}}}",
        "x.yaml"));
  };
  EXPECT_DOUBLE_EQ(parsed("").special_function_rate.value(), 0);
  EXPECT_DOUBLE_EQ(parsed(" special_functions: \"3.87 TFLOP/s\",").special_function_rate.value(), 3.87e12);
  const std::string slow = input_error_message([&] { parsed(" special_functions: \"3.87 MFLOP/s\","); });
  EXPECT_NE(slow.find("x.yaml:1:"), std::string::npos) << slow;
  EXPECT_NE(slow.find("special_functions: below 1 GFLOP/s"), std::string::npos) << slow;
  EXPECT_NE(input_error_message([&] { parsed(" special_functions: \"-1 TFLOP/s\","); }), "(no error)");
}

}  // namespace sp::models
