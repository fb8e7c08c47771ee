#include "models/network/platform.hpp"

#include <fmt/format.h>

namespace sp::models {

namespace {

void parse_communication_sms(const config::ConfigNode& n, const Accelerator& a, Tier& t) {
  const auto x = n.find("communication_sms");
  if (!x) return;
  const std::int64_t v = x->as_int();
  if (v < 0 || v >= a.compute.parallel_units) {
    x->fail("must be at least 0 and fewer than the accelerator's " + std::to_string(a.compute.parallel_units) +
            " compute units");
  }
  t.communication_sms = static_cast<int>(v);
}

std::optional<InNetworkReduction> parse_reduction(const config::ConfigNode& tier, const char* name) {
  const auto r = tier.find("in_network_reduction");
  if (!r) return std::nullopt;
  r->expect_only({"efficiency", "latency"});
  return InNetworkReduction{name, r->at("efficiency").as_fraction(), r->at("latency").as_nonnegative_duration()};
}

TierKind parse_kind(const config::ConfigNode& n, std::initializer_list<TierKind> allowed) {
  const std::string s = n.as_string();
  std::string valid;
  for (TierKind k : allowed) {
    if (s == tier_kind_name(k)) return k;
    valid += (valid.empty() ? "" : ", ") + std::string(tier_kind_name(k));
  }
  n.fail("unknown kind '" + s + "'", "valid here: " + valid);
}

Tier parse_scale_up(const config::ConfigNode& n, const Accelerator& a, int per_node) {
  n.expect_only({"kind", "size", "bandwidth", "efficiency", "in_network_reduction", "communication_sms"});
  Tier t;
  t.name = "scale_up";
  t.kind = parse_kind(n.at("kind"), {TierKind::switch_, TierKind::pcie, TierKind::bridge, TierKind::torus});
  t.size = per_node;
  if (auto s = n.find("size")) t.size = s->as_count();
  t.bandwidth = a.scale_up_bandwidth;
  if (auto bw = n.find("bandwidth")) t.bandwidth = bw->as_positive_bandwidth();
  t.efficiency = n.at("efficiency").as_fraction();
  t.reduction = parse_reduction(n, "nvls");
  if (t.reduction && t.kind != TierKind::switch_) {
    n.at("in_network_reduction").fail("in-network reduction needs a switch (kind: switch)");
  }
  parse_communication_sms(n, a, t);
  return t;
}

Tier parse_host(const config::ConfigNode& n, const Accelerator& a, int domains_per_node) {
  n.expect_only({"kind", "bandwidth", "efficiency", "communication_sms"});
  Tier t;
  t.name = "host";
  t.kind = parse_kind(n.at("kind"), {TierKind::pcie});
  t.size = domains_per_node;
  t.bandwidth = n.at("bandwidth").as_positive_bandwidth();
  t.efficiency = n.at("efficiency").as_fraction();
  parse_communication_sms(n, a, t);
  return t;
}

Tier parse_scale_out(const config::ConfigNode& n, const Accelerator& a, int per_node) {
  n.expect_only({"kind", "nics_per_node", "nic_bandwidth", "efficiency", "oversubscription", "nodes_per_leaf",
                 "in_network_reduction", "communication_sms"});
  Tier t;
  t.name = "scale_out";
  t.kind = parse_kind(n.at("kind"), {TierKind::fat_tree});
  t.size = 0;
  int nics = a.typical_nics;
  if (auto x = n.find("nics_per_node")) {
    const std::int64_t v = x->as_int();
    if (v < 0) x->fail("must not be negative");
    // Checked before the narrowing; a node has some NICs, never thousands.
    if (v > 1024) x->fail("must be at most 1024 NICs a node");
    nics = static_cast<int>(v);
  }
  BytesPerSecond nic = a.typical_nic_bandwidth;
  if (auto x = n.find("nic_bandwidth")) nic = x->as_positive_bandwidth();
  if (nics > 0 && !(nic.value() > 0)) n.at("nic_bandwidth");  // "missing required key"
  // Each accelerator's share of its node's NICs (rail-optimised: one NIC per GPU on a DGX).
  t.bandwidth = nic * (static_cast<double>(nics) / per_node);
  t.nics_per_node = nics;
  t.efficiency = n.at("efficiency").as_fraction();
  if (auto x = n.find("oversubscription")) {
    t.oversubscription = x->as_number();
    if (t.oversubscription < 1) x->fail("must be at least 1 (1 = non-blocking)");
    if (!(t.oversubscription <= 1000)) x->fail("must be at most 1000 (as a cluster's fabric)");
  }
  if (auto x = n.find("nodes_per_leaf")) t.nodes_per_leaf = x->as_count();
  // Oversubscription divides a leaf switch's uplinks; without the leaf's size there are none to
  // divide (one non-blocking switch), and a value would change nothing silently.
  if (t.oversubscription > 1 && t.nodes_per_leaf == 0) {
    n.at("oversubscription").fail("oversubscription needs nodes_per_leaf (the nodes under one leaf switch, whose uplinks it divides)",
                                  "set scale_out.nodes_per_leaf, e.g. 32 for a DGX SuperPOD scalable unit");
  }
  t.reduction = parse_reduction(n, "sharp");
  parse_communication_sms(n, a, t);
  return t;
}

PlatformPower parse_power(const config::ConfigNode& n) {
  n.expect_only({"host", "switch", "switch_radix", "psu_efficiency", "pue"});
  PlatformPower p;
  const auto watts = [](const config::ConfigNode& x) {
    const Watts w = x.as_power();
    if (w.value() < 0 || w.value() > 1e6) x.fail("must be between 0 W and 1 MW");
    return w;
  };
  if (auto x = n.find("host")) p.host = watts(*x);
  if (auto x = n.find("switch")) p.switch_power = watts(*x);
  if (auto x = n.find("switch_radix")) {
    p.switch_radix = x->as_count();
    if (p.switch_radix < 2 || p.switch_radix > 4096) x->fail("must be between 2 and 4096 ports");
  }
  if (auto x = n.find("psu_efficiency")) {
    p.psu_efficiency = x->as_number();
    if (!(p.psu_efficiency > 0.5 && p.psu_efficiency <= 1)) x->fail("must be above 0.5 and at most 1");
  }
  if (auto x = n.find("pue")) {
    p.pue = x->as_number();
    if (!(p.pue >= 1 && p.pue <= 3)) x->fail("must be between 1 and 3");
  }
  return p;
}

std::vector<Duration> parse_steps(const config::ConfigNode& step, const Topology& topo) {
  step.expect_only({"scale_up", "host", "scale_out"});
  std::vector<Duration> steps;
  for (const Tier& t : topo.tiers) steps.push_back(step.at(t.name).as_nonnegative_duration());
  return steps;
}

ProtocolCosts parse_protocol(const config::ConfigNode& n, const Topology& topo) {
  n.expect_only({"bandwidth_factor", "launch", "step", "chunk", "tree", "across_nodes"});
  ProtocolCosts c;
  c.available = true;
  if (auto chunk = n.find("chunk")) c.chunk = chunk->as_positive_bytes();
  c.bandwidth_factor = n.at("bandwidth_factor").as_fraction();
  c.launch = n.at("launch").as_nonnegative_duration();
  c.step = parse_steps(n.at("step"), topo);
  if (auto t = n.find("tree")) {
    t->expect_only({"bandwidth_factor", "launch", "step"});
    c.tree = ProtocolCosts::Tree{t->at("bandwidth_factor").as_fraction(), t->at("launch").as_nonnegative_duration(),
                                 parse_steps(t->at("step"), topo)};
  }
  // across_nodes: {intel: {bus_ceiling: {two_nodes: ..., more_nodes: ...}, ring_node_step: ...}, amd: ...}
  if (auto a = n.find("across_nodes")) {
    a->expect_only({"intel", "amd"});
    for (HostCpu cpu : {HostCpu::intel, HostCpu::amd}) {
      const auto v = a->find(host_cpu_name(cpu));
      if (!v) continue;
      v->expect_only({"bus_ceiling", "ring_node_step"});
      ProtocolCosts::AcrossNodes& x = c.across(cpu);
      if (auto b = v->find("bus_ceiling")) {
        b->expect_only({"two_nodes", "more_nodes"});
        x.bus_ceiling_two_nodes = b->at("two_nodes").as_positive_bandwidth();
        x.bus_ceiling_more_nodes = b->at("more_nodes").as_positive_bandwidth();
      }
      if (auto r = v->find("ring_node_step")) x.ring_node_step = r->as_nonnegative_duration();
    }
    // A file that gives one vendor's terms only: the other's hosts pay those, not none.
    if (!a->find("amd")) c.across(HostCpu::amd) = c.across(HostCpu::intel);
    if (!a->find("intel")) c.across(HostCpu::intel) = c.across(HostCpu::amd);
  }
  return c;
}

// measured: {scale_up: [{from: "0 B", latency: "2 us", bandwidth: "5 GB/s"}, ...], provenance: ...}
void parse_measured(const config::ConfigNode& n, Topology& topo) {
  n.expect_only({"scale_up", "host", "scale_out", "provenance"});
  for (Tier& t : topo.tiers) {
    const auto list = n.find(t.name);
    if (!list) continue;
    for (const auto& s : list->elements()) {
      s.expect_only({"ranks", "from", "latency", "bandwidth"});
      MeasuredSegment seg{s.at("from").as_nonnegative_bytes(), s.at("latency").as_nonnegative_duration(),
                          s.at("bandwidth").as_positive_bandwidth(), 0};
      if (auto r = s.find("ranks")) seg.ranks = r->as_count();
      const MeasuredSegment* prev = t.measured.empty() ? nullptr : &t.measured.back();
      if (prev && (seg.ranks < prev->ranks || (seg.ranks == prev->ranks && !(seg.from > prev->from)))) {
        s.at("from").fail("segments must be grouped by ranks (ascending), then start at ascending sizes");
      }
      t.measured.push_back(seg);
    }
    if (t.measured.empty()) list->fail("needs at least one segment");
  }
}

}  // namespace

Platform parse_platform(const config::ConfigNode& n,
                        const std::function<Accelerator(const config::ConfigNode&)>& accelerator_of) {
  n.expect_only({"name", "site", "accelerator", "accelerators_per_node", "scale_up", "host", "host_cpu", "scale_out", "protocols",
                 "algorithms", "compute_jitter", "gpu_speed_spread", "collective_memory_traffic", "measured", "power",
                 "reliability"});  // read by the run-level model (models/goodput/reliability.hpp)
  Platform p;
  p.name = n.at("name").as_string();
  if (auto s = n.find("site")) p.site = s->as_string();
  p.accelerator = accelerator_of(n.at("accelerator"));
  int per_node = p.accelerator.typical_accelerators_per_node;
  if (auto a = n.find("accelerators_per_node")) per_node = a->as_count();
  p.topology.accelerators_per_node = per_node;

  const config::ConfigNode up = n.at("scale_up");
  Tier scale_up = parse_scale_up(up, p.accelerator, per_node);
  p.topology.tiers.push_back(scale_up);
  if (scale_up.size < per_node) {
    // Several scale-up domains in one node (NVLink-bridged pairs on PCIe): a host tier joins them.
    if (per_node % scale_up.size != 0) {
      up.at("size").fail("must divide accelerators_per_node (" + std::to_string(per_node) + ")");
    }
    const auto host = n.find("host");
    if (!host) {
      n.at("accelerators_per_node")
          .fail(fmt::format("{} accelerators a node in scale-up domains of {}: needs a `host` tier that joins the domains",
                            per_node, scale_up.size),
                "add host: {kind: pcie, bandwidth: \"63 GB/s\"} (as scenarios/platforms/h100_nvl_pcie.yaml), or make scale_up.size the node's accelerators");
    }
    p.topology.tiers.push_back(parse_host(*host, p.accelerator, per_node / scale_up.size));
  } else if (auto host = n.find("host")) {
    host->fail("only needed when scale_up.size is smaller than accelerators_per_node");
  } else if (scale_up.size % per_node != 0) {
    up.at("size").fail("a scale-up domain larger than a node must hold whole nodes (" +
                       std::to_string(per_node) + " accelerators each)");
  }
  p.topology.tiers.push_back(parse_scale_out(n.at("scale_out"), p.accelerator, per_node));

  if (auto c = n.find("host_cpu")) {
    const auto cpu = host_cpu_from_name(c->as_string());
    if (!cpu) c->fail("unknown host CPU '" + c->as_string() + "'", "valid: intel, amd, arm");
    p.host_cpu = *cpu;
  }
  const config::ConfigNode protocols = n.at("protocols");
  protocols.expect_only({"ll", "ll128", "simple"});
  for (Protocol proto : kProtocols) {
    const char* key = proto == Protocol::ll ? "ll" : proto == Protocol::ll128 ? "ll128" : "simple";
    if (auto c = protocols.find(key)) p.protocols[static_cast<int>(proto)] = parse_protocol(*c, p.topology);
  }
  if (!p.costs(Protocol::simple).available) protocols.at("simple");  // Simple is always needed

  const config::ConfigNode algos = n.at("algorithms");
  for (const auto& a : algos.elements()) {
    const auto algo = algorithm_from_name(a.as_string());
    if (!algo) {
      std::string valid;
      for (Algorithm x : kAlgorithms) valid += (valid.empty() ? "" : ", ") + std::string(algorithm_name(x));
      a.fail("unknown algorithm '" + a.as_string() + "'", "valid: " + valid);
    }
    p.library_algorithms.push_back(*algo);
  }
  if (p.library_algorithms.empty()) algos.fail("needs at least one algorithm");
  if (auto j = n.find("compute_jitter")) {
    p.compute_jitter = j->as_number();
    if (p.compute_jitter < 0 || p.compute_jitter > 0.5) j->fail("must be between 0 and 0.5");
  }
  if (auto g = n.find("gpu_speed_spread")) {
    p.gpu_speed_spread = g->as_number();
    if (p.gpu_speed_spread < 0 || p.gpu_speed_spread > 0.1) g->fail("must be between 0 and 0.1 (10 % between GPUs of one kind)");
  }
  if (auto c = n.find("collective_memory_traffic")) {
    p.collective_memory_traffic = c->as_number();
    if (!(p.collective_memory_traffic >= 1 && p.collective_memory_traffic <= 4)) {
      c->fail("must be between 1 and 4 (bytes of HBM traffic per byte on the wire)");
    }
  }
  if (auto m = n.find("measured")) parse_measured(*m, p.topology);
  if (auto pw = n.find("power")) p.power = parse_power(*pw);
  return p;
}

}  // namespace sp::models
