// Small hand-made platforms and workloads for model tests, with round numbers so that expected
// values can be computed by hand in the test.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "models/catalog.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/loader.hpp"

namespace sp::models::testing {

/// 100 units of 128 x 128 tiles at 1 PFLOP/s (10 TFLOP/s per unit), efficiency 0.5, 64 k steps
/// of overhead per tile, 2 us per kernel, 1 TB/s of which 80 % is achieved: the kernel-cost tests'.
inline Accelerator toy_accelerator() {
  Accelerator a;
  a.name = "toy";
  a.peak["bf16"] = FlopsPerSecond(1e15);
  a.memory_bandwidth = BytesPerSecond(1e12);
  a.compute.parallel_units = 100;
  a.compute.tile_m = a.compute.tile_n = 128;
  a.compute.kernel_latency = microseconds(2);
  a.compute.memory_efficiency = 0.8;
  a.compute.gemm["bf16"] = GemmRate{0.5, 64};
  return a;
}

/// An op of `kind` named `name`, its costs to be set by the test.
inline Op op(OpKind kind, const char* name) {
  Op o;
  o.kind = kind;
  o.name = name;
  return o;
}

/// A duration in microseconds, for expectations written in them.
inline double us(Duration d) { return to_seconds(d) * 1e6; }

/// 8 accelerators per node at 1 PFLOP/s (fp16), 1 TB/s memory; an 8-way switch at 100 GB/s per
/// accelerator; 4 NICs of 10 GB/s per node (5 GB/s per accelerator); every efficiency 1. Its
/// kernels cost exactly FLOPs / peak: one work unit of a 1 x 1 tile (no wave or tile waste), no
/// k overhead, no kernel latency. One protocol, Simple, with no launch cost, 1 us per step inside
/// a node and 10 us across nodes; the library runs rings only.
inline Platform simple_platform() {
  Platform p;
  p.name = "test";
  p.accelerator.name = "TestGPU";
  p.accelerator.peak["fp16"] = FlopsPerSecond(1e15);
  p.accelerator.memory_bandwidth = BytesPerSecond(1e12);
  KernelCosts& k = p.accelerator.compute;
  k.source = "estimate: test";
  k.parallel_units = 1;
  k.tile_m = k.tile_n = 1;
  k.kernel_latency = Duration::zero();
  k.memory_efficiency = 1.0;
  k.gemm["fp16"] = GemmRate{1.0, 0.0};
  p.topology.accelerators_per_node = 8;
  Tier up;
  up.name = "scale_up";
  up.kind = TierKind::switch_;
  up.size = 8;
  up.bandwidth = BytesPerSecond(100e9);
  Tier out;
  out.name = "scale_out";
  out.kind = TierKind::fat_tree;
  out.size = 0;
  out.bandwidth = BytesPerSecond(4 * 10e9 / 8);
  p.topology.tiers = {up, out};
  ProtocolCosts& simple = p.protocols[static_cast<int>(Protocol::simple)];
  simple.available = true;
  simple.bandwidth_factor = 1.0;
  simple.step = {microseconds(1), microseconds(10)};
  p.library_algorithms = {Algorithm::ring};
  p.gpu_speed_spread = 0;  // every rank alike: tests add stragglers where they check them
  return p;
}

/// A shipped platform from scenarios/platforms, by file stem.
inline Platform shipped_platform(const std::string& stem) {
  const Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return parse_platform(
      config::load_file(std::string(SP_SOURCE_DIR) + "/scenarios/platforms/" + stem + ".yaml"), c);
}

/// A layer group with only the fields the step model needs by hand (no activations, no TP).
inline LayerGroup layer(std::string name, int repeat, std::int64_t params, std::int64_t trainable, Flops forward,
                        Flops backward) {
  LayerGroup l;
  l.name = std::move(name);
  l.repeat = repeat;
  l.parameters = params;
  l.trainable_parameters = trainable;
  l.forward = forward;
  l.backward = backward;
  return l;
}

/// One GEMM of 1 TFLOP per sample: 5000 rows per sample, n = k = 10,000 (2 x 5000 x 1e8 = 1e12),
/// whose operands (0.4 GB per sample) stream in less time than its arithmetic at 1 TB/s.
inline Op teraflop_gemm() {
  Op op;
  op.kind = OpKind::gemm;
  op.name = "teraflop";
  op.n = op.k = 10'000;
  return op;
}

/// Two layers of one teraflop GEMM each: per sample 1 ms forward at 1 PFLOP/s; backward 1 ms for
/// the input gradient, and 1 ms more for the weight gradient when the layer trains. No optimizer
/// traffic.
inline Workload two_layer_workload(std::int64_t trainable_first, std::int64_t trainable_second) {
  Workload w;
  w.name = "two_layer";
  w.precision = "fp16";
  w.tokens_per_sample = 5000;
  w.gradient_bytes_per_parameter = Bytes(2);
  w.gradient_bucket = Bytes(1e12);
  w.optimizer_traffic_per_parameter = Bytes(0);
  w.layers = {layer("first", 1, trainable_first, trainable_first, Flops(1e12), Flops(trainable_first ? 2e12 : 1e12)),
              layer("second", 1, trainable_second, trainable_second, Flops(1e12), Flops(trainable_second ? 2e12 : 1e12))};
  for (LayerGroup& l : w.layers) l.ops = {teraflop_gemm()};
  w.train_samples = 1000;
  w.memory.weight_bytes_per_parameter = Bytes(2);
  w.memory.optimizer_bytes_per_trainable_parameter = Bytes(12);
  w.runs_per_result = 10;
  return w;
}

/// Eight identical trained layers, 1 ms forward and 2 ms backward a sample (one teraflop GEMM at
/// 1 PFLOP/s: input and weight gradients), each handing one byte to the next pipeline stage.
inline Workload eight_layer_workload() {
  Workload w = two_layer_workload(1, 1);
  w.layers = {layer("block", 8, 1, 1, Flops(1e12), Flops(2e12))};
  w.layers[0].ops = {teraflop_gemm()};
  w.layers[0].pipeline_boundary = Bytes(1);
  return w;
}

/// two_layer_workload(0, 1) with a timed evaluation of `samples` every `interval` samples and no
/// overheads (tests add what they check).
inline Workload evaluated_workload(std::int64_t samples, double interval) {
  Workload w = two_layer_workload(0, 1);
  w.evaluation.timed = true;
  w.evaluation.samples = samples;
  w.evaluation.interval_samples = interval;
  return w;
}

/// The layout of `spec` for N ranks and a global batch (fails the test when there is none).
inline ParallelLayout layout(const Platform& p, int n, std::int64_t gbs, ParallelSpec spec = {}) {
  std::string why;
  const auto l = resolve_layout(spec, p.topology, n, gbs, why);
  if (!l) throw std::invalid_argument(why);
  return *l;
}

/// A workload shipped in models/workloads, by name.
inline Workload shipped_workload(const std::string& name) {
  const Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return c.workload(config::load_string("w: " + name + "\n", "w.yaml").at("w"));
}

}  // namespace sp::models::testing
