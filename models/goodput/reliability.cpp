#include "models/goodput/reliability.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "sim/config/loader.hpp"

namespace sp::models {

namespace {

FailureSource parse_source(const config::ConfigNode& n) {
  n.expect_only({"name", "per", "mtbf", "takes_node", "source"});
  FailureSource s;
  s.name = n.at("name").as_string();
  const std::string per = n.at("per").as_string();
  if (per == "accelerator") {
    s.per = FailureSource::Per::accelerator;
  } else if (per == "node") {
    s.per = FailureSource::Per::node;
  } else {
    n.at("per").fail("unknown component '" + per + "'", "valid: accelerator, node");
  }
  s.mtbf_hours = n.at("mtbf").as_positive_seconds() / 3600;
  if (auto t = n.find("takes_node")) s.takes_node = t->as_bool();
  return s;
}

BytesPerSecond positive_bandwidth_or(const config::ConfigNode& n, std::string_view key, BytesPerSecond base) {
  auto v = n.find(key);
  return v ? v->as_positive_bandwidth() : base;
}

Duration duration_or(const config::ConfigNode& n, std::string_view key, Duration base) {
  auto v = n.find(key);
  return v ? v->as_nonnegative_duration() : base;
}

}  // namespace

Reliability parse_reliability(const config::ConfigNode& n, Reliability r) {
  if (!n.is_map()) n.fail("reliability must be a mapping (failures, sources, detection, checkpoint, ...)");
  n.expect_only({"failures", "sources", "detection", "relaunch", "init_per_node", "checkpoint", "spare_nodes",
                 "repair"});
  if (auto f = n.find("failures")) r.failures = f->as_bool();
  if (auto s = n.find("sources")) {
    // A list replaces the list it overrides: sources are the cluster's, not additions to another's.
    r.sources.clear();
    for (const auto& e : s->elements()) {
      FailureSource src = parse_source(e);
      for (const auto& other : r.sources) {
        if (other.name == src.name) e.at("name").fail("failure source '" + src.name + "' is listed twice");
      }
      r.sources.push_back(std::move(src));
    }
  }
  r.detection = duration_or(n, "detection", r.detection);
  r.relaunch = duration_or(n, "relaunch", r.relaunch);
  r.init_per_node = duration_or(n, "init_per_node", r.init_per_node);
  if (auto c = n.find("checkpoint")) {
    c->expect_only({"write_per_node", "read_per_node", "storage_limit", "async", "snapshot_per_accelerator",
                    "interval"});
    r.write_per_node = positive_bandwidth_or(*c, "write_per_node", r.write_per_node);
    r.read_per_node = positive_bandwidth_or(*c, "read_per_node", r.read_per_node);
    if (auto l = c->find("storage_limit")) {
      if (l->is_scalar() && l->as_string() == "unlimited") {
        r.storage_limit.reset();
      } else {
        r.storage_limit = l->as_positive_bandwidth();
      }
    }
    r.snapshot_per_accelerator = positive_bandwidth_or(*c, "snapshot_per_accelerator", r.snapshot_per_accelerator);
    if (auto a = c->find("async")) r.async_checkpoint = a->as_bool();
    if (auto i = c->find("interval")) {
      if (i->is_scalar() && i->as_string() == "optimal") {
        r.checkpoint_interval.reset();
      } else {
        const Duration d = i->as_duration();
        if (!(d > Duration::zero())) i->fail("must be greater than 0, or 'optimal'");
        r.checkpoint_interval = d;
      }
    }
  }
  if (auto s = n.find("spare_nodes")) {
    if (s->is_scalar() && s->as_string() == "unlimited") {
      r.spare_nodes.reset();
    } else {
      const std::int64_t k = s->as_int();
      if (k < 0 || k > config::kMaxCount) s->fail("must be a count from 0, or 'unlimited'");
      r.spare_nodes = static_cast<int>(k);
    }
  }
  r.repair = duration_or(n, "repair", r.repair);
  return r;
}

const Reliability& default_reliability() {
  static const Reliability cached = [] {
    const auto file = data_root() / "models" / "goodput" / "gpu_cluster.yaml";
    const config::ConfigNode root = config::load_file(file.string());
    root.expect_only({"reliability"});
    const config::ConfigNode r = root.at("reliability");
    // Every key the model reads must be in the defaults: nothing falls back to a zero.
    for (const char* key : {"sources", "detection", "relaunch", "init_per_node", "checkpoint", "repair"}) r.at(key);
    return parse_reliability(r, Reliability{});
  }();
  return cached;
}

JobReliability job_reliability(const Reliability& r, const Workload& w, const Platform& p, int accelerators) {
  JobReliability j;
  j.nodes = p.nodes_for(accelerators);
  double node_rate = 0;
  for (const FailureSource& s : r.sources) {
    const int count = s.per == FailureSource::Per::accelerator ? accelerators : j.nodes;
    const double rate = count / s.mtbf_hours;
    j.failures_per_hour += rate;
    if (s.takes_node) node_rate += rate;
  }
  if (!r.failures) j.failures_per_hour = node_rate = 0;
  j.node_share = j.failures_per_hour > 0 ? node_rate / j.failures_per_hour : 0;
  // A checkpoint holds what training changes: the trainable weights and their optimizer states
  // (master weights, moments); frozen weights are read again from where they came.
  const double trainable = static_cast<double>(w.trainable_parameters());
  const double frozen = static_cast<double>(w.total_parameters()) - trainable;
  j.checkpoint = (w.memory.weight_bytes_per_parameter + w.memory.optimizer_bytes_per_trainable_parameter) * trainable;
  j.restore = j.checkpoint + w.memory.weight_bytes_per_parameter * frozen;
  // Distributed checkpointing spreads the shards over every node (Megatron's and PyTorch's
  // distributed checkpoints, ByteCheckpoint): the nodes' links or the file system, whichever is less.
  const auto rate = [&](BytesPerSecond per_node) {
    const double all = per_node.value() * j.nodes;
    return BytesPerSecond(r.storage_limit ? std::min(all, r.storage_limit->value()) : all);
  };
  j.write = j.checkpoint / rate(r.write_per_node);
  // An async checkpoint stalls training only for the copy of each accelerator's shard to host
  // memory; the write goes on behind the following steps.
  const Bytes shard = j.checkpoint * (1.0 / accelerators);
  j.stall = r.async_checkpoint ? shard / r.snapshot_per_accelerator : j.write;
  j.restart = r.detection + r.relaunch + r.init_per_node * j.nodes + j.restore / rate(r.read_per_node);
  return j;
}

}  // namespace sp::models
