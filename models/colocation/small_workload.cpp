#include "models/colocation/small_workload.hpp"

#include <algorithm>
#include <cmath>

#include "models/compute/compute_model.hpp"

namespace sp::models {

namespace {
// A streaming kernel's block moves about 16 KiB (256 threads x 64 B) and an SM holds about four
// such blocks at once (estimate: occupancy of simple element-wise kernels); a GEMM work unit
// (an output tile) fills one SM.
constexpr double kStreamBytesPerSm = 4 * 16384.0;
// The optimizer (PyTorch foreach; Adam reads weights, gradients and two moments in fp32 and writes
// three back, SGD with momentum moves less): 28 B per parameter for either (estimate), spread
// evenly over SmallWorkload::optimizer_kernels (GradScaler's small kernels among them).
constexpr double kOptimizerBytesPerParameter = 28;
// The caching allocator keeps more than it hands out: 1.1-1.3 of the tensors (estimate).
constexpr double kAllocatorReserve = 1.2;

int width_of(const Kernel& k, const Accelerator& a) {
  const double units = std::max(1, a.compute.parallel_units);
  double w = 1;
  if (k.kind == Kernel::Kind::stream) {
    w = k.blocks > 0 ? k.blocks : std::ceil(k.bytes.value() / std::max(1.0, k.count) / kStreamBytesPerSm);
  } else {
    const double tm = std::min<double>(a.compute.tile_m, std::max(1.0, k.shape.m));
    const double tn = std::min<double>(a.compute.tile_n, std::max(1.0, k.shape.n));
    w = std::ceil(k.shape.m / tm) * std::ceil(k.shape.n / tn) * k.shape.batch;
  }
  return static_cast<int>(std::clamp(w, 1.0, units));
}
}  // namespace

Duration parse_launch_time(const config::ConfigNode& d) {
  const Duration t = d.as_nonnegative_duration();
  if (t > seconds(0.1)) d.fail("must be at most 100 ms a launch");
  return t;
}

SmallWorkload parse_small_workload(const config::ConfigNode& n) {
  n.expect_only({"name", "description", "source", "precision", "parameters", "dataset_samples",
                 "positions_per_sample", "activations_per_sample", "state_bytes_per_parameter", "ops",
                 "optimizer_kernels", "host"});
  SmallWorkload w;
  w.name = n.at("name").as_string();
  if (auto d = n.find("description")) w.description = d->as_string();
  w.source = n.at("source").as_string();
  if (auto p = n.find("precision")) {
    w.precision = p->as_string();
    if (w.precision != "fp16" && w.precision != "bf16") p->fail("unknown precision '" + w.precision + "'", "valid: fp16, bf16");
  }
  w.parameters = n.at("parameters").as_positive_number();
  w.dataset_samples = n.at("dataset_samples").as_positive_number();
  if (auto p = n.find("positions_per_sample")) w.positions_per_sample = p->as_positive_number();
  w.activations_per_sample = n.at("activations_per_sample").as_positive_bytes();
  if (auto s = n.find("state_bytes_per_parameter")) w.state_bytes_per_parameter = s->as_positive_number();
  if (auto k = n.find("optimizer_kernels")) w.optimizer_kernels = k->as_count(10000);
  const config::ConfigNode ops = n.at("ops");
  for (const auto& o : ops.elements()) w.ops.push_back(parse_op(o));
  if (w.ops.empty()) ops.fail("needs at least one op");
  if (auto h = n.find("host")) {
    h->expect_only({"dispatch_per_kernel", "library_launch", "per_step", "cpu_cores"});
    if (auto d = h->find("dispatch_per_kernel")) w.dispatch_per_kernel = parse_launch_time(*d);
    if (auto d = h->find("library_launch")) w.library_launch = parse_launch_time(*d);
    if (auto d = h->find("per_step")) w.host_per_step = d->as_nonnegative_duration();
    if (auto c = h->find("cpu_cores")) w.cpu_cores = c->as_positive_number();
  }
  return w;
}

std::vector<StepKernel> step_kernels(const SmallWorkload& w, const Accelerator& a, double batch, int models) {
  Shard s;
  s.samples = batch;
  s.tokens_per_sample = w.positions_per_sample;
  s.parameters = w.parameters;
  std::vector<StepKernel> out;
  const auto add = [&](Kernel k) {
    // Fusing B copies: a GEMM becomes B independent products in one launch (grouped convolution,
    // batched matmul), a stream kernel moves B times the bytes in the same launches.
    k.shape.batch *= models;
    k.bytes = k.bytes * static_cast<double>(models);
    StepKernel sk;
    sk.alone = kernel_time(k, a);
    sk.width = width_of(k, a);
    if (k.kind == Kernel::Kind::stream) {
      sk.bytes = k.bytes;
      sk.memory_bound = true;
    } else {
      const GemmShape& g = k.shape;
      sk.bytes = Bytes(element_bytes(k.dtype) * g.batch * k.count *
                       (g.m * g.k / g.a_reuse + g.k * g.n / g.b_reuse + g.m * g.n / g.c_reuse));
    }
    // An entry of n kernels runs as n launches each followed by its kernel, not n launches and
    // then all the work: the device idles between small kernels, and other contexts see those gaps.
    const double n = std::max(1.0, std::round(k.count));
    sk.alone = scale(sk.alone, 1 / n);
    sk.bytes = sk.bytes / n;
    sk.launches = k.library_launch ? 0.0 : k.count / n;
    sk.library_host = k.library_launch ? scale(w.library_launch, k.count / n) : Duration::zero();
    for (int i = 0; i < static_cast<int>(n); ++i) out.push_back(sk);
  };
  for (Pass pass : {Pass::forward, Pass::backward}) {
    // Backward runs the ops in reverse.
    for (std::size_t i = 0; i < w.ops.size(); ++i) {
      const Op& op = w.ops[pass == Pass::forward ? i : w.ops.size() - 1 - i];
      for (Kernel k : expand(op, s, pass, w.precision)) {
        if (models > 1 && k.nchw_activation_bytes.value() > 0) {
          // Fused copies make an NCHW convolution grouped, which cuDNN runs only channels-last: it
          // transposes the GEMM's activations (an input and the output, or both inputs of the
          // weight gradient; read and written by tiled transposes) around a channels-last GEMM with vector
          // accesses, launching them inside the op (measured: HFTA's fused PointNet on an H200,
          // h200_pointnet_fused4_kernels.csv: nchwToNhwc and nhwcToNchw kernels, sm90 implicit GEMMs).
          add(nchw_transposes(k.nchw_activation_bytes, k.dtype));
          k.shape.strided = false;
        }
        add(k);
      }
    }
  }
  Kernel opt;
  opt.kind = Kernel::Kind::stream;
  opt.bytes = Bytes(kOptimizerBytesPerParameter * w.parameters);
  opt.count = w.optimizer_kernels;
  const std::size_t first = out.size();
  add(opt);
  // fp16 autocast trains with a GradScaler, whose step reads back whether any gradient overflowed
  // before the optimizer runs (torch/amp/grad_scaler.py, _maybe_opt_step: found_inf .item()).
  if (w.precision == "fp16") out[first].host_waits = true;
  return out;
}

Bytes training_memory(const SmallWorkload& w, double batch, int models) {
  const double m = models;
  return Bytes(kAllocatorReserve * m * (w.state_bytes_per_parameter * w.parameters +
                                       batch * w.activations_per_sample.value()));
}

}  // namespace sp::models
