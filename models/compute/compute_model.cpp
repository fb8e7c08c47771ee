#include "models/compute/compute_model.hpp"

namespace sp::models {

Duration kernel_time(const Kernel& k, const Accelerator& a) {
  switch (k.kind) {
    case Kernel::Kind::gemm: return scale(gemm_time(a, k.dtype, k.shape), k.count);
    case Kernel::Kind::attention: {
      // Each product streams like a GEMM of its shape; the fused kernel pays one latency. Its
      // exponentials take the multi-function units' time, beside the products or after them.
      const Duration latency = a.compute.kernel_latency;
      const KernelCosts::AttentionEfficiency& e =
          k.softmax_overlapped ? a.compute.attention_overlapped : a.compute.attention_serial;
      const Duration products =
          scale(gemm_time_modelled(a, k.dtype, k.shape) - latency, k.work / (k.backward ? e.backward : e.forward));
      const Duration softmax = a.special_function_rate.value() > 0
                                   ? seconds(k.exponentials / (a.special_function_rate.value() * a.compute_clock))
                                   : Duration::zero();
      const Duration body = k.softmax_overlapped ? max(products, softmax) : products + softmax;
      return scale(latency + body, k.count);
    }
    case Kernel::Kind::stream: return stream_time(a, k.bytes, k.count, k.access, k.blocks);
  }
  return Duration::zero();
}

LayerCompute layer_compute(const LayerGroup& l, const Workload& w, const Accelerator& a, Shard s,
                           const std::string& precision) {
  s = shard_for(l, s);
  s.family = a.family;
  const std::string dtype = precision.empty() ? w.precision : precision;
  LayerCompute out;
  for (Pass pass : {Pass::forward, Pass::backward}) {
    PassCompute& pc = pass == Pass::forward ? out.forward : out.backward;
    Duration as_run, element_wise, streaming, streaming_as_run;
    for (const Op& op : l.ops) {
      for (const Kernel& k : expand(op, s, pass, dtype)) {
        const Duration t = kernel_time(k, a);
        // Element-wise kernels the file describes as plain PyTorch runs them; the rest (GEMMs,
        // attention, kernels described as the implementation runs them) as they are.
        const bool stream = k.kind == Kernel::Kind::stream && !k.as_run;
        (stream ? element_wise : as_run) += t;
        if (k.kind == Kernel::Kind::stream) {
          const Duration body = max(Duration{}, t - scale(a.compute.kernel_latency, k.count));
          (stream ? streaming : streaming_as_run) += body;
        }
        pc.model_flops += k.model_flops;
        pc.kernels += k.count;
        // Fusion leaves 1/software_efficiency of the element-wise kernels, each as long as before.
        const double count = stream ? k.count / w.software_efficiency : k.count;
        const Duration total = scale(t, 1.0 / (stream ? w.software_efficiency * a.efficiency_scale : a.efficiency_scale));
        if (count > 0) pc.runs.push_back(KernelRun{count, scale(total, 1.0 / count)});
      }
    }
    pc.time = scale(as_run, 1.0 / a.efficiency_scale) +
              scale(element_wise, 1.0 / (w.software_efficiency * a.efficiency_scale));
    pc.memory_bound = scale(streaming, 1.0 / (w.software_efficiency * a.efficiency_scale)) +
                      scale(streaming_as_run, 1.0 / a.efficiency_scale);
  }
  return out;
}

void dispatch_from_host(const std::vector<LayerCompute*>& layers, Duration dispatch) {
  IssueState s;
  const auto pass = [&](PassCompute& p) {
    const Duration before = s.device;
    issue(s, p.runs, dispatch);
    p.time = s.device - before;
  };
  for (LayerCompute* l : layers) pass(l->forward);
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) pass((*it)->backward);
}

namespace {
thread_local InstanceComputeMemo* active_memo = nullptr;

std::vector<LayerCompute> compute_instances(const Workload& w, const Accelerator& a, const ParallelLayout& layout) {
  const Shard shard = shard_of(w, layout);
  std::vector<LayerCompute> out;
  for (const LayerGroup& l : w.layers) out.insert(out.end(), static_cast<std::size_t>(l.repeat), layer_compute(l, w, a, shard));
  if (w.dispatch_per_kernel > Duration::zero()) {
    std::vector<LayerCompute*> passes;
    for (LayerCompute& c : out) passes.push_back(&c);
    dispatch_from_host(passes, w.dispatch_per_kernel);
  }
  return out;
}
}  // namespace

std::vector<LayerCompute> instance_computes(const Workload& w, const Accelerator& a, const ParallelLayout& layout) {
  if (const auto* known = InstanceComputeMemo::lookup(w, a, layout)) return *known;
  return compute_instances(w, a, layout);
}

InstanceComputeMemo::InstanceComputeMemo(const Workload& w, const Accelerator& a) : w_(w), a_(a), outer_(active_memo) {
  active_memo = this;
}

InstanceComputeMemo::~InstanceComputeMemo() { active_memo = outer_; }

const std::vector<LayerCompute>* InstanceComputeMemo::lookup(const Workload& w, const Accelerator& a,
                                                             const ParallelLayout& layout) {
  InstanceComputeMemo* m = active_memo;
  if (m == nullptr || &m->w_ != &w || &m->a_ != &a) return nullptr;
  // shard_of's fields of the layout: all compute_instances reads of it.
  const auto key = std::make_tuple(layout.micro_batch, layout.tp, layout.cp, layout.sequence_parallel);
  auto it = m->memo_.find(key);
  if (it == m->memo_.end()) it = m->memo_.emplace(key, compute_instances(w, a, layout)).first;
  return &it->second;
}


}  // namespace sp::models
