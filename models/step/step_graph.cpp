// Builds one training step's graph (step_graph.hpp): the layer instances and their compute, their
// placement on pipeline stages, each stage's micro-batches in pipeline order, the gradient buckets
// and their data-parallel reduction, the optimizer, and what the evaluation and the stragglers need
// of the slowest stage. One layer's pass and its communication are in step_graph_layers.cpp.
#include "models/step/step_graph.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/compute/compute_model.hpp"
#include "models/hardware/kernel_costs.hpp"
#include "models/step/buckets.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step_graph_builder.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

const char* stream_name(StreamKind s) {
  switch (s) {
    case StreamKind::compute: return "compute";
    case StreamKind::tp: return "tp";
    case StreamKind::cp: return "cp";
    case StreamKind::dp: return "dp";
    case StreamKind::pp: return "pp";
  }
  return "?";
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
    case Phase::tp_comm: return "tp_comm";
    case Phase::cp_comm: return "cp_comm";
    case Phase::dp_comm: return "dp_comm";
    case Phase::param_gather: return "param_gather";
    case Phase::pp_send: return "pp_send";
  }
  return "?";
}

namespace detail {
namespace {

// Dependencies on another stage's pipeline send, resolved once every op exists.
constexpr std::uint32_t kPending = 0x80000000u;

}  // namespace

void Builder::make_instances() {
  const Shard shard = shard_of(w_, lay_);
  const std::vector<LayerCompute> computes = instance_computes(w_, p_.accelerator, lay_);
  std::size_t k = 0;
  for (const LayerGroup& l : w_.layers) {
    PassCompute attention;
    if (lay_.recompute == Recompute::selective) {
      LayerGroup core = l;  // the attention ops alone, costed as the layer's
      core.ops.clear();
      for (const Op& op : l.ops) {
        if (op.kind == OpKind::attention) core.ops.push_back(op);
      }
      if (!core.ops.empty()) attention = layer_compute(core, w_, p_.accelerator, shard).forward;
    }
    for (int r = 0; r < l.repeat; ++r) {
      inst_.push_back(Instance{&l, l.repeat > 1 ? fmt::format("{}[{}]", l.name, r) : l.name, computes[k++],
                               static_cast<double>(l.trainable_parameters) / lay_.tp, attention.time,
                               attention.memory_bound});
      g_.layers.push_back(inst_.back().name);
    }
  }
}

Duration Builder::backward_work(const Instance& in) const {
  if (!in.layer->backward_pass) return {};
  Duration t = in.compute.backward.time;
  if (reruns_forward(*in.layer)) t += in.compute.forward.time;
  if (lay_.recompute == Recompute::selective) t += in.attention_forward;
  return t;
}

std::vector<std::vector<int>> Builder::split() const {
  std::vector<const LayerCompute*> computes;
  for (const Instance& in : inst_) computes.push_back(&in.compute);
  return split_on_compute(computes, lay_.pp * lay_.virtual_stages);
}

Duration Builder::compute_bound() {
  make_instances();
  const int stages = lay_.pp, m = lay_.micro_batches;
  if (static_cast<int>(inst_.size()) < stages * lay_.virtual_stages) return {};  // build() refuses it
  const std::vector<std::vector<int>> assigned = split();
  std::vector<Duration> stage_work(static_cast<std::size_t>(stages));
  Duration fill, drain, last_backward;  // fill, drain: parts 0 .. PP-2 (chunk 0 of every stage but the last)
  for (std::size_t j = 0; j < assigned.size(); ++j) {
    for (int k : assigned[j]) {
      const Instance& in = inst_[static_cast<std::size_t>(k)];
      const Duration f = in.compute.forward.time, b = backward_work(in);
      stage_work[j % static_cast<std::size_t>(stages)] += f + b;
      if (static_cast<int>(j) == stages - 1) last_backward += b;
      if (static_cast<int>(j) < stages - 1) {
        fill += f;
        drain += b;
      }
    }
  }
  // Each stage runs its micro-batches' work one at a time on one compute stream. The last stage
  // starts when the first micro-batch's forward has crossed parts 0 .. PP-2, and the backward of
  // its last part PP-1 is its last op (every other op of that micro-batch precedes it), after
  // which that backward crosses parts PP-2 .. 0: (m + (PP-1)/v) x the per-stage work when balanced.
  Duration busiest;
  for (Duration d : stage_work) busiest = max(busiest, d);
  if (last_backward == Duration{}) drain = {};  // no backward on part PP-1 to end the last stage
  return max(scale(busiest, m), fill + scale(stage_work.back(), m) + drain);
}

StepGraph Builder::build() {
  make_instances();
  const int stages = lay_.pp, m = lay_.micro_batches, v = lay_.virtual_stages, parts = stages * v;
  if (static_cast<int>(inst_.size()) < parts) {
    throw ModelError(fmt::format("PP{}{} needs at least {} layers to place, {} has {}", stages,
                                 v > 1 ? fmt::format(" x {} virtual stages", v) : "", parts, w_.name, inst_.size()));
  }
  g_.stages = stages;
  // A capacity hint, not a limit: about a dozen ops per instance and micro-batch (forward and
  // backward compute, two TP all-gathers and reduce-scatters each, CP exchanges, sends).
  g_.ops.reserve(static_cast<std::size_t>(m) * inst_.size() * 12);
  last_compute_.assign(static_cast<std::size_t>(stages), 0);
  // Part j of the model (contiguous layers) is chunk j / PP of stage j % PP: with interleaving a
  // micro-batch visits every stage v times.
  const std::vector<std::vector<int>> assigned = split();
  const auto part = [&](int s, int c) { return c * stages + s; };

  struct DpPhase {
    const Group* group;
    CollectiveOp op;
    double bytes_factor;
  };
  std::vector<DpPhase> phases;
  switch (lay_.sharding) {
    case Sharding::none: phases = {{&lay_.grad_group, CollectiveOp::all_reduce, 1.0}}; break;
    case Sharding::global: phases = {{&lay_.grad_group, CollectiveOp::reduce_scatter, 1.0}}; break;
    case Sharding::within_node:
      phases = {{&lay_.grad_inside, CollectiveOp::reduce_scatter, 1.0},
                {&lay_.grad_across, CollectiveOp::all_reduce, 1.0 / lay_.grad_inside.ranks()}};
      break;
  }
  const Group& shard_group = lay_.sharding == Sharding::global ? lay_.grad_group : lay_.grad_inside;
  const bool gathers = lay_.sharding != Sharding::none && shard_group.ranks() > 1;
  // What part j hands part j + 1 per micro-batch: the boundary tensor of its last layer
  // instance, split over the TP (sequence parallel) and CP ranks; the backward returns its gradient.
  std::vector<Bytes> boundary(static_cast<std::size_t>(parts));
  for (int j = 0; j + 1 < parts; ++j) {
    const Instance& last = inst_[static_cast<std::size_t>(assigned[static_cast<std::size_t>(j)].back())];
    if (!(last.layer->pipeline_boundary.value() > 0)) {
      throw ModelError(fmt::format("PP{}: {} gives no pipeline boundary after '{}'", stages, w_.name, last.name));
    }
    boundary[static_cast<std::size_t>(j)] =
        last.layer->pipeline_boundary * (static_cast<double>(lay_.micro_batch) / (lay_.cp * lay_.tp));
  }

  struct Pending {
    bool forward;
    int part, mb;
  };
  std::vector<Pending> pending;
  std::vector<std::vector<std::uint32_t>> send_fwd(static_cast<std::size_t>(parts)), send_bwd(send_fwd);
  Duration slowest_compute;
  MicroBatchForward slowest_forward;
  for (int s = 0; s < stages; ++s) {
    std::vector<int> ks;  // the stage's instances, its chunks in model order
    for (int c = 0; c < v; ++c) {
      const auto& chunk = assigned[static_cast<std::size_t>(part(s, c))];
      ks.insert(ks.end(), chunk.begin(), chunk.end());
    }
    // Buckets in backward order (buckets.hpp), a buffer per model chunk, each with the cap the
    // workload's implementation gives it there (Workload::gradient_bucket_for).
    std::vector<BucketSegment> segments;
    for (int c = v; c-- > 0;) {
      const auto& chunk = assigned[static_cast<std::size_t>(part(s, c))];
      BucketSegment seg;
      seg.cap = w_.gradient_bucket_for(lay_.dp, s, c);
      for (auto it = chunk.rbegin(); it != chunk.rend(); ++it) {
        seg.backward_order.emplace_back(*it, w_.gradient_bytes_per_parameter * inst_[static_cast<std::size_t>(*it)].trainable);
      }
      segments.push_back(std::move(seg));
    }
    const BucketPlan plan = plan_buckets(segments);
    const std::vector<BucketPlan::Bucket>& buckets = plan.buckets;
    const std::map<int, std::size_t>& first_bucket = plan.first;
    g_.buckets = std::max(g_.buckets, static_cast<int>(buckets.size()));

    std::vector<std::uint32_t> gather_of(buckets.size());
    if (gathers) {  // the parameters the previous step's optimizer updated, in forward order
      const double per_byte = w_.memory.weight_bytes_per_parameter / w_.gradient_bytes_per_parameter;
      for (std::size_t b = buckets.size(); b-- > 0;) {
        gather_of[b] = comm_op(Phase::param_gather, StreamKind::dp, s, -1, -1,
                               comm(shard_group, CollectiveOp::all_gather, buckets[b].bytes * per_byte), {});
      }
    }
    const std::vector<ScheduleUnit> order = pipeline_order(s, stages, v, m);
    for (int c = 0; c < v; ++c) {
      send_fwd[static_cast<std::size_t>(part(s, c))].assign(static_cast<std::size_t>(m), 0);
      send_bwd[static_cast<std::size_t>(part(s, c))].assign(static_cast<std::size_t>(m), 0);
    }
    std::vector<OpDeps> forward_done(static_cast<std::size_t>(m));
    std::uint32_t last_dp = 0;
    bool any_dp = false;
    for (const auto& [forward, chunk, mb] : order) {
      const int j = part(s, chunk);
      const std::vector<int>& kc = assigned[static_cast<std::size_t>(j)];
      OpDeps after;
      if (forward && j > 0) {
        after.push_back(kPending + static_cast<std::uint32_t>(pending.size()));
        pending.push_back({true, j - 1, mb});
      } else if (!forward && j < parts - 1) {
        after.push_back(kPending + static_cast<std::uint32_t>(pending.size()));
        pending.push_back({false, j + 1, mb});
      } else if (!forward) {
        after = forward_done[static_cast<std::size_t>(mb)];  // the last part's loss follows its forward
      }
      if (forward) {
        for (int k : kc) {
          if (gathers && mb == 0) {
            if (auto b = first_bucket.find(k); b != first_bucket.end()) after.push_back(gather_of[b->second]);
          }
          after = layer_pass(s, k, mb, true, after);
        }
        forward_done[static_cast<std::size_t>(mb)] = after;
        if (j < parts - 1) {
          send_fwd[static_cast<std::size_t>(j)][static_cast<std::size_t>(mb)] =
              comm_op(Phase::pp_send, StreamKind::pp, s, -1, mb, transfer(boundary[static_cast<std::size_t>(j)]), after);
          g_.ops.back().peer = (j + 1) % stages;
        }
        continue;
      }
      for (auto it = kc.rbegin(); it != kc.rend(); ++it) {
        after = layer_pass(s, *it, mb, false, after);
        if (mb != m - 1) continue;  // gradients are reduced once, after the last micro-batch
        for (const BucketPlan::Bucket& b : buckets) {
          if (b.closes_at != *it) continue;
          OpDeps deps = {last_compute_[static_cast<std::size_t>(s)]};
          for (const DpPhase& ph : phases) {
            if (ph.group->ranks() <= 1) continue;
            last_dp = comm_op(Phase::dp_comm, StreamKind::dp, s, *it, mb,
                              comm(*ph.group, ph.op, b.bytes * ph.bytes_factor), deps);
            deps = {last_dp};
            any_dp = true;
          }
        }
      }
      if (j > 0) {
        send_bwd[static_cast<std::size_t>(j)][static_cast<std::size_t>(mb)] =
            comm_op(Phase::pp_send, StreamKind::pp, s, -1, mb, transfer(boundary[static_cast<std::size_t>(j) - 1]), after);
        g_.ops.back().peer = (j - 1 + stages) % stages;
      }
    }
    // The optimizer streams this rank's share of parameters, gradients and states once.
    double trainable = 0;
    for (int k : ks) trainable += inst_[static_cast<std::size_t>(k)].trainable;
    GraphOp opt;
    opt.phase = Phase::optimizer;
    opt.stage = s;
    opt.work = stream_time(p_.accelerator, w_.optimizer_traffic_per_parameter * (trainable / lay_.optimizer_shards), 1);
    opt.memory_share = 1;  // it streams its states
    opt.deps = {last_compute_[static_cast<std::size_t>(s)]};
    if (any_dp) opt.deps.push_back(last_dp);
    add(std::move(opt));

    // What the evaluation and the stragglers need: this stage's forward and compute, alone.
    MicroBatchForward forward = evaluation_forward(ks);
    Duration compute;
    Flops flops;
    for (int k : ks) {
      const Instance& in = inst_[static_cast<std::size_t>(k)];
      const LayerCompute& lc = in.compute;
      compute += lc.forward.time + backward_work(in);
      flops += lc.forward.model_flops + lc.backward.model_flops;  // model FLOPs: recompute is not counted
    }
    for (int c = 0; c < v; ++c) {  // each chunk's input arrives from the part before it
      const int j = part(s, c);
      if (j > 0) forward.waits += select_time_[static_cast<std::size_t>(transfer(boundary[static_cast<std::size_t>(j) - 1]))];
    }
    if (compute >= slowest_compute) {
      slowest_compute = compute;
      g_.flops_per_step = flops * m;
    }
    if (forward.compute + forward.waits >= slowest_forward.compute + slowest_forward.waits) slowest_forward = forward;
  }
  for (GraphOp& op : g_.ops) {
    for (std::uint32_t& d : op.deps) {
      if (d < kPending) continue;
      const Pending& pd = pending[d - kPending];
      d = (pd.forward ? send_fwd : send_bwd)[static_cast<std::size_t>(pd.part)][static_cast<std::size_t>(pd.mb)];
    }
  }
  g_.evaluation_forward = slowest_forward;
  g_.compute_per_step = slowest_compute * m;
  return std::move(g_);
}

}  // namespace detail

StepGraph build_step_graph(const Workload& w, const Platform& p, const ParallelLayout& lay) {
  return detail::Builder(w, p, lay).build();
}

Duration step_compute_bound(const Workload& w, const Platform& p, const ParallelLayout& lay) {
  return detail::Builder(w, p, lay).compute_bound();
}

}  // namespace sp::models
