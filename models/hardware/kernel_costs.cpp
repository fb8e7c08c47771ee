#include "models/hardware/kernel_costs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/hardware/accelerator.hpp"

namespace sp::models {

namespace {

double pow2_at_least(double x) { return std::exp2(std::ceil(std::log2(std::max(1.0, x)))); }

// Split-K factors a library tries; a split keeps at least this many k steps per part.
constexpr int kSplits[] = {1, 2, 4, 8, 16};
constexpr double kMinSplitDepth = 128;

// Width of the neighbourhood of a measured shape, in log2 units per dimension (a factor 1.41), and
// the weight of "no correction" against it, so that the correction fades away from measurements.
constexpr double kNeighbourhood = 0.5;
constexpr double kPriorWeight = 0.05;

// fp16 and bf16 run on the same tensor cores at the same rate: each stands in for the other's
// fitted rate and measured table; any dtype falls back to bf16's.
template <class Map>
const typename Map::mapped_type* for_dtype(const Map& m, const std::string& dt) {
  for (const std::string& d : {dt, std::string(dt == "bf16" ? "fp16" : "bf16")}) {
    if (auto it = m.find(d); it != m.end()) return &it->second;
  }
  return nullptr;
}

double trend_seconds(const Accelerator& a, const std::string& dt, const GemmShape& s) {
  const KernelCosts& c = a.compute;
  const GemmRate* found = for_dtype(c.gemm, dt);
  const GemmRate rate = found ? *found : GemmRate{};
  // The tile's arithmetic runs at the SM clock (a boosted one included); its bytes at HBM's.
  const double peak = a.peak.at(dt).value() * a.compute_clock;
  // Narrow GEMMs get narrow tiles (tensor-core instructions come in widths of 8 to 256).
  const double tm = std::min<double>(c.tile_m, std::max(64.0, pow2_at_least(s.m)));
  const double tn = std::min<double>(c.tile_n, std::max(16.0, pow2_at_least(s.n)));
  const double per_unit_rate = peak * rate.efficiency_max / c.parallel_units;
  const double bytes =
      s.batch * ((s.m * s.k / s.a_reuse + s.k * s.n / s.b_reuse) * element_bytes(dt) + s.m * s.n * 2.0 / s.c_reuse);
  const double bandwidth =
      a.memory_bandwidth.value() * c.memory_efficiency * access_fraction(c, s.strided ? Access::strided : Access::vector);
  double best = std::numeric_limits<double>::infinity();
  for (int split : kSplits) {
    if (split > 1 && s.k / split < kMinSplitDepth) break;
    const double units = std::ceil(s.m / tm) * std::ceil(s.n / tn) * split * s.batch;
    const double waves = std::ceil(units / c.parallel_units);
    double t = waves * 2 * tm * tn * (s.k / split + rate.k_overhead) / per_unit_rate;
    if (split > 1) t += s.batch * s.m * s.n * 4.0 * split / bandwidth;  // fp32 partial sums, reduced
    best = std::min(best, t);
  }
  return to_seconds(c.kernel_latency) + std::max(best, bytes / bandwidth);
}

double correction_log(const KernelCosts& c, const std::string& dt, const GemmShape& s) {
  const std::vector<MeasuredGemm>* rows = for_dtype(c.measured, dt);
  if (rows == nullptr || s.batch != 1 || s.strided) return 0;  // measured shapes: single aligned products
  if (dt == "fp8" && c.measured.count("fp8") == 0) return 0;  // a 16-bit table says nothing of fp8
  double weighted = 0, weights = kPriorWeight;
  for (const MeasuredGemm& g : *rows) {
    const double dm = std::log2(s.m / g.m), dn = std::log2(s.n / g.n), dk = std::log2(s.k / g.k);
    const double w = std::exp(-(dm * dm + dn * dn + dk * dk) / (2 * kNeighbourhood * kNeighbourhood));
    weighted += w * g.log_ratio;
    weights += w;
  }
  return weighted / weights;
}

}  // namespace

double element_bytes(const std::string& dtype) { return dtype == "fp8" ? 1.0 : dtype == "fp32" ? 4.0 : 2.0; }

std::string gemm_dtype(const Accelerator& a, const std::string& dtype) {
  const std::vector<std::string> order = dtype == "fp8"    ? std::vector<std::string>{"fp8", "bf16", "fp16"}
                                         : dtype == "bf16" ? std::vector<std::string>{"bf16", "fp16"}
                                                           : std::vector<std::string>{dtype, "bf16"};
  for (const std::string& d : order) {
    if (a.peak.count(d) != 0) return d;
  }
  return {};
}

Duration gemm_time_modelled(const Accelerator& a, const std::string& dtype, const GemmShape& s) {
  return seconds(trend_seconds(a, gemm_dtype(a, dtype), s));
}

Duration gemm_time(const Accelerator& a, const std::string& dtype, const GemmShape& s) {
  const std::string dt = gemm_dtype(a, dtype);
  return seconds(trend_seconds(a, dt, s) * std::exp(correction_log(a.compute, dt, s)));
}

double access_fraction(const KernelCosts& c, Access access) {
  switch (access) {
    case Access::vector: return 1.0;
    case Access::strided: return c.strided_access_fraction;
    case Access::transpose: return c.transpose_access_fraction;
  }
  return 1.0;
}

Duration stream_time(const Accelerator& a, Bytes bytes, double kernels, Access access, double blocks) {
  const double units = std::max(1, a.compute.parallel_units);
  const double share = blocks > 0 ? std::min(1.0, blocks / units) : 1.0;
  const BytesPerSecond achievable =
      a.memory_bandwidth * (a.compute.memory_efficiency * access_fraction(a.compute, access) * share);
  return scale(a.compute.kernel_latency, kernels) + bytes / achievable;
}

void refresh_measured_ratios(Accelerator& a) {
  Accelerator timed_on = a;
  if (a.compute.measured_bandwidth.value() > 0) timed_on.memory_bandwidth = a.compute.measured_bandwidth;
  for (auto& [dtype, rows] : a.compute.measured) {
    for (MeasuredGemm& g : rows) {
      g.log_ratio = std::log(to_seconds(g.time) / trend_seconds(timed_on, dtype, GemmShape{g.m, g.n, g.k, 1}));
    }
  }
}

}  // namespace sp::models
