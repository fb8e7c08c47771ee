#include "models/step/step_graph.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "models/compute/compute_model.hpp"
#include "models/step/buckets.hpp"
#include "models/step/pipeline_schedule.hpp"
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

namespace {

struct Instance {
  const LayerGroup* layer = nullptr;
  std::string name;
  LayerCompute compute;
  double trainable = 0;  // parameters whose gradients this rank reduces (after TP)
  Duration attention_forward;  // its attention ops' forward: what selective recompute runs again
  Duration attention_memory_bound;  // of which streaming (unfused attention's element-wise kernels)
};

class Builder {
 public:
  Builder(const Workload& w, const Platform& p, const ParallelLayout& lay) : w_(w), p_(p), lay_(lay) {}

  StepGraph build();

 private:
  std::uint32_t add(GraphOp op) {
    g_.ops.push_back(std::move(op));
    return static_cast<std::uint32_t>(g_.ops.size() - 1);
  }
  // The communication of `op` over `group` (memoised: layers repeat the same collectives).
  int comm(const Group& group, CollectiveOp op, Bytes bytes);
  int transfer(Bytes bytes);  // to a pipeline neighbour
  std::uint32_t comm_op(Phase phase, StreamKind stream, int stage, int layer, int mb, int c,
                        std::vector<std::uint32_t> deps) {
    GraphOp o;
    o.phase = phase;
    o.stream = stream;
    o.stage = stage;
    o.layer = layer;
    o.micro_batch = mb;
    o.comm = c;
    o.work = select_time_[static_cast<std::size_t>(c)];
    o.deps = std::move(deps);
    return add(std::move(o));
  }
  // Full recompute reruns a checkpointed layer's forward before its backward.
  bool reruns_forward(const LayerGroup& l) const { return lay_.recompute == Recompute::full && l.checkpointed; }
  // The layer's TP all-gather and reduce-scatter (comm ids), -1 where it has none; without
  // sequence parallelism no all-gather, and an all-reduce of the same tensor in the reduce-scatter's place.
  std::pair<int, int> tp_comms(const LayerGroup& l) {
    if (lay_.tp <= 1 || !(l.tp_tensor.value() > 0)) return {-1, -1};
    const Bytes tensor = l.tp_tensor * (static_cast<double>(lay_.micro_batch) / lay_.cp);
    if (!lay_.sequence_parallel) return {-1, comm(lay_.tp_group, CollectiveOp::all_reduce, tensor)};
    return {comm(lay_.tp_group, CollectiveOp::all_gather, tensor), comm(lay_.tp_group, CollectiveOp::reduce_scatter, tensor)};
  }
  // The TP communication an evaluation's forward of the layer waits for, as runs on its stream
  // before and after its compute: all of it where TP does not overlap compute; the all-gathers
  // alone where the overlap needs gradients enabled (ParallelLayout::evaluation_overlaps_all_gathers).
  // Closed-form times at every fidelity (the evaluation is not replayed on the links).
  struct EvaluationComm {
    std::vector<KernelRun> before, after;
  };
  EvaluationComm evaluation_comm(const LayerGroup& l) {
    const auto [ag, rs] = tp_comms(l);
    if (rs < 0 || (lay_.overlap_tensor_parallel && lay_.evaluation_overlaps_all_gathers)) return {};
    EvaluationComm c;
    if (ag >= 0) c.before.push_back({static_cast<double>(l.tp_all_gathers), select_time_[static_cast<std::size_t>(ag)]});
    if (!lay_.overlap_tensor_parallel) {
      c.after.push_back({static_cast<double>(l.tp_reduce_scatters), select_time_[static_cast<std::size_t>(rs)]});
    }
    return c;
  }
  // One micro-batch's evaluation forward of the stage holding `ks`: its compute as training
  // counts it, and what it waits for besides: the communication above and, where the evaluation
  // dispatches eagerly, the host (models/compute/launch.hpp), from an idle host and device.
  MicroBatchForward evaluation_forward(const std::vector<int>& ks) {
    const Duration dispatch = w_.evaluation_costs.dispatch_per_kernel;
    Duration compute, tp_wait;
    IssueState issued;
    for (int k : ks) {
      const Instance& in = inst_[static_cast<std::size_t>(k)];
      compute += in.compute.forward.time;
      const EvaluationComm c = evaluation_comm(*in.layer);
      for (const KernelRun& r : c.before) tp_wait += scale(r.each, r.count);
      for (const KernelRun& r : c.after) tp_wait += scale(r.each, r.count);
      issue(issued, c.before, dispatch);
      issue(issued, in.compute.forward.runs, dispatch);
      issue(issued, c.after, dispatch);
    }
    // Without a dispatch the stream is the sum (exact, where the runs' rounding is not).
    if (dispatch == Duration::zero()) return {compute, tp_wait};
    return {compute, max(Duration::zero(), issued.device - compute)};
  }
  // One layer instance's pass for one micro-batch: its compute with the TP and CP communication
  // around or beside it; returns the ops the next layer waits for.
  std::vector<std::uint32_t> layer_pass(int stage, int k, int mb, bool forward, std::vector<std::uint32_t> after);

  const Workload& w_;
  const Platform& p_;
  const ParallelLayout& lay_;
  StepGraph g_;
  std::vector<Instance> inst_;
  std::vector<Duration> select_time_;
  std::map<std::tuple<const Group*, int, double>, int> memo_;
  std::vector<std::uint32_t> last_compute_;  // per stage: the compute op just added
};

int Builder::comm(const Group& group, CollectiveOp op, Bytes bytes) {
  const auto key = std::make_tuple(&group, static_cast<int>(op), bytes.value());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const Selected s = select_collective(p_, group, op, bytes);
  g_.comms.push_back(GraphComm{s.terms, bytes, group.top_tier(), group,
                               collective_memory_time(p_, s.terms.algorithm, op, group.ranks(), bytes)});
  select_time_.push_back(s.time);
  const int id = static_cast<int>(g_.comms.size() - 1);
  memo_.emplace(key, id);
  return id;
}

int Builder::transfer(Bytes bytes) {
  static const Group* const kPair = nullptr;  // memo key for pipeline transfers
  const auto key = std::make_tuple(kPair, -1, bytes.value());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const Group pair = strided_group(p_.topology, lay_.pp_peer_stride, 2);
  const std::size_t tier = pair.top_tier();
  const Hop h = hop(p_, pair, Protocol::simple, tier);
  CostTerms t;
  t.op = CollectiveOp::broadcast;  // one sender, one receiver
  t.combine = Combine::sum;
  t.fixed = h.latency;
  t.bandwidth.push_back(BandwidthTerm{p_.topology.tiers[tier].name, tier, 1.0, h.bandwidth});
  g_.comms.push_back(GraphComm{t, bytes, tier, pair, collective_memory_time(p_, Algorithm::ring, t.op, 2, bytes)});
  select_time_.push_back(t.time(bytes));
  const int id = static_cast<int>(g_.comms.size() - 1);
  memo_.emplace(key, id);
  return id;
}

std::vector<std::uint32_t> Builder::layer_pass(int stage, int k, int mb, bool forward,
                                               std::vector<std::uint32_t> after) {
  const Instance& in = inst_[static_cast<std::size_t>(k)];
  const LayerGroup& l = *in.layer;
  if (!forward && !l.backward_pass) return after;  // a frozen stem: no backward at all
  // Full recompute: a checkpointed layer's forward again, with its TP communication, right before
  // its backward (Megatron's checkpointed layer); it counts as forward work.
  if (!forward && reruns_forward(l)) after = layer_pass(stage, k, mb, true, after);
  GraphOp c;
  c.phase = forward ? Phase::forward : Phase::backward;
  c.stage = stage;
  c.layer = k;
  c.micro_batch = mb;
  c.work = forward ? in.compute.forward.time : in.compute.backward.time;
  Duration memory_bound = forward ? in.compute.forward.memory_bound : in.compute.backward.memory_bound;
  if (!forward && lay_.recompute == Recompute::selective) {
    c.work += in.attention_forward;
    memory_bound += in.attention_memory_bound;
  }
  if (c.work > Duration{}) c.memory_share = std::min(1.0, to_seconds(memory_bound) / to_seconds(c.work));
  // Megatron with sequence parallelism: per pass, all-gathers before the column-parallel GEMMs
  // and reduce-scatters after the row-parallel ones (backward swaps them).
  const auto [ag, rs] = tp_comms(l);
  int n_ag = 0, n_rs = 0, kv = -1;
  if (rs >= 0) {
    n_ag = ag < 0 ? 0 : forward ? l.tp_all_gathers : l.tp_reduce_scatters;
    n_rs = forward ? l.tp_reduce_scatters : l.tp_all_gathers;
  }
  if (lay_.cp > 1 && l.cp_exchange.value() > 0) {  // ring attention passes K and V round the CP ranks
    const Bytes bytes = l.cp_exchange * (static_cast<double>(lay_.micro_batch) / lay_.tp);
    kv = comm(lay_.cp_group, forward ? CollectiveOp::all_gather : CollectiveOp::reduce_scatter, bytes);
  }
  std::vector<std::uint32_t> next;
  const auto tp_ops = [&](int id, int count, std::vector<std::uint32_t> deps) {
    std::uint32_t last = 0;
    for (int i = 0; i < count; ++i) last = comm_op(Phase::tp_comm, StreamKind::tp, stage, k, mb, id, deps);
    return last;  // the stream runs them in order: the last one ends last
  };
  if (kv >= 0) next.push_back(comm_op(Phase::cp_comm, StreamKind::cp, stage, k, mb, kv, after));
  if (rs >= 0 && !lay_.overlap_tensor_parallel) {
    std::vector<std::uint32_t> d = after;
    if (n_ag > 0) d = {tp_ops(ag, n_ag, after)};
    c.deps = d;
    last_compute_[static_cast<std::size_t>(stage)] = add(std::move(c));
    const std::uint32_t computed = last_compute_[static_cast<std::size_t>(stage)];
    next.push_back(n_rs > 0 ? tp_ops(rs, n_rs, {computed}) : computed);
    return next;
  }
  c.deps = after;
  last_compute_[static_cast<std::size_t>(stage)] = add(std::move(c));
  next.push_back(last_compute_[static_cast<std::size_t>(stage)]);
  if (n_ag > 0) next.push_back(tp_ops(ag, n_ag, after));
  if (n_rs > 0) next.push_back(tp_ops(rs, n_rs, after));
  return next;
}

// Dependencies on another stage's pipeline send, resolved once every op exists.
constexpr std::uint32_t kPending = 0x80000000u;

StepGraph Builder::build() {
  const Shard shard = shard_of(w_, lay_);
  for (const LayerGroup& l : w_.layers) {
    const LayerCompute lc = layer_compute(l, w_, p_.accelerator, shard);
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
      inst_.push_back(Instance{&l, l.repeat > 1 ? fmt::format("{}[{}]", l.name, r) : l.name, lc,
                               static_cast<double>(l.trainable_parameters) / lay_.tp, attention.time,
                               attention.memory_bound});
      g_.layers.push_back(inst_.back().name);
    }
  }
  if (w_.dispatch_per_kernel > Duration::zero()) {
    std::vector<LayerCompute*> passes;
    for (Instance& in : inst_) passes.push_back(&in.compute);
    dispatch_from_host(passes, w_.dispatch_per_kernel);
  }
  const int stages = lay_.pp, m = lay_.micro_batches, v = lay_.virtual_stages, parts = stages * v;
  if (static_cast<int>(inst_.size()) < parts) {
    throw ModelError(fmt::format("PP{}{} needs at least {} layers to place, {} has {}", stages,
                                 v > 1 ? fmt::format(" x {} virtual stages", v) : "", parts, w_.name, inst_.size()));
  }
  g_.stages = stages;
  last_compute_.assign(static_cast<std::size_t>(stages), 0);
  // Part j of the model (contiguous layers) is chunk j / PP of stage j % PP: with interleaving a
  // micro-batch visits every stage v times.
  std::vector<double> costs;
  for (const Instance& in : inst_) costs.push_back(to_seconds(in.compute.forward.time + in.compute.backward.time));
  const std::vector<std::vector<int>> assigned = split_contiguous(costs, parts);
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
    // Buckets in backward order (buckets.hpp).
    std::vector<std::pair<int, Bytes>> produced;
    for (auto it = ks.rbegin(); it != ks.rend(); ++it) {
      produced.emplace_back(*it, w_.gradient_bytes_per_parameter * inst_[static_cast<std::size_t>(*it)].trainable);
    }
    const BucketPlan plan = plan_buckets(produced, w_.gradient_bucket);
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
    std::vector<std::vector<std::uint32_t>> forward_done(static_cast<std::size_t>(m));
    std::uint32_t last_dp = 0;
    bool any_dp = false;
    for (const auto& [forward, chunk, mb] : order) {
      const int j = part(s, chunk);
      const std::vector<int>& kc = assigned[static_cast<std::size_t>(j)];
      std::vector<std::uint32_t> after;
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
          std::vector<std::uint32_t> deps = {last_compute_[static_cast<std::size_t>(s)]};
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
      compute += lc.forward.time;
      if (in.layer->backward_pass) {
        compute += lc.backward.time;
        if (reruns_forward(*in.layer)) compute += lc.forward.time;
        if (lay_.recompute == Recompute::selective) compute += in.attention_forward;
      }
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

}  // namespace

StepGraph build_step_graph(const Workload& w, const Platform& p, const ParallelLayout& lay) {
  return Builder(w, p, lay).build();
}

}  // namespace sp::models
