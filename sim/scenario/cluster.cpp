#include "sim/scenario/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <cstdlib>
#include <set>

#include "models/step/step_model.hpp"
#include "sim/core/error.hpp"

namespace sp {

const char* placement_name(models::Placement p) {
  switch (p) {
    case models::Placement::packed: return "packed";
    case models::Placement::spread: return "spread";
    case models::Placement::random: return "random";
    case models::Placement::listed: return "explicit";
  }
  return "?";
}

std::vector<int> ClusterSpec::sizes() const {
  return varied >= 0 ? jobs[static_cast<std::size_t>(varied)].scenario.accelerators : std::vector<int>{0};
}

int ClusterSpec::accelerators(std::size_t job, std::size_t k) const {
  return static_cast<int>(job) == varied ? sizes()[k] : jobs[job].scenario.accelerators.front();
}

namespace {

models::Placement parse_placement(const config::ConfigNode& n) {
  const std::string v = n.as_string();
  if (v == "packed") return models::Placement::packed;
  if (v == "spread") return models::Placement::spread;
  if (v == "random") return models::Placement::random;
  if (v == "explicit") return models::Placement::listed;
  n.fail("unknown placement '" + v + "'",
         "valid: packed (fill leaves in order), spread (deal nodes round the leaves), random (free nodes drawn from "
         "seed), explicit (each job's `nodes`)");
}

}  // namespace

ClusterSpec load_cluster(const std::string& file, const std::vector<config::Override>& overrides,
                         const models::Catalog& catalog) {
  const config::ConfigNode root = config::load_file(file, overrides);
  if (!root.is_map()) root.fail("a cluster scenario must be a mapping of keys such as name, platform, leaves, jobs");
  root.expect_only({"name", "description", "seed", "platform", "fabric", "placement", "steps", "jobs"});
  ClusterSpec s;
  s.file = file;
  s.resolved_yaml = root.dump();
  s.name = root.at("name").as_folder_name();
  if (auto d = root.find("description")) s.description = d->as_string();
  const config::ConfigNode platform = root.at("platform");
  s.platform = models::parse_platform(platform, catalog);
  // The fabric: the platform's scale-out fat tree, its leaves counted and, where given, their
  // size and oversubscription set here.
  const config::ConfigNode fabric = root.at("fabric");
  fabric.expect_only({"leaves", "nodes_per_leaf", "oversubscription"});
  const auto scale_out = std::find_if(s.platform.topology.tiers.begin(), s.platform.topology.tiers.end(),
                                      [](const models::Tier& t) { return t.kind == models::TierKind::fat_tree; });
  if (scale_out == s.platform.topology.tiers.end()) {
    platform.fail("platform '" + s.platform.name + "' has no fat tree to share (scale_out.kind: fat_tree)");
  }
  if (auto n = fabric.find("nodes_per_leaf")) scale_out->nodes_per_leaf = n->as_count(100'000);
  if (auto o = fabric.find("oversubscription")) {
    scale_out->oversubscription = o->as_number();
    if (!(scale_out->oversubscription >= 1 && scale_out->oversubscription <= 1000)) {
      o->fail("must be between 1 (non-blocking) and 1000");
    }
  }
  if (scale_out->nodes_per_leaf <= 0) {
    fabric.fail("platform '" + s.platform.name + "' gives no leaf size", "set fabric.nodes_per_leaf");
  }
  const int per_leaf = scale_out->nodes_per_leaf;
  const config::ConfigNode leaves = fabric.at("leaves");
  s.leaves = leaves.as_count(100'000);
  // Each bound alone allows 10^10 nodes, whose free lists alone exhaust memory; a million nodes
  // (8 million GPUs) is beyond any cluster built or planned.
  constexpr long long kMaxNodes = 1'000'000;
  if (static_cast<long long>(s.leaves) * per_leaf > kMaxNodes) {
    leaves.fail(fmt::format("{} leaves of {} nodes are {} nodes, more than the {} a shared fabric may hold", s.leaves,
                            per_leaf, static_cast<long long>(s.leaves) * per_leaf, kMaxNodes));
  }
  if (auto p = root.find("placement")) {
    if (p->is_sequence()) {
      for (const auto& e : p->elements()) {
        const models::Placement placement = parse_placement(e);
        if (std::find(s.placements.begin(), s.placements.end(), placement) != s.placements.end()) {
          e.fail("is listed twice (each placement is run once)");
        }
        s.placements.push_back(placement);
      }
      if (s.placements.empty()) p->fail("needs at least one placement");
    } else {
      s.placements.push_back(parse_placement(*p));
    }
  } else {
    s.placements = {models::Placement::packed};
  }
  if (auto seed = root.find("seed")) {
    const std::int64_t v = seed->as_int();
    if (v < 0) seed->fail("must not be negative");
    s.seed = static_cast<std::uint64_t>(v);
  }
  s.steps = 20;
  if (auto st = root.find("steps")) s.steps = st->as_count(10'000);

  const config::ConfigNode list = root.at("jobs");
  std::set<std::string> names;
  std::set<int> taken;  // nodes listed by the jobs so far
  const int per_node = s.platform.accelerators_per_node();
  for (const config::ConfigNode& j : list.elements()) {
    j.expect_only({"name", "workload", "accelerators", "batch", "parallelism", "launch", "calibration", "samples",
                   "seed", "start", "nodes"});
    ClusterJobSpec job{scenario_from_node(j, platform, file, catalog), Duration::zero(), {}};
    if (!names.insert(job.scenario.name).second) j.at("name").fail("job name '" + job.scenario.name + "' appears twice");
    job.scenario.fidelity = models::Fidelity::flow;  // what the jobs share is only seen in flows
    job.scenario.platform.topology = s.platform.topology;  // the fabric as set above
    if (auto st = j.find("start")) job.start = st->as_nonnegative_duration();
    const config::ConfigNode counts = j.at("accelerators");
    for (int n : job.scenario.accelerators) {
      if (n % per_node != 0) {
        counts.fail(fmt::format("{} accelerators is not a whole number of {}-accelerator nodes; jobs on a cluster "
                                "hold whole nodes", n, per_node));
      }
    }
    if (auto list = j.find("nodes")) {
      // Node numbers or ranges "a-b" (inclusive), each a node of the cluster, none twice.
      for (const config::ConfigNode& e : list->elements()) {
        const std::string v = e.as_string();
        const auto dash = v.find('-');
        const auto number = [&](const std::string& t) {
          char* end = nullptr;
          const long x = std::strtol(t.c_str(), &end, 10);
          if (t.empty() || *end != '\0' || x < 0 || x >= static_cast<long>(s.leaves) * per_leaf) {
            e.fail(fmt::format("'{}' is not a node of the cluster (0 to {})", v, static_cast<long>(s.leaves) * per_leaf - 1));
          }
          return static_cast<int>(x);
        };
        const int lo = number(dash == std::string::npos ? v : v.substr(0, dash));
        const int hi = dash == std::string::npos ? lo : number(v.substr(dash + 1));
        if (hi < lo) e.fail("a range must go up: " + v);
        for (int x = lo; x <= hi; ++x) {
          if (!taken.insert(x).second) e.fail(fmt::format("node {} is listed twice", x));
          job.nodes.push_back(x);
        }
      }
    }
    if (job.scenario.accelerators.size() > 1) {
      if (s.varied >= 0) {
        counts.fail("only one job may list several accelerator counts (job '" +
                    s.jobs[static_cast<std::size_t>(s.varied)].scenario.name + "' does)");
      }
      s.varied = static_cast<int>(s.jobs.size());
    }
    s.jobs.push_back(std::move(job));
  }
  if (s.jobs.empty()) list.fail("needs at least one job");
  const bool listed = std::find(s.placements.begin(), s.placements.end(), models::Placement::listed) != s.placements.end();
  if (!listed) {
    // Node lists only place jobs under the explicit placement: elsewhere they were ignored, silently.
    for (const auto& item : list.elements()) {
      if (auto nodes = item.find("nodes")) nodes->fail("a job's nodes place it only under placement 'explicit', which this cluster does not list");
    }
  }
  if (listed) {
    const auto items = list.elements();
    for (std::size_t j = 0; j < s.jobs.size(); ++j) {
      const int most = *std::max_element(s.jobs[j].scenario.accelerators.begin(), s.jobs[j].scenario.accelerators.end());
      if (static_cast<int>(s.jobs[j].nodes.size()) < most / per_node) {
        items[j].fail(fmt::format("the explicit placement needs {} nodes of job '{}' (`nodes`), {} are listed",
                                  most / per_node, s.jobs[j].scenario.name, s.jobs[j].nodes.size()));
      }
    }
  }
  for (std::size_t k = 0; k < s.sizes().size(); ++k) {
    long long nodes = 0;
    for (std::size_t j = 0; j < s.jobs.size(); ++j) nodes += s.accelerators(j, k) / per_node;
    if (nodes > static_cast<long long>(s.leaves) * per_leaf) {
      leaves.fail(fmt::format("{} leaves of {} nodes hold {} nodes; the jobs need {}", s.leaves, per_leaf,
                              static_cast<long long>(s.leaves) * per_leaf, nodes),
                  "add leaves or shrink the jobs");
    }
  }
  return s;
}

namespace {

struct Point {
  std::vector<const models::StepGraph*> graphs;  // built once per job and count (run_cluster)
  std::vector<models::FabricJob> fabric;
  std::vector<std::size_t> job;  // the spec's job of each fabric job
};

Duration with_host(Duration step, const models::Workload& w) { return step + w.host_per_step; }

std::string window_trace(const ClusterSpec& spec, const Point& pt, const models::FabricRun& first) {
  // The window: from the middle of the run, as long as two of the longest mean step, so that
  // every job shows at least one step beside the others.
  Duration longest;
  for (const auto& j : first.jobs) longest = max(longest, j.mean());
  const SimTime from = SimTime::zero() + Duration::from_ps(first.span.ps() / 2), to = from + longest * 2;
  std::string events;
  const auto add = [&](const std::string& e) { events += (events.empty() ? "" : ",\n") + e; };
  for (std::size_t f = 0; f < pt.fabric.size(); ++f) {
    const std::string& name = spec.jobs[pt.job[f]].scenario.name;
    for (int s = 0; s < pt.graphs[f]->stages; ++s) {
      add(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}", f * 1000 + s,
                      models::json_string(fmt::format("{} stage {}", name, s))));
      for (int k = 0; k < models::kStreamKinds; ++k) {
        add(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                        f * 1000 + s, k, models::stream_name(static_cast<models::StreamKind>(k))));
      }
    }
  }
  models::run_shared_fabric(spec.platform, spec.leaves, pt.fabric, [&](std::size_t f, const models::Execution& x) {
    if (x.end < from) return;
    const models::StepGraph& g = *pt.graphs[f];
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const models::OpSpan& sp = x.spans[i];
      if (sp.end < from || sp.start > to) continue;
      const models::GraphOp& op = g.ops[i];
      std::string label = models::phase_name(op.phase);
      if (op.layer >= 0) label += " " + g.layers[static_cast<std::size_t>(op.layer)];
      add(fmt::format("{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"dur\":{:.3f}}}",
                      models::json_string(label), models::phase_name(op.phase), f * 1000 + op.stage,
                      static_cast<int>(op.stream), to_seconds(sp.start - SimTime::zero()) * 1e6,
                      to_seconds(sp.end - sp.start) * 1e6));
    }
  });
  return "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" + events + "\n]}\n";
}

}  // namespace

ClusterResult run_cluster(const ClusterSpec& spec, const std::function<void(int, int)>& progress) {
  // Each job alone, at every count it has, as `run` gives it.
  std::vector<std::vector<ScalingPoint>> alone;
  for (const ClusterJobSpec& j : spec.jobs) alone.push_back(run_scenario(j.scenario, false, true));
  // Each job's step graph at each of its counts, the slowest rank's stragglers in it: the same
  // under every placement, so built once.
  std::vector<std::vector<std::optional<models::StepGraph>>> graphs(spec.jobs.size());
  for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
    const ScenarioSpec& sc = spec.jobs[j].scenario;
    for (const ScalingPoint& a : alone[j]) {
      std::optional<models::StepGraph>& g = graphs[j].emplace_back();
      if (!a.estimate.ok()) continue;
      g = models::build_step_graph(sc.workload, sc.platform, a.estimate.layout);
      models::add_stragglers(*g, sc.platform, a.estimate.accelerators);
    }
  }
  const std::vector<int> sizes = spec.sizes();
  const int per_node = spec.platform.accelerators_per_node();
  const int per_leaf = spec.platform.topology.tiers[models::leaf_tier(spec.platform)].nodes_per_leaf;
  ClusterResult out;
  const int total = static_cast<int>(spec.placements.size() * sizes.size());
  int done = 0;
  for (models::Placement placement : spec.placements) {
    std::vector<double> n_alone, t_alone, t_together;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      std::vector<int> nodes;
      for (std::size_t j = 0; j < spec.jobs.size(); ++j) nodes.push_back(spec.accelerators(j, k) / per_node);
      std::vector<std::vector<int>> where;
      if (placement == models::Placement::listed) {
        for (std::size_t j = 0; j < spec.jobs.size(); ++j) {  // its first nodes at this point's size
          std::vector<int> on(static_cast<std::size_t>(spec.leaves), 0);
          for (int n = 0; n < nodes[j]; ++n) ++on[static_cast<std::size_t>(spec.jobs[j].nodes[static_cast<std::size_t>(n)] / per_leaf)];
          where.push_back(std::move(on));
        }
      } else {
        where = models::place_jobs(placement, nodes, spec.leaves, per_leaf, spec.seed + k);
      }
      Point pt;
      std::vector<ClusterJobRow> rows;
      for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
        const ScenarioSpec& sc = spec.jobs[j].scenario;
        const std::size_t idx = static_cast<std::size_t>(
            std::find(sc.accelerators.begin(), sc.accelerators.end(), spec.accelerators(j, k)) - sc.accelerators.begin());
        ClusterJobRow r;
        r.placement = placement;
        r.point = k;
        r.job = j;
        r.alone = alone[j][idx].estimate;
        r.leaf_nodes = where[j];
        if (!r.alone.ok()) {
          r.status = r.alone.status;
        } else {
          pt.graphs.push_back(&*graphs[j][idx]);
          pt.job.push_back(j);
        }
        rows.push_back(std::move(r));
      }
      for (std::size_t f = 0; f < pt.graphs.size(); ++f) {
        const ClusterJobSpec& job = spec.jobs[pt.job[f]];
        pt.fabric.push_back({pt.graphs[f], where[pt.job[f]], spec.steps, job.start, &job.scenario.platform});
      }
      const models::FabricRun together = models::run_shared_fabric(spec.platform, spec.leaves, pt.fabric);
      for (std::size_t f = 0; f < pt.fabric.size(); ++f) {
        ClusterJobRow& r = rows[pt.job[f]];
        const models::Workload& w = spec.jobs[r.job].scenario.workload;
        models::FabricJob solo = pt.fabric[f];
        solo.steps = 1;
        solo.start = Duration::zero();
        r.step_alone = with_host(models::run_shared_fabric(spec.platform, spec.leaves, {solo}).jobs[0].mean(), w);
        r.step_together = with_host(together.jobs[f].mean(), w);
        for (std::size_t l = 0; l < r.leaf_nodes.size(); ++l) {
          if (r.leaf_nodes[l] > 0 && together.leaf_utilization[l] > r.busiest_uplink) {
            r.busiest_uplink = together.leaf_utilization[l];
            r.busiest_leaf = static_cast<int>(l);
          }
        }
        // Every step as long as it was together: the run time grows by steps x the difference.
        const double extra = r.alone.steps * to_seconds(r.step_together - r.step_alone);
        r.ttt_alone_s = to_seconds(r.alone.time_to_train);
        r.ttt_together_s = r.ttt_alone_s + extra * r.alone.rcp_normalisation;
      }
      if (spec.varied >= 0) {
        const ClusterJobRow& v = rows[static_cast<std::size_t>(spec.varied)];
        const double nan = std::numeric_limits<double>::quiet_NaN();
        n_alone.push_back(sizes[k]);
        t_alone.push_back(v.status == "ok" ? v.ttt_alone_s : nan);
        t_together.push_back(v.status == "ok" ? v.ttt_together_s : nan);
      }
      if (out.timeline.empty() && k + 1 == sizes.size()) out.timeline = window_trace(spec, pt, together);
      for (auto& r : rows) out.rows.push_back(std::move(r));
      if (progress) progress(++done, total);
    }
    if (spec.varied >= 0) {
      const std::vector<int> n(n_alone.begin(), n_alone.end());
      out.break_even_alone.push_back(break_even_points(n, t_alone));
      out.break_even_together.push_back(break_even_points(n, t_together));
    }
  }
  return out;
}

output::Table cluster_table(const ClusterSpec& spec, const ClusterResult& res) {
  using output::number_column;
  output::Column placement{"placement", "", "packed: leaves filled in order; spread: nodes dealt round the leaves", false, {}, {}};
  output::Column job{"job", "", "the job's name", false, {}, {}};
  output::Column workload{"workload", "", "its workload", false, {}, {}};
  output::Column layout{"layout", "", "its layout, as `run` chooses it alone", false, {}, {}};
  output::Column status{"status", "", "ok, or why the job did not run", false, {}, {}};
  auto varied = number_column("varied_accelerators", "count", "the varied job's count at this point (0: none varies)", true);
  auto acc = number_column("accelerators", "count", "the job's accelerators", true);
  auto nodes = number_column("nodes", "count", "its nodes", true);
  auto leaves = number_column("leaves", "count", "leaves its nodes sit under", true);
  auto alone = number_column("step_time_alone_s", "s", "its step alone on its placement (mean, host time included)");
  auto together = number_column("step_time_together_s", "s", "its step beside the other jobs (mean over the steps played)");
  auto slowdown = number_column("slowdown", "1", "step_time_together_s / step_time_alone_s");
  auto busiest = number_column("busiest_uplink_utilization", "1",
                               "bytes over capacity of the busiest leaf uplink it uses, over the window");
  auto busiest_leaf = number_column("busiest_uplink_leaf", "count", "that leaf (-1: none crossed)", true);
  auto t_alone = number_column("time_to_train_alone_min", "min", "as `run` predicts it alone");
  auto t_together = number_column("time_to_train_together_min", "min", "with every step as long as beside the others");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<int> sizes = spec.sizes();
  for (const ClusterJobRow& r : res.rows) {
    const bool ok = r.status == "ok";
    placement.text.push_back(placement_name(r.placement));
    job.text.push_back(spec.jobs[r.job].scenario.name);
    workload.text.push_back(spec.jobs[r.job].scenario.workload.name);
    layout.text.push_back(ok ? r.alone.layout.describe() : "-");
    status.text.push_back(r.status);
    varied.values.push_back(sizes[r.point]);
    acc.values.push_back(spec.accelerators(r.job, r.point));
    nodes.values.push_back(spec.accelerators(r.job, r.point) / spec.platform.accelerators_per_node());
    leaves.values.push_back(static_cast<double>(std::count_if(r.leaf_nodes.begin(), r.leaf_nodes.end(), [](int n) { return n > 0; })));
    alone.values.push_back(ok ? to_seconds(r.step_alone) : nan);
    together.values.push_back(ok ? to_seconds(r.step_together) : nan);
    slowdown.values.push_back(ok ? to_seconds(r.step_together) / to_seconds(r.step_alone) : nan);
    busiest.values.push_back(ok ? r.busiest_uplink : nan);
    busiest_leaf.values.push_back(r.busiest_leaf);
    t_alone.values.push_back(ok ? r.ttt_alone_s / 60 : nan);
    t_together.values.push_back(ok ? r.ttt_together_s / 60 : nan);
  }
  output::Table t;
  t.columns = {placement, varied, job, workload, acc, nodes, leaves, layout, alone, together, slowdown, busiest,
               busiest_leaf, t_alone, t_together, status};
  return t;
}

}  // namespace sp
