#include "models/hardware/accelerator.hpp"

#include <algorithm>

namespace sp::models {

namespace {
const std::vector<std::string> kPrecisions = {"bf16", "fp16", "fp8"};
const std::vector<std::string> kTopologies = {"switch", "bridge", "pcie", "torus3d"};
}  // namespace

namespace {
std::vector<std::string> fallbacks(const std::string& precision) {
  return precision == "fp8"    ? std::vector<std::string>{"fp8", "bf16", "fp16"}
         : precision == "bf16" ? std::vector<std::string>{"bf16", "fp16"}
                               : std::vector<std::string>{precision, "bf16"};
}
}  // namespace

std::optional<FlopsPerSecond> Accelerator::training_peak(const std::string& precision) const {
  for (const std::string& p : fallbacks(precision)) {
    if (auto it = peak.find(p); it != peak.end()) return it->second;
  }
  return std::nullopt;
}

double Accelerator::gemm_ceiling(const std::string& precision) const {
  for (const std::string& p : fallbacks(precision)) {
    if (peak.count(p) == 0) continue;  // the precision training_peak runs at
    const auto it = gemm_efficiency.find(p);
    return it == gemm_efficiency.end() ? 1.0 : it->second.efficiency_max;
  }
  return 1.0;
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

Accelerator parse_accelerator(const config::ConfigNode& n) {
  n.expect_only({"name", "vendor", "aliases", "peak", "memory", "scale_up", "tdp", "typical_node", "gemm_efficiency"});
  Accelerator a;
  a.name = n.at("name").as_string();
  a.vendor = n.at("vendor").as_string();
  if (auto aliases = n.find("aliases")) {
    for (const auto& e : aliases->elements()) a.aliases.push_back(e.as_string());
  }
  const config::ConfigNode peak = n.at("peak");
  peak.expect_only({"bf16", "fp16", "fp8"});
  for (const auto& p : kPrecisions) {
    if (auto v = peak.find(p)) a.peak[p] = v->as_positive_flop_rate();
  }
  if (a.peak.empty()) peak.fail("needs at least one of bf16, fp16, fp8");

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
  if (auto t = n.find("tdp")) a.tdp = t->as_power();

  const config::ConfigNode node = n.at("typical_node");
  node.expect_only({"accelerators", "nics", "nic_bandwidth"});
  a.typical_accelerators_per_node = static_cast<int>(node.at("accelerators").as_positive_int());
  const config::ConfigNode nics = node.at("nics");
  const std::int64_t nic_count = nics.as_int();
  if (nic_count < 0) nics.fail("must not be negative");
  a.typical_nics = static_cast<int>(nic_count);
  if (a.typical_nics > 0) a.typical_nic_bandwidth = node.at("nic_bandwidth").as_positive_bandwidth();
  if (auto g = n.find("gemm_efficiency")) {
    // {bf16: {efficiency_max: 0.8, half_flops: "2 GFLOP"}, provenance: {...}}
    for (const auto& [dtype, v] : g->entries()) {
      if (dtype == "provenance") continue;
      if (std::find(kPrecisions.begin(), kPrecisions.end(), dtype) == kPrecisions.end()) {
        v.fail("unknown precision '" + dtype + "'", "valid: bf16, fp16, fp8");
      }
      v.expect_only({"efficiency_max", "half_flops"});
      a.gemm_efficiency[dtype] = {v.at("efficiency_max").as_fraction(), v.at("half_flops").as_flops()};
    }
  }
  return a;
}

}  // namespace sp::models
