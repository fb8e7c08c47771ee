// The layer-level half of the step graph's Builder (step_graph_builder.hpp): the collectives and
// pipeline transfers a layer issues, memoised because layers repeat them; one layer instance's
// pass for one micro-batch with its TP and CP communication; and the closed-form evaluation
// forward built from the same pieces. Apart from step_graph.cpp, which arranges these passes into
// stages, micro-batches and gradient buckets, so that a change to how one layer communicates is
// read and made here alone.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/compute/launch.hpp"
#include "models/step/step_graph_builder.hpp"
#include "models/workloads/parallelism.hpp"
#include "sim/core/time.hpp"

namespace sp::models::detail {

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

std::pair<int, int> Builder::tp_comms(const LayerGroup& l) {
  if (lay_.tp <= 1 || !(l.tp_tensor.value() > 0)) return {-1, -1};
  const Bytes tensor = l.tp_tensor * (static_cast<double>(lay_.micro_batch) / lay_.cp);
  if (!lay_.sequence_parallel) return {-1, comm(lay_.tp_group, CollectiveOp::all_reduce, tensor)};
  return {comm(lay_.tp_group, CollectiveOp::all_gather, tensor), comm(lay_.tp_group, CollectiveOp::reduce_scatter, tensor)};
}

Builder::TpExposure Builder::tp_exposure(const LayerGroup& l, bool forward, bool gradients, int n_ag, int n_rs) const {
  if (!lay_.overlap_tensor_parallel) return {n_ag, n_rs};
  if (forward && !gradients && !lay_.evaluation_overlaps_all_gathers) return {n_ag, 0};
  // Userbuffers overlap TP only under sequence parallelism: without it the keys below say nothing.
  if (!lay_.sequence_parallel) return {};
  const auto gemms = static_cast<std::size_t>(std::max(0, l.tp_all_gathers));
  int plain = 0;
  for (std::size_t i = 0; i < std::min(gemms, l.tp_column_gemms.size()); ++i) plain += lay_.not_overlapped.holds(l.tp_column_gemms[i]);
  if (forward) return {std::min(plain, n_ag), 0};
  if (!l.tp_gemms_frozen) return {};
  return {0, std::min(lay_.pipelined_dgrad_reduce_scatters ? plain : n_rs, n_rs)};
}

Builder::EvaluationComm Builder::evaluation_comm(const LayerGroup& l) {
  const auto [ag, rs] = tp_comms(l);
  if (rs < 0) return {};
  const int n_ag = ag < 0 ? 0 : l.tp_all_gathers;
  const TpExposure e = tp_exposure(l, true, false, n_ag, l.tp_reduce_scatters);
  EvaluationComm c;
  if (e.gathers_before > 0) c.before.push_back({static_cast<double>(e.gathers_before), select_time_[static_cast<std::size_t>(ag)]});
  if (e.scatters_after > 0) c.after.push_back({static_cast<double>(e.scatters_after), select_time_[static_cast<std::size_t>(rs)]});
  return c;
}

MicroBatchForward Builder::evaluation_forward(const std::vector<int>& ks) {
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

OpDeps Builder::layer_pass(int stage, int k, int mb, bool forward, OpDeps after) {
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
  OpDeps next;
  const auto tp_ops = [&](int id, int count, const OpDeps& deps) {
    std::uint32_t last = 0;
    for (int i = 0; i < count; ++i) last = comm_op(Phase::tp_comm, StreamKind::tp, stage, k, mb, id, deps);
    return last;  // the stream runs them in order: the last one ends last
  };
  if (kv >= 0) next.push_back(comm_op(Phase::cp_comm, StreamKind::cp, stage, k, mb, kv, after));
  // On the TP stream, which runs its ops in creation order: the all-gathers the compute waits
  // for, then those beside it, then the reduce-scatters waiting for it, so that nothing beside the
  // compute queues behind them.
  const TpExposure e = rs >= 0 ? tp_exposure(l, forward, true, n_ag, n_rs) : TpExposure{};
  c.deps = e.gathers_before > 0 ? OpDeps{tp_ops(ag, e.gathers_before, after)} : after;
  last_compute_[static_cast<std::size_t>(stage)] = add(std::move(c));
  const std::uint32_t computed = last_compute_[static_cast<std::size_t>(stage)];
  const int gathers_beside = n_ag - e.gathers_before, scatters_beside = n_rs - e.scatters_after;
  const std::uint32_t gathered = gathers_beside > 0 ? tp_ops(ag, gathers_beside, after) : 0;
  const std::uint32_t scattered = scatters_beside > 0 ? tp_ops(rs, scatters_beside, after) : 0;
  next.push_back(e.scatters_after > 0 ? tp_ops(rs, e.scatters_after, {computed}) : computed);
  if (gathers_beside > 0) next.push_back(gathered);
  if (scatters_beside > 0) next.push_back(scattered);
  return next;
}

}  // namespace sp::models::detail
