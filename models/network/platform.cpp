#include "models/network/platform.hpp"

namespace sp::models {

namespace {
LinkTier parse_tier(const config::ConfigNode& n, BytesPerSecond default_bandwidth) {
  LinkTier t;
  if (auto bw = n.find("bandwidth")) {
    t.bandwidth = bw->as_positive_bandwidth();
  } else {
    if (!(default_bandwidth.value() > 0)) n.at("bandwidth");  // throws "missing required key"
    t.bandwidth = default_bandwidth;
  }
  t.efficiency = n.at("efficiency").as_fraction();
  t.latency = n.at("latency").as_nonnegative_duration();
  return t;
}
}  // namespace

Platform parse_platform(const config::ConfigNode& n, const Catalog& catalog) {
  n.expect_only({"name", "accelerator", "accelerators_per_node", "scale_up", "scale_out"});
  Platform p;
  p.name = n.at("name").as_string();
  p.accelerator = catalog.accelerator(n.at("accelerator"));
  p.accelerators_per_node = p.accelerator.typical_accelerators_per_node;
  if (auto a = n.find("accelerators_per_node")) p.accelerators_per_node = static_cast<int>(a->as_positive_int());

  const config::ConfigNode up = n.at("scale_up");
  up.expect_only({"bandwidth", "efficiency", "latency"});
  p.scale_up = parse_tier(up, p.accelerator.scale_up_bandwidth);

  const config::ConfigNode out = n.at("scale_out");
  out.expect_only({"nics_per_node", "nic_bandwidth", "efficiency", "latency"});
  p.nics_per_node = p.accelerator.typical_nics;
  if (auto nics = out.find("nics_per_node")) {
    const std::int64_t count = nics->as_int();
    if (count < 0) nics->fail("must not be negative");
    p.nics_per_node = static_cast<int>(count);
  }
  LinkTier nic;
  if (auto bw = out.find("nic_bandwidth")) {
    nic.bandwidth = bw->as_positive_bandwidth();
  } else {
    nic.bandwidth = p.accelerator.typical_nic_bandwidth;
  }
  nic.efficiency = out.at("efficiency").as_fraction();
  nic.latency = out.at("latency").as_nonnegative_duration();
  if (p.nics_per_node > 0 && !(nic.bandwidth.value() > 0)) out.at("nic_bandwidth");
  p.nic = nic;
  return p;
}

}  // namespace sp::models
