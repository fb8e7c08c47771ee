// The builder behind build_step_graph, declared here because two files define it:
// step_graph.cpp lays out the step (stages, pipeline order, gradient buckets, the optimizer) and
// step_graph_layers.cpp one layer's pass and the communication it issues, so that each reads on
// its own. Internal to models/step: nothing outside step_graph*.cpp includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/compute/compute_model.hpp"
#include "models/compute/launch.hpp"
#include "models/network/platform.hpp"
#include "models/network/topology.hpp"
#include "models/step/step_graph.hpp"
#include "models/workloads/parallelism.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"

namespace sp::models::detail {

struct Instance {
  const LayerGroup* layer = nullptr;
  std::string name;
  LayerCompute compute;
  double trainable = 0;  // parameters whose gradients this rank reduces (after TP)
  Duration attention_forward;  // its attention ops' forward: what selective recompute runs again
  Duration attention_memory_bound;  // of which streaming (an unfused attention's element-wise kernels, ring merges)
};

class Builder {
 public:
  Builder(const Workload& w, const Platform& p, const ParallelLayout& lay) : w_(w), p_(p), lay_(lay) {}

  StepGraph build();
  // A lower bound of build()'s step: each stage's compute, and the pipeline's fill and drain
  // (step_compute_bound).
  Duration compute_bound();

 private:
  std::uint32_t add(GraphOp op) {
    g_.ops.push_back(std::move(op));
    return static_cast<std::uint32_t>(g_.ops.size() - 1);
  }
  // The communication of `op` over `group` (memoised: layers repeat the same collectives).
  int comm(const Group& group, CollectiveOp op, Bytes bytes);
  int transfer(Bytes bytes);  // to a pipeline neighbour
  std::uint32_t comm_op(Phase phase, StreamKind stream, int stage, int layer, int mb, int c,
                        OpDeps deps) {
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
  // The layer instances with their compute (inst_), dispatched from the host where it is eager.
  void make_instances();
  // Which layer instances each of the PP x v parts holds, balanced by compute.
  std::vector<std::vector<int>> split() const;
  // What an instance's backward costs its stage: nothing for a frozen stem; with the forward
  // again under full recompute, the attention's under selective.
  Duration backward_work(const Instance& in) const;
  // Full recompute reruns a checkpointed layer's forward before its backward.
  bool reruns_forward(const LayerGroup& l) const { return lay_.recompute == Recompute::full && l.checkpointed; }
  // The layer's TP all-gather and reduce-scatter (comm ids), -1 where it has none; without
  // sequence parallelism no all-gather, and an all-reduce of the same tensor in the reduce-scatter's place.
  std::pair<int, int> tp_comms(const LayerGroup& l);
  // Of a pass's TP collectives (n_ag all-gathers, n_rs reduce-scatters), how many its compute waits
  // for and how many wait for its compute; the rest run beside it. Where TP does not overlap
  // compute, all of them. Else, forward: the all-gathers of GEMMs run outside userbuffers
  // (ParallelLayout::not_overlapped), or all of them without gradients where their overlap needs
  // gradients (evaluation_overlaps_all_gathers). Backward: the input-gradient reduce-scatters that
  // run in bulk (not pipelined, or outside userbuffers) where no weight-gradient GEMM hides them
  // (LayerGroup::tp_gemms_frozen). Both are userbuffers settings, so under sequence parallelism
  // only.
  struct TpExposure {
    int gathers_before = 0, scatters_after = 0;
  };
  TpExposure tp_exposure(const LayerGroup& l, bool forward, bool gradients, int n_ag, int n_rs) const;
  // The TP communication an evaluation's forward of the layer waits for (tp_exposure without
  // gradients), as runs on its stream before and after its compute. Closed-form times at every
  // fidelity (the evaluation is not replayed on the links).
  struct EvaluationComm {
    std::vector<KernelRun> before, after;
  };
  EvaluationComm evaluation_comm(const LayerGroup& l);
  // One micro-batch's evaluation forward of the stage holding `ks`: its compute as training
  // counts it, and what it waits for besides: the communication above and, where the evaluation
  // dispatches eagerly, the host (models/compute/launch.hpp), from an idle host and device.
  MicroBatchForward evaluation_forward(const std::vector<int>& ks);
  // One layer instance's pass for one micro-batch: its compute with the TP and CP communication
  // around or beside it; returns the ops the next layer waits for.
  OpDeps layer_pass(int stage, int k, int mb, bool forward, OpDeps after);

  const Workload& w_;
  const Platform& p_;
  const ParallelLayout& lay_;
  StepGraph g_;
  std::vector<Instance> inst_;
  std::vector<Duration> select_time_;
  std::map<std::tuple<const Group*, int, double>, int> memo_;
  std::vector<std::uint32_t> last_compute_;  // per stage: the compute op just added
};

}  // namespace sp::models::detail
