#include "models/training/step_model.hpp"

#include <deque>
#include <functional>

#include "models/compute/compute_model.hpp"
#include "models/compute/ops.hpp"
#include "models/training/buckets.hpp"
#include "models/training/stragglers.hpp"
#include "sim/core/engine.hpp"

namespace sp::models {

namespace {

// The communication stream: collectives run one at a time, in the order they were queued. A
// job starts its collective and calls the continuation it is given when the collective ends.
class CommStream {
 public:
  using Job = std::function<void(std::function<void()>)>;
  explicit CommStream(Engine& engine) : engine_(engine) {}

  void enqueue(Job job) {
    queue_.push_back(std::move(job));
    if (!busy_) start_next();
  }
  SimTime idle_since() const { return idle_since_; }
  Duration busy_total() const { return busy_total_; }

 private:
  void start_next() {
    if (queue_.empty()) {
      busy_ = false;
      idle_since_ = engine_.now();
      return;
    }
    busy_ = true;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    const SimTime began = engine_.now();
    job([this, began] {
      busy_total_ += engine_.now() - began;
      start_next();
    });
  }

  Engine& engine_;
  std::deque<Job> queue_;
  bool busy_ = false;
  SimTime idle_since_;
  Duration busy_total_;
};

struct LayerTimes {
  Duration forward, backward;         // per instance, per micro-batch, compute and exposed TP/CP comm
  Duration forward_compute, backward_compute;
  Duration tp_comm;                   // TP and CP communication per instance per micro-batch (both passes)
  Flops flops;                        // model FLOPs of both passes
};

// One layer instance for one micro-batch on one accelerator.
LayerTimes layer_times(const LayerGroup& l, const Workload& w, const Platform& p, const ParallelLayout& lay,
                       Fidelity fidelity) {
  // The kernels of one micro-batch on this accelerator, after the TP and CP splits.
  Shard shard;
  shard.samples = lay.micro_batch;
  shard.tokens_per_sample = w.tokens_per_sample;
  shard.tp = lay.tp;
  shard.cp = lay.cp;
  const LayerCompute c = layer_compute(l, w, p.accelerator, shard);
  LayerTimes t;
  t.forward_compute = c.forward.time;
  t.backward_compute = c.backward.time;
  t.flops = c.forward.model_flops + c.backward.model_flops;

  Duration fwd_comm, bwd_comm;
  if (lay.tp > 1 && l.tp_tensor.value() > 0) {
    const Bytes tensor = l.tp_tensor * (static_cast<double>(lay.micro_batch) / lay.cp);
    const Duration ag = time_collective(p, lay.tp_group, CollectiveOp::all_gather, tensor, {}, fidelity).time;
    const Duration rs = time_collective(p, lay.tp_group, CollectiveOp::reduce_scatter, tensor, {}, fidelity).time;
    fwd_comm += ag * l.tp_all_gathers + rs * l.tp_reduce_scatters;
    bwd_comm += rs * l.tp_all_gathers + ag * l.tp_reduce_scatters;  // backward swaps them
  }
  Duration cp_fwd, cp_bwd;
  if (lay.cp > 1 && l.cp_exchange.value() > 0) {
    const Bytes kv = l.cp_exchange * static_cast<double>(lay.micro_batch) / lay.tp;
    cp_fwd = time_collective(p, lay.cp_group, CollectiveOp::all_gather, kv, {}, fidelity).time;
    cp_bwd = time_collective(p, lay.cp_group, CollectiveOp::reduce_scatter, kv, {}, fidelity).time;
  }
  t.tp_comm = fwd_comm + bwd_comm + cp_fwd + cp_bwd;
  // Ring attention always streams K and V under the attention compute; TP communication does
  // when the implementation overlaps it (NVIDIA's userbuffers), else it adds.
  const auto combine = [&](Duration compute_time, Duration tp, Duration cp) {
    const Duration with_cp = max(compute_time, cp);
    return lay.overlap_tensor_parallel ? max(with_cp, tp) : with_cp + tp;
  };
  t.forward = combine(t.forward_compute, fwd_comm, cp_fwd);
  t.backward = combine(t.backward_compute, bwd_comm, cp_bwd);
  return t;
}

// Pipeline neighbours exchange a micro-batch's hidden states per pass.
Duration pipeline_hop(const Workload& w, const Platform& p, const ParallelLayout& lay) {
  if (lay.pp <= 1) return Duration::zero();
  Bytes hidden;
  for (const LayerGroup& l : w.layers) hidden = hidden < l.tp_tensor ? l.tp_tensor : hidden;
  hidden = hidden * (static_cast<double>(lay.micro_batch) / (lay.cp * lay.tp));
  if (!(hidden.value() > 0)) return Duration::zero();  // the workload gives no hidden-state size
  const Group pair = strided_group(p.topology, lay.pp_peer_stride, 2);
  const Hop h = hop(p, pair, Protocol::simple, pair.top_tier());
  return h.latency + hidden / h.bandwidth;
}

}  // namespace

StepResult simulate_step(const Workload& w, const Platform& p, const ParallelLayout& lay, int accelerators,
                         Fidelity fidelity) {
  StepResult r;
  Flops flops;  // per micro-batch on this stage

  // Per micro-batch on one pipeline stage (the stage holds 1/p of every layer group).
  const double stage = 1.0 / lay.pp;
  Duration t_f, t_b, f_compute, b_compute;
  std::vector<Duration> backward_per_instance;
  for (const LayerGroup& l : w.layers) {
    const LayerTimes t = layer_times(l, w, p, lay, fidelity);
    const double n = l.repeat * stage;
    flops += t.flops * n;
    t_f += scale(t.forward, n);
    t_b += scale(t.backward, n);
    f_compute += scale(t.forward_compute, n);
    b_compute += scale(t.backward_compute, n);
    r.tensor_parallel += scale(t.tp_comm, n * lay.micro_batches);
    backward_per_instance.push_back(scale(t.backward, stage));
  }
  const Duration hop = pipeline_hop(w, p, lay);
  t_f += hop;
  t_b += hop;
  r.forward_per_micro_batch = t_f;
  const int m = lay.micro_batches;
  r.forward = f_compute * m;
  r.backward = b_compute * m;
  const Duration busy = f_compute + b_compute;
  r.compute_efficiency =
      busy > Duration::zero() ? flops.value() / (to_seconds(busy) * p.accelerator.training_peak(w.precision)->value()) : 0;
  r.bubble = (t_f + t_b) * (lay.pp - 1);
  const Duration pipeline = (t_f + t_b) * (m + lay.pp - 1);

  // Gradients: this rank holds 1/(TP x PP) of every trainable tensor.
  const double shard = 1.0 / (lay.tp * lay.pp);
  const Bytes bucket_cap = w.gradient_bucket;
  std::vector<LayerGroup> sharded = w.layers;
  for (LayerGroup& l : sharded) {
    l.trainable_parameters = static_cast<std::int64_t>(static_cast<double>(l.trainable_parameters) * shard + 0.5);
  }
  const std::vector<GradientBucket> buckets =
      make_buckets(sharded, backward_per_instance, w.gradient_bytes_per_parameter, bucket_cap);
  r.buckets = static_cast<int>(buckets.size());

  // The optimizer streams its share of parameters, gradients and states through memory once.
  const double trainable_here = static_cast<double>(w.trainable_parameters()) * shard / lay.optimizer_shards;
  r.optimizer = w.optimizer_traffic_per_parameter * trainable_here / p.accelerator.memory_bandwidth;

  Engine engine;
  CommStream comm(engine);
  FlowNetwork net(engine);
  const std::vector<std::size_t> links = add_tier_links(net, p);
  // The gradient collectives of one bucket, in order: an all-reduce; or a reduce-scatter over the
  // whole group (ZeRO-1); or a reduce-scatter inside the node then an all-reduce of the shard
  // across nodes (sharding within nodes).
  struct Phase {
    const Group* group;
    CollectiveOp op;
    double bytes_factor;
  };
  std::vector<Phase> phases;
  switch (lay.sharding) {
    case Sharding::none: phases = {{&lay.grad_group, CollectiveOp::all_reduce, 1.0}}; break;
    case Sharding::global: phases = {{&lay.grad_group, CollectiveOp::reduce_scatter, 1.0}}; break;
    case Sharding::within_node:
      phases = {{&lay.grad_inside, CollectiveOp::reduce_scatter, 1.0},
                {&lay.grad_across, CollectiveOp::all_reduce, 1.0 / lay.grad_inside.ranks()}};
      break;
  }
  const SimTime backward_start = SimTime::zero() + (pipeline - t_b);  // the last micro-batch's backward
  std::deque<Selected> chosen;  // kept alive while their flows run
  for (const GradientBucket& b : buckets) {
    for (const Phase& ph : phases) {
      const Bytes bytes = b.bytes * ph.bytes_factor;
      CommStream::Job job;
      if (ph.group->ranks() <= 1) {
        job = [](std::function<void()> done) { done(); };
      } else if (fidelity == Fidelity::flow) {
        const Selected& s = chosen.emplace_back(select_collective(p, *ph.group, ph.op, bytes));
        job = [&engine, &net, &links, &p, &s, bytes](std::function<void()> done) {
          start_collective_flows(engine, net, links, p, s.terms, bytes, std::move(done));
        };
      } else {
        const Duration d = time_collective(p, *ph.group, ph.op, bytes, {}, fidelity).time;
        job = [&engine, d](std::function<void()> done) { engine.schedule_after(d, std::move(done)); };
      }
      engine.schedule_at(backward_start + b.ready, [&comm, job = std::move(job)] { comm.enqueue(job); });
    }
  }
  engine.run();
  r.events = engine.events_processed();
  r.communication = comm.busy_total();
  const SimTime update_start = max(SimTime::zero() + pipeline, comm.idle_since());

  // Distributed optimizer: the updated parameters come back by all-gather, under the first
  // forward of the next step.
  Duration gather_exposed;
  const Group& shard_group = lay.sharding == Sharding::global ? lay.grad_group : lay.grad_inside;
  if (lay.sharding != Sharding::none && shard_group.ranks() > 1) {
    Duration gather;
    for (const GradientBucket& b : buckets) {
      const Bytes params = b.bytes * (w.memory.weight_bytes_per_parameter / w.gradient_bytes_per_parameter);
      gather += time_collective(p, shard_group, CollectiveOp::all_gather, params, {}, fidelity).time;
    }
    r.communication += gather;
    gather_exposed = max(Duration::zero(), gather - t_f);
  }

  // Stragglers: every rank's compute is jittered; the step waits for the slowest of N.
  r.jittered_compute = (f_compute + b_compute) * m;
  r.straggler = scale(r.jittered_compute, p.compute_jitter * max_of_normals(accelerators).mean);

  r.step = (update_start - SimTime::zero()) + r.optimizer + gather_exposed + r.straggler;
  r.exposed_communication = r.step - r.forward - r.backward - r.bubble - r.optimizer - r.straggler;
  return r;
}

}  // namespace sp::models
