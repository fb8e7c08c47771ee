#include <gtest/gtest.h>

#include "models/training/buckets.hpp"
#include "models/training/step_model.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

// Per sample each layer takes 1 ms forward and 2 ms backward on the test accelerator, so with
// batch 1: forward 2 ms, backward 4 ms (second layer's backward first).

TEST(StepModel, TinyGradientsHideBehindBackward) {
  // Only the second layer (backward first) has gradients: 1 parameter = 2 bytes, ready after
  // 2 ms of backward; its all-reduce (14 us + tiny) ends long before backward does at 4 ms.
  const Workload w = testing::two_layer_workload(0, 1);
  const StepResult r = simulate_step(w, testing::simple_platform(), 8, 1.0);
  EXPECT_EQ(r.forward.ps(), milliseconds(2).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(4).ps());
  EXPECT_EQ(r.exposed_communication.ps(), 0);
  EXPECT_EQ(r.step.ps(), milliseconds(6).ps());
  EXPECT_GT(r.communication.ps(), microseconds(14).ps());
  EXPECT_EQ(r.buckets, 1);
}

TEST(StepModel, LargeGradientsAreExposedAsTheClosedFormSays) {
  // Each layer has 0.5e9 parameters = 1 GB of fp16 gradients, one bucket each (cap 1 GB).
  // All-reduce of 1 GB on 8 ranks: c = 14 us + 1.75 * 10 ms = 17.514 ms.
  // Bucket 1 (second layer) ready at 2 ms of backward -> comm 2 .. 19.514 ms.
  // Bucket 2 (first layer) ready at 4 ms -> waits -> comm 19.514 .. 37.028 ms.
  // Step = forward 2 ms + 37.028 ms = 39.028 ms; exposed = 39.028 - 2 - 4 = 33.028 ms.
  Workload w = testing::two_layer_workload(500'000'000, 500'000'000);
  w.gradient_bucket = Bytes(1e9);
  const StepResult r = simulate_step(w, testing::simple_platform(), 8, 1.0);
  const Duration c = seconds(14e-6 + 1.75 * 1e9 / 100e9);
  EXPECT_EQ(r.buckets, 2);
  EXPECT_EQ(r.communication.ps(), (c * 2).ps());
  EXPECT_EQ(r.step.ps(), (milliseconds(4) + c * 2).ps());
  EXPECT_EQ(r.exposed_communication.ps(), (r.step - milliseconds(6)).ps());
}

TEST(StepModel, OptimizerRunsAfterBackwardAndCommunication) {
  // 1000 trainable parameters x 1e6 B of traffic each = 1 GB at 1 TB/s = 1 ms of optimizer.
  Workload w = testing::two_layer_workload(0, 1000);
  w.optimizer_traffic_per_parameter = Bytes(1e6);
  const StepResult r = simulate_step(w, testing::simple_platform(), 8, 1.0);
  EXPECT_EQ(r.optimizer.ps(), milliseconds(1).ps());
  EXPECT_EQ(r.step.ps(), milliseconds(7).ps());
}

TEST(StepModel, ComputeScalesWithBatchAndEfficiency) {
  // Batch 4 at efficiency_max 0.5 and half_efficiency_batch 4: efficiency 0.25, so each
  // sample-millisecond becomes 4 ms: forward 4 x 2 ms / 0.25 = 32 ms.
  Workload w = testing::two_layer_workload(0, 1);
  w.efficiency_max = 0.5;
  w.half_efficiency_batch = 4;
  const StepResult r = simulate_step(w, testing::simple_platform(), 8, 4.0);
  EXPECT_EQ(r.forward.ps(), milliseconds(32).ps());
  EXPECT_EQ(r.backward.ps(), milliseconds(64).ps());
}

TEST(Buckets, SplitInsideLargeLayersAtTheCap) {
  // Backward order: "second" (2 ms, 300 B) then "first" (2 ms, 100 B); cap 150 B.
  // Bytes are produced uniformly: 150 B at 1 ms, 300 B at 2 ms, the last 100 B at 4 ms.
  std::vector<LayerGroup> layers = {LayerGroup{"first", 1, 50, 50, Flops(0), Flops(0)},
                                    LayerGroup{"second", 1, 150, 150, Flops(0), Flops(0)}};
  const auto b = make_buckets(layers, {milliseconds(2), milliseconds(2)}, Bytes(2), Bytes(150));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_DOUBLE_EQ(b[0].bytes.value(), 150);
  EXPECT_EQ(b[0].ready.ps(), milliseconds(1).ps());
  EXPECT_EQ(b[1].ready.ps(), milliseconds(2).ps());
  EXPECT_DOUBLE_EQ(b[2].bytes.value(), 100);
  EXPECT_EQ(b[2].ready.ps(), milliseconds(4).ps());
}

TEST(Buckets, SmallLayersShareABucket) {
  // Three repeats of 10 B each (1 ms backward) in a 25 B bucket: the first bucket closes when
  // the third layer has produced half of its bytes (2.5 ms); 5 B remain for the end (3 ms).
  std::vector<LayerGroup> layers = {LayerGroup{"block", 3, 5, 5, Flops(0), Flops(0)}};
  const auto b = make_buckets(layers, {milliseconds(1)}, Bytes(2), Bytes(25));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].ready.ps(), seconds(2.5e-3).ps());
  EXPECT_DOUBLE_EQ(b[1].bytes.value(), 5);
  EXPECT_EQ(b[1].ready.ps(), milliseconds(3).ps());
}

TEST(Buckets, FrozenLayersProduceNothing) {
  std::vector<LayerGroup> layers = {LayerGroup{"trainable", 1, 10, 10, Flops(0), Flops(0)},
                                    LayerGroup{"frozen", 1, 1000, 0, Flops(0), Flops(0)}};
  const auto b = make_buckets(layers, {milliseconds(1), milliseconds(5)}, Bytes(2), Bytes(1e6));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_DOUBLE_EQ(b[0].bytes.value(), 20);
  EXPECT_EQ(b[0].ready.ps(), milliseconds(6).ps());  // frozen layer's backward runs first
}

}  // namespace sp::models
