#include "models/step/step_model.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "models/step/stragglers.hpp"

namespace sp::models {

namespace {

// The chunk fidelity replays each collective rank by rank, alone, and the graph runs with those
// times as at the analytic fidelity.
void use_chunk_times(StepGraph& g, const Platform& p) {
  std::vector<Duration> time(g.comms.size());
  for (std::size_t c = 0; c < g.comms.size(); ++c) {
    const GraphComm& gc = g.comms[c];
    const bool collective = gc.terms.algorithm == Algorithm::ring || gc.terms.algorithm == Algorithm::tree;
    time[c] = collective ? time_collective(p, gc.group, gc.terms.op, gc.bytes,
                                           {gc.terms.algorithm, gc.terms.protocol}, Fidelity::chunk)
                               .time
                         : gc.terms.time(gc.bytes);
  }
  for (GraphOp& op : g.ops) {
    if (op.comm >= 0) op.work = time[static_cast<std::size_t>(op.comm)];
  }
}

}  // namespace

// Layer names come from workload files.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

// The stage whose compute stream ends last.
int last_stage(const StepGraph& g, const Execution& x) {
  int stage = 0;
  SimTime latest;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].stream == StreamKind::compute && x.spans[i].end >= latest) {
      latest = x.spans[i].end;
      stage = g.ops[i].stage;
    }
  }
  return stage;
}

// The time within [from, to) that `spans` (one stream's, in start order) cover.
Duration covered(const std::vector<OpSpan>& spans, SimTime from, SimTime to) {
  Duration sum;
  auto it = std::lower_bound(spans.begin(), spans.end(), from, [](const OpSpan& s, SimTime t) { return s.end <= t; });
  for (; it != spans.end() && it->start < to; ++it) sum += min(it->end, to) - max(it->start, from);
  return sum;
}

void attribute(const StepGraph& g, const Execution& x, StepResult& r) {
  const int stage = last_stage(g, x);
  // TP and CP collectives of the stage, per stream: a wait is exposed communication only while
  // one of them ran; before that (a TP all-gather waiting for a pipeline receive) it is bubble.
  std::vector<OpSpan> tp, cp;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].stage != stage) continue;
    if (g.ops[i].stream == StreamKind::tp) tp.push_back(x.spans[i]);
    if (g.ops[i].stream == StreamKind::cp) cp.push_back(x.spans[i]);
  }
  SimTime free;  // when the compute stream became free
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    if (op.stage != stage) continue;
    const OpSpan& span = x.spans[i];
    const Duration busy = span.end - span.start;
    switch (op.stream) {
      case StreamKind::tp:
      case StreamKind::cp: r.tensor_parallel += busy; break;
      case StreamKind::dp: r.communication += busy; break;
      case StreamKind::pp: r.pipeline_transfer += busy; break;
      case StreamKind::compute: break;
    }
    if (op.stream != StreamKind::compute) continue;
    (op.phase == Phase::forward ? r.forward : op.phase == Phase::backward ? r.backward : r.optimizer) += op.work - op.straggle;
    r.straggler += op.straggle;
    r.interference += busy - op.work;
    const SimTime idle_from = free;
    const Duration wait = span.start - free;
    free = span.end;
    if (wait <= Duration::zero()) continue;
    // The wait belongs to the input that ended last.
    Phase cause = Phase::pp_send;
    SimTime latest;
    for (std::uint32_t d : op.deps) {
      if (x.spans[d].end >= latest) {
        latest = x.spans[d].end;
        cause = g.ops[d].phase;
      }
    }
    switch (cause) {
      case Phase::tp_comm:
      case Phase::cp_comm: {
        const Duration exposed = min(wait, max(covered(tp, idle_from, span.start), covered(cp, idle_from, span.start)));
        r.exposed_tensor_parallel += exposed;
        r.exposed_communication += exposed;
        r.bubble += wait - exposed;
        break;
      }
      case Phase::dp_comm:
      case Phase::param_gather: r.exposed_communication += wait; break;
      default: r.bubble += wait; break;  // a transfer from (or work on) another stage
    }
  }
  r.bubble += x.end - free;  // other stages still running after this one's last operation
}

void critical_path(const StepGraph& g, const Execution& x, StepResult& r) {
  // Each stream's previous operation, in graph order.
  std::vector<std::int64_t> previous(g.ops.size(), -1);
  std::vector<std::vector<std::int64_t>> last(static_cast<std::size_t>(g.stages),
                                              std::vector<std::int64_t>(kStreamKinds, -1));
  std::int64_t cur = -1;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    auto& l = last[static_cast<std::size_t>(g.ops[i].stage)][static_cast<std::size_t>(g.ops[i].stream)];
    previous[i] = l;
    l = static_cast<std::int64_t>(i);
    if (cur < 0 || x.spans[i].end > x.spans[static_cast<std::size_t>(cur)].end) cur = static_cast<std::int64_t>(i);
  }
  while (cur >= 0) {
    const auto i = static_cast<std::size_t>(cur);
    r.critical[static_cast<std::size_t>(g.ops[i].phase)] += x.spans[i].end - x.spans[i].start;
    std::int64_t next = previous[i];
    for (std::uint32_t d : g.ops[i].deps) {
      if (next < 0 || x.spans[d].end > x.spans[static_cast<std::size_t>(next)].end) next = d;
    }
    cur = next;
  }
}

}  // namespace

double straggler_factor(const Platform& p, int accelerators) {
  return p.rank_speed_sd() * max_of_normals(accelerators).mean;
}

double straggler_factor(const Platform& p, int accelerators, const std::vector<Duration>& stage_compute) {
  if (stage_compute.size() <= 1) return straggler_factor(p, accelerators);
  // A pipeline runs at the pace of its slowest stage, and each stage at that of the slowest of its
  // ranks (TP and CP collectives every layer, the replicas' gradient reduction at the end): the
  // step pays E[max over stages s and their N / PP ranks of c_s (1 + sigma X)] over the longest
  // c_s. A stage shorter than the longest (the LM head's extra work on the last) hides a slow GPU
  // of its own until that GPU overtakes the longest stage; equal stages give sigma E[M_N] again.
  // That the heaviest stage sets the pace is what traces of production jobs show: the last
  // stage's imbalance is the main slowdown of 39 % of ByteDance's jobs of 128 GPUs or more (Lin et
  // al., "Understanding Stragglers in Large Model Training Using What-if Analysis", OSDI'25,
  // arXiv 2505.05713, section 5.2), and Llama 3 moved a layer off its first and last stages for
  // it (Llama Team, arXiv 2407.21783, section 3.3.2).
  const Duration longest = *std::max_element(stage_compute.begin(), stage_compute.end());
  if (!(longest > Duration::zero())) return 0.0;
  const long long per_stage = accelerators / static_cast<long long>(stage_compute.size());
  std::map<double, long long> groups;  // by relative compute, so equal stages are one group
  for (Duration c : stage_compute) groups[c / longest] += per_stage;
  std::vector<RankGroup> g;
  for (const auto& [relative, ranks] : groups) g.push_back({relative, ranks});
  return expected_slowest_pace(g, p.rank_speed_sd()) - 1.0;
}

Duration step_lower_bound(const Workload& w, const Platform& p, const ParallelLayout& lay, int accelerators) {
  const double slower = straggler_factor(p, std::max(1, accelerators / lay.pp));
  return scale(step_compute_bound(w, p, lay), 1.0 + slower) + w.host_per_step;
}

void add_stragglers(StepGraph& g, const Platform& p, int accelerators) {
  // The slowest rank's compute: every compute operation longer by the expected pace of the
  // slowest of N, its stage's base time counted (the fill and drain pay it too: a small excess).
  std::vector<Duration> stage_compute(static_cast<std::size_t>(g.stages));
  for (const GraphOp& op : g.ops) {
    if (op.comm < 0) stage_compute[static_cast<std::size_t>(op.stage)] += op.work;
  }
  const double slower = straggler_factor(p, accelerators, stage_compute);
  for (GraphOp& op : g.ops) {
    if (op.comm >= 0 || !(slower > 0)) continue;
    op.straggle = scale(op.work, slower);
    op.work += op.straggle;
  }
}

namespace {

// a + (b - a) k: one more micro-batch's share, k more times.
Duration extend(Duration a, Duration b, double k) { return a + scale(b - a, k); }

// The step of m micro-batches from those of kMaxSimulatedMicroBatches and one more: past the
// pipeline's fill, every micro-batch adds the same time (gradient accumulation repeats the same
// forward and backward; 1F1B's steady state one slot of its slowest stage), so the step and each
// of its parts are linear in m and the graph need not hold m copies of the model.
StepResult extrapolate(const StepResult& a, const StepResult& b, int simulated, int group, int m) {
  const double k = (m - simulated) / static_cast<double>(group);
  StepResult r = a;
  for (Duration StepResult::*f : {&StepResult::step, &StepResult::forward, &StepResult::backward, &StepResult::optimizer,
                                  &StepResult::interference, &StepResult::bubble, &StepResult::exposed_tensor_parallel,
                                  &StepResult::exposed_communication, &StepResult::straggler, &StepResult::tensor_parallel,
                                  &StepResult::communication, &StepResult::pipeline_transfer, &StepResult::jittered_compute}) {
    r.*f = extend(a.*f, b.*f, k);
  }
  for (std::size_t i = 0; i < r.critical.size(); ++i) r.critical[i] = extend(a.critical[i], b.critical[i], k);
  // FLOPs are m times one micro-batch's exactly; the efficiency over the extrapolated compute.
  const Duration compute = r.forward + r.backward, compute_a = a.forward + a.backward;
  if (compute > Duration::zero()) r.compute_efficiency = a.compute_efficiency * (m / static_cast<double>(simulated)) * (compute_a / compute);
  return r;
}

// The step with every micro-batch in the graph.
StepResult simulate_whole(const Workload& w, const Platform& p, const ParallelLayout& lay, int accelerators,
                          Fidelity fidelity, StepTrace* trace) {
  StepGraph g = build_step_graph(w, p, lay);
  if (fidelity == Fidelity::chunk) use_chunk_times(g, p);
  add_stragglers(g, p, accelerators);
  const Execution x = execute_step(g, p, fidelity == Fidelity::flow ? Fidelity::flow : Fidelity::analytic);
  StepResult r;
  attribute(g, x, r);
  critical_path(g, x, r);
  r.buckets = g.buckets;
  r.events = x.events;
  r.evaluation_forward = g.evaluation_forward;
  r.jittered_compute = g.compute_per_step;
  const Duration compute = r.forward + r.backward;
  const double peak = p.accelerator.training_peak(w.precision)->value();
  r.compute_efficiency = compute > Duration::zero() ? g.flops_per_step.value() / (to_seconds(compute) * peak) : 0;
  // The eager host path runs before the step's graph-captured work can start: serial with it.
  r.host = w.host_per_step;
  r.step = (x.end - SimTime::zero()) + r.host;
  if (trace) *trace = StepTrace{std::move(g), x, r.host};
  return r;
}

}  // namespace

namespace {

// The micro-batches simulate_step simulates whole, and its group (the step grows a group at a
// time: the interleaved schedule runs micro-batches in groups of PP).
std::pair<int, int> simulated_micro_batches(const ParallelLayout& lay) {
  const int group = lay.virtual_stages > 1 ? lay.pp : 1;
  return {(kMaxSimulatedMicroBatches + group - 1) / group * group, group};
}

}  // namespace

Duration step_graph_lower_bound(const Workload& w, const Platform& p, const ParallelLayout& lay, int accelerators,
                                Fidelity fidelity) {
  // Past the simulated micro-batches the step is extrapolated from those by its steady state's
  // time a micro-batch, which is at least the busiest stage's work: the graph's bound at the
  // simulated ones, and what the compute bound grows by from there (its slope, that work or
  // the last stage's, is no steeper).
  ParallelLayout first = lay;
  first.micro_batches = std::min(lay.micro_batches, simulated_micro_batches(lay).first);
  StepGraph g = build_step_graph(w, p, first);
  add_stragglers(g, p, accelerators);
  const Duration compute = step_lower_bound(w, p, lay, accelerators);
  const Duration more =
      first.micro_batches == lay.micro_batches ? Duration{} : compute - step_lower_bound(w, p, first, accelerators);
  return max(compute, uncontended_end(g, fidelity == Fidelity::analytic) + w.host_per_step + more);
}

StepResult simulate_step(const Workload& w, const Platform& p, const ParallelLayout& lay, int accelerators,
                         Fidelity fidelity, StepTrace* trace) {
  const auto [simulated, group] = simulated_micro_batches(lay);
  if (lay.micro_batches <= simulated) return simulate_whole(w, p, lay, accelerators, fidelity, trace);
  ParallelLayout shorter = lay, longer = lay;
  shorter.micro_batches = simulated;
  longer.micro_batches = simulated + group;
  // The trace, where asked for, is the simulated one: the step's first micro-batches.
  const StepResult a = simulate_whole(w, p, shorter, accelerators, fidelity, trace);
  const StepResult b = simulate_whole(w, p, longer, accelerators, fidelity, nullptr);
  return extrapolate(a, b, simulated, group, lay.micro_batches);
}

std::string describe_critical_path(const StepResult& r) {
  Duration total;
  for (const Duration& d : r.critical) total += d;
  std::vector<std::pair<Duration, int>> parts;
  for (int p = 0; p < kPhases; ++p) parts.emplace_back(r.critical[static_cast<std::size_t>(p)], p);
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out;
  for (const auto& [d, p] : parts) {
    const double share = total > Duration::zero() ? d / total : 0;
    if (share < 0.01) continue;
    out += fmt::format("{}{} {:.0f} %", out.empty() ? "" : "; ", phase_name(static_cast<Phase>(p)), 100 * share);
  }
  return out;
}

std::string chrome_trace(const StepTrace& t) {
  const StepGraph& g = t.graph;
  // The host's time per step comes first (the eager path before the graph-captured work): its own
  // process, and every operation after it.
  const double host_us = to_seconds(t.host) * 1e6;
  std::string j = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  j += fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"host\"}}}},\n", g.stages);
  if (host_us > 0) {
    j += fmt::format("{{\"ph\":\"X\",\"name\":\"host per step\",\"cat\":\"host\",\"pid\":{},\"tid\":0,\"ts\":0.000,\"dur\":{:.3f}}},\n",
                     g.stages, host_us);
  }
  for (int s = 0; s < g.stages; ++s) {
    j += fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"stage {}\"}}}},\n", s, s);
    for (int k = 0; k < kStreamKinds; ++k) {
      j += fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}},\n", s,
                       k, stream_name(static_cast<StreamKind>(k)));
    }
  }
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    const OpSpan& sp = t.execution.spans[i];
    std::string name = phase_name(op.phase);
    if (op.layer >= 0) name += " " + g.layers[static_cast<std::size_t>(op.layer)];
    if (op.micro_batch >= 0) name += fmt::format(" mb{}", op.micro_batch);
    const std::string args =
        op.straggle > Duration::zero() ? fmt::format(",\"args\":{{\"straggler_us\":{:.3f}}}", to_seconds(op.straggle) * 1e6) : "";
    j += fmt::format("{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"dur\":{:.3f}{}}}{}\n",
                     json_string(name), phase_name(op.phase), op.stage, static_cast<int>(op.stream),
                     host_us + to_seconds(sp.start - SimTime::zero()) * 1e6, to_seconds(sp.end - sp.start) * 1e6, args,
                     i + 1 < g.ops.size() ? "," : "");
  }
  return j + "]}\n";
}

}  // namespace sp::models
