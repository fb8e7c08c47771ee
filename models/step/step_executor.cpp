#include "models/step/step_executor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>

#include "sim/core/engine.hpp"

namespace sp::models {

namespace {

constexpr double kSlowest = 0.05;  // compute keeps at least this share of its rate
constexpr std::uint32_t kNone = 0xffffffffu;

}  // namespace

double compute_rate(double sm_share, double memory_load, double memory_share, double streaming_efficiency) {
  const double sm_left = std::max(kSlowest, 1.0 - sm_share);
  // HBM delivers at most f of its peak to any mix of streams (a streaming kernel alone reaches
  // it), shared in proportion to demand: a kernel wanting all of it beside traffic wanting u of
  // the peak gets f / (f + u) of it, so it takes 1 + u / f times as long.
  const double memory_stretch = 1.0 + std::max(0.0, memory_load) / std::max(kSlowest, streaming_efficiency);
  return 1.0 / ((1.0 - memory_share) / sm_left + memory_share * memory_stretch);
}

namespace {

class Executor {
 public:
  Executor(const StepGraph& g, const Platform& p, Fidelity f, Engine& engine, FlowNetwork& net,
           std::vector<NetworkLinks> links)
      : g_(g), p_(p), f_(f), engine_(engine), net_(net), links_(std::move(links)) {
    // Who waits for each op, in one array by op (first_dependent_[i] .. [i + 1]).
    const std::size_t n = g_.ops.size();
    first_dependent_.assign(n + 1, 0);
    for (const GraphOp& op : g_.ops) {
      for (std::uint32_t d : op.deps) ++first_dependent_[d + 1];
    }
    for (std::size_t i = 0; i < n; ++i) first_dependent_[i + 1] += first_dependent_[i];
    dependents_.resize(first_dependent_[n]);
    std::vector<std::uint32_t> fill(first_dependent_.begin(), first_dependent_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      for (std::uint32_t d : g_.ops[i].deps) dependents_[fill[d]++] = i;
    }
  }

  // Plays the graph once from now; `done` runs when its last operation has ended.
  void start(std::function<void()> done) {
    done_ = std::move(done);
    finished_ = 0;
    stages_.assign(static_cast<std::size_t>(g_.stages), Stage{});
    waiting_.assign(g_.ops.size(), 0);
    load_.assign(g_.ops.size(), 0);
    release_.assign(g_.ops.size(), std::nullopt);
    out_.spans.assign(g_.ops.size(), OpSpan{});
    for (std::uint32_t i = 0; i < g_.ops.size(); ++i) {
      const GraphOp& op = g_.ops[i];
      stream(op).ops.push_back(i);
      waiting_[i] = static_cast<std::uint32_t>(op.deps.size());
    }
    if (g_.ops.empty()) {
      if (done_) done_();
      return;
    }
    for (int s = 0; s < g_.stages; ++s) {
      for (int k = 0; k < kStreamKinds; ++k) try_start(stages_[static_cast<std::size_t>(s)].streams[static_cast<std::size_t>(k)]);
    }
  }

  bool complete() const { return finished_ == g_.ops.size(); }
  // The last start's spans and end.
  Execution result() const {
    Execution x = out_;
    for (const OpSpan& s : x.spans) x.end = max(x.end, s.end);
    return x;
  }

 private:
  struct Stream {
    std::vector<std::uint32_t> ops;  // in graph order
    std::size_t head = 0;
    bool busy = false;
  };
  struct Stage {
    std::array<Stream, kStreamKinds> streams;
    int held = 0;                     // SMs running communication
    double memory = 0;                // share of HBM bandwidth communication takes
    std::optional<std::uint32_t> compute;  // the compute op running
    double remaining_ps = 0;          // of its work, at the full rate
    double rate = 1;
    SimTime since;
    std::optional<EventId> end;
  };

  Stage& stage(const GraphOp& op) { return stages_[static_cast<std::size_t>(op.stage)]; }
  Stream& stream(const GraphOp& op) { return stage(op).streams[static_cast<std::size_t>(op.stream)]; }

  void try_start(Stream& s) {
    if (s.busy || s.head == s.ops.size() || waiting_[s.ops[s.head]] > 0) return;
    start(s.ops[s.head]);
  }

  void start(std::uint32_t i) {
    const GraphOp& op = g_.ops[i];
    stream(op).busy = true;
    out_.spans[i].start = engine_.now();
    Stage& st = stage(op);
    if (op.comm < 0) {
      st.compute = i;
      st.remaining_ps = static_cast<double>(op.work.ps());
      st.rate = rate(st);
      st.since = engine_.now();
      schedule_compute_end(st);
      return;
    }
    const GraphComm& c = g_.comms[static_cast<std::size_t>(op.comm)];
    // Its HBM traffic spread over the time it takes alone (exact at the analytic and chunk
    // fidelities); a transfer loads the receiving stage as much as the sending one.
    load_[i] = op.work > Duration{} ? to_seconds(c.memory_time) / to_seconds(op.work) : 0;
    hold_ends(op, sms(c), load_[i]);
    // A flow slowed by others moves the same bytes over a longer time: its traffic is charged at
    // the rate alone for as long as that takes, not for the whole of its longer run.
    if (f_ == Fidelity::flow && load_[i] > 0) {
      release_[i] = engine_.schedule_after(op.work, [this, i] {
        release_[i].reset();
        release(i, 0);
      });
    }
    if (f_ == Fidelity::flow) {
      const NetworkLinks* peer = op.peer >= 0 ? &links_[static_cast<std::size_t>(op.peer)] : nullptr;
      start_collective_flows(engine_, net_, links_[static_cast<std::size_t>(op.stage)], p_, c.terms, c.bytes,
                             [this, i] { finish(i); }, peer, &c.group);
    } else {
      engine_.schedule_after(op.work, [this, i] { finish(i); });
    }
  }

  int sms(const GraphComm& c) const { return p_.topology.tiers[c.tier].communication_sms; }
  // Communication op `op` holds `sms` and `memory` on its stage and, a transfer, its peer's.
  void hold_ends(const GraphOp& op, int sms, double memory) {
    hold(stage(op), sms, memory);
    if (op.peer >= 0) hold(stages_[static_cast<std::size_t>(op.peer)], sms, memory);
  }
  // Communication op `i` gives back `sms` and whatever HBM traffic it still holds, in one change
  // of each stage's rate.
  void release(std::uint32_t i, int sms) {
    const double memory = load_[i];
    load_[i] = 0;
    hold_ends(g_.ops[i], -sms, -memory);
  }
  // The running compute op's rate: its SM-bound share at the SMs left, its memory-bound share at
  // the HBM bandwidth left, one after the other (compute_rate).
  double rate(const Stage& st) const {
    const double share = st.compute ? g_.ops[*st.compute].memory_share : 0;
    return compute_rate(static_cast<double>(st.held) / p_.accelerator.compute.parallel_units, st.memory, share,
                        p_.accelerator.compute.memory_efficiency);
  }

  // Communication of the stage holds `sms` more (or, negative, fewer) SMs and `memory` more of the
  // HBM bandwidth: the running compute kernel keeps what it has done and goes on at the new rate.
  void hold(Stage& st, int sms, double memory) {
    if (sms == 0 && memory == 0) return;
    st.held += sms;
    st.memory = std::max(0.0, st.memory + memory);
    if (!st.compute) return;
    st.remaining_ps -= static_cast<double>((engine_.now() - st.since).ps()) * st.rate;
    st.since = engine_.now();
    st.rate = rate(st);
    schedule_compute_end(st);
  }

  void schedule_compute_end(Stage& st) {
    if (st.end) engine_.cancel(*st.end);
    const auto wait = static_cast<std::int64_t>(std::ceil(std::max(0.0, st.remaining_ps) / st.rate - 1e-6));
    const std::uint32_t i = *st.compute;
    st.end = engine_.schedule_after(Duration::from_ps(wait), [this, i] {
      Stage& s = stage(g_.ops[i]);
      s.end.reset();
      s.compute.reset();
      finish(i);
    });
  }

  void finish(std::uint32_t i) {
    const GraphOp& op = g_.ops[i];
    out_.spans[i].end = engine_.now();
    ++finished_;
    Stream& s = stream(op);
    s.busy = false;
    ++s.head;
    if (op.comm >= 0) {
      if (release_[i]) {
        engine_.cancel(*release_[i]);
        release_[i].reset();
      }
      release(i, sms(g_.comms[static_cast<std::size_t>(op.comm)]));
    }
    for (std::uint32_t e = first_dependent_[i]; e < first_dependent_[i + 1]; ++e) {
      const std::uint32_t d = dependents_[e];
      if (--waiting_[d] == 0) try_start(stream(g_.ops[d]));
    }
    try_start(s);
    if (complete() && done_) {
      auto done = std::move(done_);
      done_ = nullptr;
      done();
    }
  }

  const StepGraph& g_;
  const Platform& p_;
  Fidelity f_;
  Engine& engine_;
  FlowNetwork& net_;
  std::vector<NetworkLinks> links_;  // per pipeline stage
  std::vector<Stage> stages_;
  std::vector<std::uint32_t> waiting_;
  std::vector<double> load_;                     // per communication op: the HBM share it holds
  std::vector<std::optional<EventId>> release_;  // flow: when it stops holding it
  std::vector<std::uint32_t> first_dependent_, dependents_;
  Execution out_;
  std::size_t finished_ = 0;
  std::function<void()> done_;
};

}  // namespace

Execution execute_step(const StepGraph& graph, const Platform& platform, Fidelity fidelity) {
  Engine engine;
  FlowNetwork net(engine);
  // Each pipeline stage's ranks have links of their own (its own GPUs' NVLink ports and NICs):
  // stages share no link, and a pipeline send crosses the sender's and the receiver's.
  std::vector<NetworkLinks> links;
  if (fidelity == Fidelity::flow) {
    for (int s = 0; s < graph.stages; ++s) links.push_back(add_network_links(net, platform));
  }
  Executor x(graph, platform, fidelity, engine, net, std::move(links));
  x.start(nullptr);
  engine.run();
  if (!x.complete()) throw std::logic_error("step graph deadlock: an operation never became ready");
  Execution out = x.result();
  out.events = engine.events_processed();
  return out;
}

Duration uncontended_end(const StepGraph& g, bool communication) {
  // A longest path over the dependencies and each stream's order (Kahn's algorithm: a pipeline
  // receive may name a send created later), its edges in one array by source op.
  const auto n = static_cast<std::uint32_t>(g.ops.size());
  std::vector<std::uint32_t> before(n, kNone), first(n + 1, 0), waiting(n, 0);
  std::vector<std::array<std::uint32_t, kStreamKinds>> last(static_cast<std::size_t>(g.stages));
  for (auto& l : last) l.fill(kNone);
  for (std::uint32_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops[i];
    std::uint32_t& prev = last[static_cast<std::size_t>(op.stage)][static_cast<std::size_t>(op.stream)];
    before[i] = prev;
    prev = i;
    for (std::uint32_t d : op.deps) ++first[d + 1];
    if (before[i] != kNone) ++first[before[i] + 1];
    waiting[i] = static_cast<std::uint32_t>(op.deps.size()) + (before[i] != kNone ? 1 : 0);
  }
  for (std::uint32_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::uint32_t> next(first[n]), fill(first.begin(), first.end() - 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t d : g.ops[i].deps) next[fill[d]++] = i;
    if (before[i] != kNone) next[fill[before[i]]++] = i;
  }
  std::vector<Duration> ready(n);
  std::vector<std::uint32_t> todo;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) todo.push_back(i);
  }
  Duration end;
  std::uint32_t done = 0;
  while (!todo.empty()) {
    const std::uint32_t i = todo.back();
    todo.pop_back();
    ++done;
    const GraphOp& op = g.ops[i];
    const Duration finish = ready[i] + (op.comm < 0 || communication ? op.work : Duration{});
    end = max(end, finish);
    for (std::uint32_t e = first[i]; e < first[i + 1]; ++e) {
      const std::uint32_t d = next[e];
      ready[d] = max(ready[d], finish);
      if (--waiting[d] == 0) todo.push_back(d);
    }
  }
  if (done != n) throw std::logic_error("step graph deadlock: an operation never became ready");
  return end;
}

struct StepPlayer::Impl {
  Executor executor;
};

StepPlayer::StepPlayer(const StepGraph& graph, const Platform& platform, Engine& engine, FlowNetwork& net,
                       std::vector<NetworkLinks> stage_links)
    : impl_(std::make_unique<Impl>(Impl{Executor(graph, platform, Fidelity::flow, engine, net, std::move(stage_links))})) {}
StepPlayer::~StepPlayer() = default;
void StepPlayer::start(std::function<void()> done) { impl_->executor.start(std::move(done)); }
bool StepPlayer::complete() const { return impl_->executor.complete(); }
Execution StepPlayer::result() const { return impl_->executor.result(); }

}  // namespace sp::models
