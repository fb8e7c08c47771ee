#include "models/hardware/accelerator.hpp"

#include <algorithm>
#include <utility>

namespace sp::models {

namespace {
const std::vector<std::string> kPrecisions = {"bf16", "fp16", "fp8"};
const std::vector<std::string> kTopologies = {"switch", "bridge", "pcie", "torus3d"};

// compute: {source, parallel_units, gemm_tile: [m, n], kernel_latency, memory_efficiency,
//           strided_access_fraction, transpose_access_fraction (optional: KernelCosts' defaults),
//           gemm: {dtype: {efficiency_max, k_overhead}}, measured: {dtype: [[m, n, k, time], ...]},
//           measured_memory_bandwidth (optional: the part the table was timed on), provenance: {...}}
KernelCosts parse_kernel_costs(const config::ConfigNode& n, const Accelerator& a) {
  n.expect_only({"source", "parallel_units", "gemm_tile", "kernel_latency", "memory_efficiency",
                 "strided_access_fraction", "transpose_access_fraction", "gemm", "measured", "measured_memory_bandwidth",
                 "provenance"});
  KernelCosts c;
  c.source = n.at("source").as_string();
  if (c.source.rfind("measured", 0) != 0 && c.source.rfind("estimate", 0) != 0) {
    n.at("source").fail("must start with 'measured' or 'estimate' and name where the figures come from");
  }
  c.parallel_units = n.at("parallel_units").as_count();
  const config::ConfigNode tile = n.at("gemm_tile");
  const auto dims = tile.elements();
  if (dims.size() != 2) tile.fail("needs [m, n]: the output tile of one work unit");
  c.tile_m = dims[0].as_count();
  c.tile_n = dims[1].as_count();
  c.kernel_latency = n.at("kernel_latency").as_nonnegative_duration();
  c.memory_efficiency = n.at("memory_efficiency").as_fraction();
  if (auto f = n.find("strided_access_fraction")) c.strided_access_fraction = f->as_fraction();
  if (auto f = n.find("transpose_access_fraction")) c.transpose_access_fraction = f->as_fraction();
  const auto known_dtype = [&](const std::string& dtype, const config::ConfigNode& where) {
    if (a.peak.count(dtype) == 0) where.fail("no peak for " + dtype + " in this accelerator's file", "add it under peak:");
  };
  for (const auto& [dtype, v] : n.at("gemm").entries()) {
    known_dtype(dtype, v);
    v.expect_only({"efficiency_max", "k_overhead"});
    GemmRate r;
    r.efficiency_max = v.at("efficiency_max").as_fraction();
    r.k_overhead = v.at("k_overhead").as_number();
    if (r.k_overhead < 0) v.at("k_overhead").fail("must not be negative");
    c.gemm[dtype] = r;
  }
  if (auto m = n.find("measured")) {
    for (const auto& [dtype, list] : m->entries()) {
      known_dtype(dtype, list);
      for (const auto& row : list.elements()) {
        const auto cells = row.elements();
        if (cells.size() != 4) row.fail("needs [m, n, k, time]");
        MeasuredGemm g{static_cast<double>(cells[0].as_positive_int()), static_cast<double>(cells[1].as_positive_int()),
                       static_cast<double>(cells[2].as_positive_int()), cells[3].as_nonnegative_duration()};
        if (g.time <= Duration::zero()) cells[3].fail("must be positive");
        c.measured[dtype].push_back(g);
      }
    }
  }
  if (auto b = n.find("measured_memory_bandwidth")) {
    if (c.measured.empty()) b->fail("says what the measured table was timed on, and there is no measured table");
    c.measured_bandwidth = b->as_positive_bandwidth();
  }
  return c;
}

}  // namespace

std::optional<FlopsPerSecond> Accelerator::training_peak(const std::string& precision) const {
  const std::string dtype = gemm_dtype(*this, precision);
  if (dtype.empty()) return std::nullopt;
  return peak.at(dtype);
}

FlopsPerSecond Accelerator::peak_for(const std::string& precision, const config::ConfigNode& where) const {
  const auto rate = training_peak(precision);
  if (!rate) {
    std::string have;
    for (const auto& [p, r] : peak) have += (have.empty() ? "" : ", ") + p;
    where.fail(name + " has no peak usable for " + precision + " training in its hardware file", "it has: " + have);
  }
  return *rate;
}

namespace {
MigGeometry parse_mig(const config::ConfigNode& n, const Accelerator& a) {
  n.expect_only({"compute_slices", "memory_slices", "sms_per_slice", "profiles"});
  MigGeometry g;
  g.compute_slices = n.at("compute_slices").as_count();
  g.memory_slices = n.at("memory_slices").as_count();
  const config::ConfigNode sms = n.at("sms_per_slice");
  g.sms_per_slice = sms.as_count();
  if (g.sms_per_slice * g.compute_slices > a.compute.parallel_units) {
    sms.fail("more SMs in the slices than the device has", "compute_slices x sms_per_slice <= compute.parallel_units");
  }
  for (const auto& e : n.at("profiles").elements()) {
    const auto v = e.elements();
    if (v.size() != 2 && v.size() != 3) {
      e.fail("a profile is [compute slices, memory slices] or [compute slices, memory slices, SMs]",
             "e.g. [1, 1] for A100's 1g.5gb, [3, 4, 60] for H100's 3g.40gb");
    }
    MigProfile p{static_cast<int>(v[0].as_count()), static_cast<int>(v[1].as_count()), 0};
    p.sms = v.size() == 3 ? static_cast<int>(v[2].as_count()) : p.compute_slices * g.sms_per_slice;
    if (p.compute_slices > g.compute_slices || p.memory_slices > g.memory_slices) {
      e.fail("a profile larger than the device", "at most compute_slices and memory_slices");
    }
    if (p.sms < 1 || p.sms > a.compute.parallel_units) {
      e.fail("a profile of " + std::to_string(p.sms) + " SMs on a device of " + std::to_string(a.compute.parallel_units),
             "between 1 and compute.parallel_units");
    }
    if (!g.profiles.empty() && p.sms < g.profiles.back().sms) {
      e.fail("a larger profile with fewer SMs (" + std::to_string(p.sms) + " after " +
             std::to_string(g.profiles.back().sms) + ")");
    }
    if (!g.profiles.empty() && std::pair(p.compute_slices, p.memory_slices) <=
                                   std::pair(g.profiles.back().compute_slices, g.profiles.back().memory_slices)) {
      e.fail("profiles must ascend in compute slices, then memory slices");
    }
    g.profiles.push_back(p);
  }
  if (g.profiles.empty()) n.at("profiles").fail("needs at least one profile");
  return g;
}
}  // namespace

Accelerator parse_accelerator(const config::ConfigNode& n) {
  n.expect_only({"name", "vendor", "aliases", "family", "software_stack", "peak", "memory", "scale_up", "tdp", "idle_power",
                 "context_memory", "typical_node", "compute", "mig", "special_functions"});
  Accelerator a;
  a.name = n.at("name").as_string();
  a.vendor = n.at("vendor").as_string();
  a.family = n.at("family").as_string();
  a.software_stack = n.at("software_stack").as_string();
  if (auto aliases = n.find("aliases")) {
    for (const auto& e : aliases->elements()) a.aliases.push_back(e.as_string());
  }
  const config::ConfigNode peak = n.at("peak");
  peak.expect_only({"bf16", "fp16", "fp8"});
  for (const auto& p : kPrecisions) {
    if (auto v = peak.find(p)) a.peak[p] = v->as_positive_flop_rate();
  }
  if (a.peak.empty()) peak.fail("needs at least one of bf16, fp16, fp8");
  if (auto sf = n.find("special_functions")) {
    // One unit at 1 GHz does 1e9 a second; below that a unit prefix is wrong (MFLOP/s for TFLOP/s).
    constexpr double kSlowestSpecialFunctionRate = 1e9;
    a.special_function_rate = sf->as_positive_flop_rate();
    if (a.special_function_rate.value() < kSlowestSpecialFunctionRate) {
      sf->fail("below 1 GFLOP/s: an accelerator's units do billions a second", "e.g. \"3.87 TFLOP/s\"");
    }
  }

  const config::ConfigNode mem = n.at("memory");
  mem.expect_only({"capacity", "bandwidth"});
  a.memory_capacity = mem.at("capacity").as_positive_bytes();
  a.memory_bandwidth = mem.at("bandwidth").as_positive_bandwidth();

  const config::ConfigNode up = n.at("scale_up");
  up.expect_only({"topology", "link", "bandwidth"});
  const config::ConfigNode topo = up.at("topology");
  a.scale_up_topology = topo.as_string();
  if (std::find(kTopologies.begin(), kTopologies.end(), a.scale_up_topology) == kTopologies.end()) {
    topo.fail("unknown topology '" + a.scale_up_topology + "'", "valid: switch, bridge, pcie, torus3d");
  }
  a.scale_up_link = up.at("link").as_string();
  a.scale_up_bandwidth = up.at("bandwidth").as_positive_bandwidth();
  if (auto t = n.find("tdp")) {
    a.tdp = t->as_power();
    if (!(a.tdp->value() > 0)) t->fail("must be greater than 0 W");
  }
  if (auto t = n.find("idle_power")) {
    a.idle_power = t->as_power();
    if (!a.tdp) t->fail("needs tdp as well");
    if (!(a.idle_power->value() > 0 && *a.idle_power < *a.tdp)) t->fail("must be above 0 W and below the tdp");
  }
  if (auto m = n.find("context_memory")) {
    a.context_memory = m->as_bytes();
    if (!(a.context_memory->value() > 0 && *a.context_memory < a.memory_capacity)) {
      m->fail("must be above 0 B and below the memory capacity");
    }
  }

  const config::ConfigNode node = n.at("typical_node");
  node.expect_only({"accelerators", "nics", "nic_bandwidth"});
  a.typical_accelerators_per_node = node.at("accelerators").as_count();
  const config::ConfigNode nics = node.at("nics");
  const std::int64_t nic_count = nics.as_int();
  if (nic_count < 0) nics.fail("must not be negative");
  a.typical_nics = static_cast<int>(nic_count);
  if (a.typical_nics > 0) a.typical_nic_bandwidth = node.at("nic_bandwidth").as_positive_bandwidth();
  a.compute = parse_kernel_costs(n.at("compute"), a);
  refresh_measured_ratios(a);
  if (auto m = n.find("mig")) a.mig = parse_mig(*m, a);
  return a;
}

}  // namespace sp::models
