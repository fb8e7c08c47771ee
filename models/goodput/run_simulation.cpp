#include "models/goodput/run_simulation.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "sim/core/det_math.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

namespace {

// Nanosecond ticks: int64 holds 292 years of them.
Duration span(double s) { return Duration::from_ps(std::llround(s * 1e9)); }
double secs(SimTime t) { return static_cast<double>(t.ps()) * 1e-9; }

// A guard against plans that cannot finish in any reasonable time (a failure rate far above the
// checkpoint rate): the caller checks the expectation first; this catches what slips past it.
constexpr std::uint64_t kMaxEvents = 50'000'000;

class Run {
 public:
  Run(const RunPlan& plan, RngStream& rng, std::vector<RunSpan>* trace) : p_(plan), rng_(rng), trace_(trace) {
    pool_ = plan.spare_nodes.value_or(0);
  }

  RunOutcome go() {
    next_failure();
    train();
    carry_on();
    while (!done_ && engine_.step()) {
      if (engine_.events_processed() + inline_ends_ > kMaxEvents) {
        throw ModelError("a run with " + std::to_string(out_.failures) +
                         " failures has not finished; the failure rate is too high for its checkpoints and restarts");
      }
    }
    // The wall as the sum of what it was spent on, in seconds as given rather than in ticks: a run
    // without failures or checkpoints then lasts its work exactly, never a rounding more or less.
    out_.wall_s = p_.work_s + out_.lost_s + out_.checkpoint_s + out_.restart_s + out_.wait_s;
    return out_;
  }

 private:
  enum class Phase { train, stall, restart, wait };
  // The end of a phase of the run's own chain (train, checkpoint stall, restart), and its value:
  // the progress a training phase reaches, the one a checkpoint saves.
  enum class End { none, train, stall, restart };
  struct Due {
    End end = End::none;
    double value = 0;
  };

  void record(RunSpan::Kind k, double from) {
    if (trace_ && secs(engine_.now()) > from) trace_->push_back({k, from, secs(engine_.now())});
  }

  void next_failure() {
    if (!(p_.failures_per_s > 0)) return;
    // Exponential gaps, by inversion with the machine-independent log.
    const double gap = -det::log(1 - rng_.uniform01()) / p_.failures_per_s;
    failure_ = engine_.schedule_after(span(gap), [this] { fail(); });
  }

  // The chain's next phase ends `seconds` from now. Between failures a run is a fixed sequence of
  // phases (a checkpoint every few minutes for weeks: two events each), so where nothing else is
  // due first (a failure, a repair, a write) the phase ends at once, the clock moved to its end
  // (carry_on), and the engine sees an event only where something could come between. Both run
  // in the same order at the same ticks: an event already due at that tick was scheduled before
  // the phase's end would have been, and ran first.
  void end_after(double seconds, End end, double value = 0) {
    const SimTime at = engine_.now() + span(seconds);
    if (engine_.idle_through(at)) {
      engine_.advance_to(at);
      due_ = {end, value};
      ++inline_ends_;
      return;
    }
    phase_event_ = engine_.schedule_at(at, [this, end, value] {
      due_ = {end, value};
      carry_on();
    });
  }

  // Ends the phases that end before anything else is due, one after another (a loop: a run
  // without failures is a million checkpoints deep).
  void carry_on() {
    while (due_.end != End::none) {
      const Due d = std::exchange(due_, Due{});
      switch (d.end) {
        case End::train: trained(d.value); break;
        case End::stall: stalled(d.value); break;
        case End::restart: restarted(); break;
        case End::none: break;
      }
    }
  }

  void train() {
    phase_ = Phase::train;
    phase_start_ = secs(engine_.now());
    const double goal = std::min(p_.work_s, (std::floor(progress_ / p_.interval_s + 1e-9) + 1) * p_.interval_s);
    end_after(goal - progress_, End::train, goal);
  }

  void trained(double goal) {
    record(RunSpan::Kind::train, phase_start_);
    progress_ = goal;
    if (goal >= p_.work_s) {
      finish();
    } else {
      checkpoint(goal);
    }
  }

  void checkpoint(double at_progress) {
    phase_ = Phase::stall;
    phase_start_ = secs(engine_.now());
    end_after(p_.stall_s, End::stall, at_progress);
  }

  void stalled(double at_progress) {
    record(RunSpan::Kind::checkpoint, phase_start_);
    out_.checkpoint_s += p_.stall_s;
    if (p_.async) {
      writes_.push_back(engine_.schedule_after(span(p_.write_s), [this, at_progress] {
        durable_ = std::max(durable_, at_progress);
        ++out_.checkpoints;
      }));
    } else {
      durable_ = at_progress;
      ++out_.checkpoints;
    }
    train();
  }

  void fail() {
    const double now = secs(engine_.now());
    engine_.cancel(phase_event_);
    for (EventId w : writes_) engine_.cancel(w);  // a write in flight is lost with the job
    writes_.clear();
    switch (phase_) {
      case Phase::train: progress_ += now - phase_start_; record(RunSpan::Kind::train, phase_start_); break;
      case Phase::stall: out_.checkpoint_s += now - phase_start_; record(RunSpan::Kind::checkpoint, phase_start_); break;
      case Phase::restart: out_.restart_s += now - phase_start_; record(RunSpan::Kind::restart, phase_start_); break;
      case Phase::wait: out_.wait_s += now - phase_start_; record(RunSpan::Kind::wait_spare, phase_start_); break;
    }
    ++out_.failures;
    out_.lost_s += progress_ - durable_;
    if (trace_) trace_->push_back({RunSpan::Kind::failure, now, now});
    progress_ = durable_;
    if (p_.spare_nodes && rng_.uniform01() < p_.node_share) {
      if (pool_ > 0) {
        --pool_;
      } else {
        ++missing_;
      }
      engine_.schedule_after(span(p_.repair_s), [this] { repaired(); });
    }
    next_failure();
    if (missing_ > 0) {
      phase_ = Phase::wait;
      phase_start_ = now;
    } else {
      restart();
    }
    carry_on();
  }

  void repaired() {
    if (done_) return;
    if (missing_ == 0) {
      ++pool_;
      return;
    }
    if (--missing_ == 0 && phase_ == Phase::wait) {
      out_.wait_s += secs(engine_.now()) - phase_start_;
      record(RunSpan::Kind::wait_spare, phase_start_);
      restart();
      carry_on();
    }
  }

  void restart() {
    phase_ = Phase::restart;
    phase_start_ = secs(engine_.now());
    end_after(p_.restart_s, End::restart);
  }

  void restarted() {
    record(RunSpan::Kind::restart, phase_start_);
    out_.restart_s += p_.restart_s;
    train();
  }

  void finish() { done_ = true; }

  const RunPlan& p_;
  RngStream& rng_;
  std::vector<RunSpan>* trace_;
  Engine engine_;
  RunOutcome out_;
  Phase phase_ = Phase::train;
  double phase_start_ = 0;
  double progress_ = 0, durable_ = 0;
  EventId phase_event_, failure_;
  Due due_;
  std::uint64_t inline_ends_ = 0;  // phases ended without an event: kMaxEvents counts them as events
  std::vector<EventId> writes_;
  int pool_ = 0, missing_ = 0;
  bool done_ = false;
};

}  // namespace

RunOutcome simulate_run(const RunPlan& plan, RngStream& rng, std::vector<RunSpan>* trace) {
  if (!(plan.work_s > 0)) return {};
  if (!(plan.interval_s > 0)) throw ModelError("a checkpoint interval must be greater than 0");
  return Run(plan, rng, trace).go();
}

std::string run_trace_json(const std::vector<RunSpan>& spans) {
  static constexpr const char* kNames[] = {"train", "checkpoint", "restart", "wait for spare", "failure"};
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (int k = 0; k < 5; ++k) {
    out += fmt::format("{{\"ph\": \"M\", \"pid\": 1, \"tid\": {}, \"name\": \"thread_name\", \"args\": {{\"name\": \"{}\"}}}},\n",
                       k, kNames[k]);
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const RunSpan& s = spans[i];
    const int k = static_cast<int>(s.kind);
    if (s.kind == RunSpan::Kind::failure) {
      out += fmt::format("{{\"ph\": \"i\", \"s\": \"g\", \"pid\": 1, \"tid\": {}, \"name\": \"failure\", \"ts\": {:.0f}}}", k,
                         s.start_s * 1e6);
    } else {
      out += fmt::format("{{\"ph\": \"X\", \"pid\": 1, \"tid\": {}, \"name\": \"{}\", \"ts\": {:.0f}, \"dur\": {:.0f}}}", k,
                         kNames[k], s.start_s * 1e6, (s.end_s - s.start_s) * 1e6);
    }
    out += i + 1 < spans.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace sp::models
