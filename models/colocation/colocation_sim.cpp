#include "models/colocation/colocation_sim.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <utility>

#include "sim/core/engine.hpp"
#include "sim/core/quantile.hpp"

namespace sp::models {

namespace {

struct JobState {
  bool admitted = false, issuing_started = false, done = false;
  double steps_left = 0, steps_done = 0;
  std::size_t milestone = 0;  // the next early-stopping milestone
  std::size_t issued = 0, completed = 0;  // kernels of the current step
  std::deque<std::size_t> ready;          // launched, not yet started
  bool current = false;                   // a kernel started and not finished
  std::size_t kernel = 0;
  double remaining = 0;  // of the current kernel, in seconds alone
  double rate = 0;       // progress per second
  int sms = 0;           // SMs it holds while progressing
  EventId finish;
  bool has_finish = false;
  Duration completion;
};

class Simulation {
 public:
  Simulation(const std::vector<ColocatedJob>& jobs, const DeviceSharing& d) : jobs_(jobs), d_(d), s_(jobs.size()) {}

  ColocationRun run(const std::function<void(double)>& progress) {
    double steps = 0;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      s_[j].steps_left = jobs_[j].steps;
      steps += jobs_[j].steps;
    }
    admit();
    if (!progress) {
      engine_.run();
    } else {
      // A few calls a second at the engine's rate (some 10^6 events a second): a near-cap run of
      // 10^7 steps takes minutes, and its caller shows how far it is.
      for (std::uint64_t n = 1; engine_.step(); ++n) {
        if (n % (1u << 18) == 0) progress(std::min(1.0, steps_done_ / std::max(1.0, steps)));
      }
    }
    ColocationRun r;
    r.makespan = last_ - SimTime();
    for (const JobState& s : s_) {
      r.completion.push_back(s.completion);
      r.steps_run.push_back(s.steps_done);
    }
    const double t = to_seconds(r.makespan);
    r.gpu_busy_share = t > 0 ? busy_s_ / t : 0;
    r.sm_active = t > 0 ? sm_s_ / t : 0;
    r.energy = Joules(energy_j_);
    r.context_switches = switches_;
    r.events = engine_.events_processed();
    return r;
  }

 private:
  const StepKernel& kernel_of(std::size_t j, std::size_t k) const { return (*jobs_[j].kernels)[k]; }
  // The memory bandwidth job j's current kernel would draw at its present rate: its bytes at the
  // pace it had alone, slowed by the share of its SMs it holds.
  double bandwidth_wanted(std::size_t j) const {
    const StepKernel& k = kernel_of(j, s_[j].kernel);
    return k.bytes.value() / to_seconds(k.alone) * s_[j].rate;
  }
  bool has_work(std::size_t j) const { return s_[j].current || !s_[j].ready.empty(); }
  bool alive(std::size_t j) const { return s_[j].admitted && !s_[j].done; }

  // How much longer host work takes while the issuing jobs want more cores than the host has.
  // Read at every launch, it changes only when a job starts issuing or ends: kept, not summed
  // over the resident jobs at each launch (the same sum, in the same order, when it changes).
  double stretch() const { return stretch_; }
  void restretch() {
    double want = 0;
    for (const std::size_t j : resident_) {
      if (s_[j].issuing_started) want += jobs_[j].cpu_cores;
    }
    stretch_ = std::max(1.0, want / d_.host_cores);
  }

  // Jobs are admitted in order, so the resident list stays sorted by index: every loop over it
  // visits jobs in the order a loop over all K would, and a job not resident has nothing to do
  // (K = 1,024 jobs run one at a time no longer cost 1,024 checks an event).
  void admit() {
    while (next_admit_ < s_.size() && resident_.size() < static_cast<std::size_t>(std::max(d_.admit, 0))) {
      const std::size_t j = next_admit_++;
      s_[j].admitted = true;
      resident_.push_back(j);
      engine_.schedule_after(jobs_[j].start_up, [this, j] {
        s_[j].issuing_started = true;
        restretch();
        begin_step(j);
      });
    }
  }

  void begin_step(std::size_t j) {
    if (s_[j].steps_left <= 0 || jobs_[j].kernels->empty()) return finish_job(j);
    s_[j].issued = s_[j].completed = 0;
    issue_next(j);
  }

  void issue_next(std::size_t j) {
    const StepKernel& k = kernel_of(j, s_[j].issued);
    engine_.schedule_after(scale(scale(jobs_[j].dispatch_per_launch, k.launches) + k.library_host, stretch()), [this, j] {
      const bool waits = kernel_of(j, s_[j].issued).host_waits;
      s_[j].ready.push_back(s_[j].issued++);
      // A kernel whose result the host reads holds the next launch until it completes (kernel_done).
      if (s_[j].issued < jobs_[j].kernels->size() && !waits) issue_next(j);
      update();
    });
  }

  void kernel_done(std::size_t j) {
    s_[j].has_finish = false;
    advance();
    JobState& s = s_[j];
    s.current = false;
    s.remaining = s.rate = 0;
    s.sms = 0;
    ++s.completed;
    if (s.completed < jobs_[j].kernels->size() && s.completed == s.issued && kernel_of(j, s.completed - 1).host_waits) {
      issue_next(j);
    }
    if (s.completed == jobs_[j].kernels->size()) {
      // The step's synchronisation: the host learns the step ended, then does its own work.
      s.steps_left -= 1;
      s.steps_done += 1;
      steps_done_ += 1;
      if (stops_here(j)) s.steps_left = 0;
      engine_.schedule_after(scale(jobs_[j].host_per_step, stretch()), [this, j] { begin_step(j); });
    }
    update();
  }

  // ASHA's rule at a milestone (colocation_sim.hpp); records the job's quality there.
  bool stops_here(std::size_t j) {
    JobState& s = s_[j];
    if (d_.reduction <= 1 || s.milestone >= d_.milestones.size() || s.steps_done < d_.milestones[s.milestone]) {
      return false;
    }
    std::vector<double>& seen = recorded_[s.milestone++];
    const bool stop = !seen.empty() && jobs_[j].quality < quantile_linear(seen, 1 - 1 / d_.reduction);
    seen.push_back(jobs_[j].quality);
    return stop;
  }

  void finish_job(std::size_t j) {
    s_[j].done = true;
    if (const auto it = std::find(resident_.begin(), resident_.end(), j); it != resident_.end()) resident_.erase(it);
    restretch();
    s_[j].completion = engine_.now() - SimTime();
    last_ = std::max(last_, engine_.now());
    admit();
    update();
  }

  // Integrates time, energy and progress from the last change to now.
  void advance() {
    const double dt = to_seconds(engine_.now() - then_);
    then_ = engine_.now();
    if (dt <= 0) return;
    int sms = 0;
    bool contexts = false, busy = false;
    for (const std::size_t j : resident_) {
      JobState& s = s_[j];
      contexts = contexts || s.issuing_started;
      if (s.current && s.rate > 0) {
        s.remaining = std::max(0.0, s.remaining - s.rate * dt);
        sms += s.sms;
        busy = true;
      }
    }
    const double share = std::min(1.0, static_cast<double>(sms) / d_.sms);
    const AcceleratorPower& p = d_.power;
    const double watts = p.idle.value() + (contexts ? (p.context - p.idle).value() : 0.0) + share * (p.busy - p.context).value();
    energy_j_ += watts * dt;
    busy_s_ += busy ? dt : 0;
    sm_s_ += share * dt;
  }

  void start_head(std::size_t j) {
    JobState& s = s_[j];
    s.kernel = s.ready.front();
    s.ready.pop_front();
    s.current = true;
    s.remaining = to_seconds(kernel_of(j, s.kernel).alone);
  }

  void allocate_exclusive() {
    const auto activate = [&](std::size_t next) {
      // A switch costs only between two live contexts; a context that ended leaves nothing to save.
      if (held_ && next != active_ && alive(active_)) {
        ++switches_;
        switch_end_ = engine_.now() + d_.switch_cost;
        engine_.schedule_at(switch_end_, [this] { update(); });
      }
      held_ = true;
      active_ = next;
      slice_start_ = std::max(engine_.now(), switch_end_);
      engine_.schedule_at(slice_start_ + d_.time_slice, [this] { update(); });
    };
    bool others = false;
    for (const std::size_t j : resident_) others = others || (j != active_ && has_work(j));
    // A kernel whose end falls on the slice's end finishes first (its completion is due now).
    const bool due = s_[active_].current && s_[active_].remaining <= 1e-12;
    const bool expired = engine_.now() - slice_start_ >= d_.time_slice && !due;
    if (engine_.now() >= switch_end_) {
      if (!held_ && has_work(active_)) {
        activate(active_);
      } else if (!has_work(active_) || (expired && others)) {
        // Round robin: the first job after the active one (by index, wrapping, itself last) with work.
        const auto after = std::upper_bound(resident_.begin(), resident_.end(), active_);
        auto next = std::find_if(after, resident_.end(), [&](std::size_t j) { return has_work(j); });
        if (next == resident_.end()) {
          next = std::find_if(resident_.begin(), after, [&](std::size_t j) { return has_work(j); });
          if (next == after) next = resident_.end();
        }
        if (next != resident_.end()) activate(*next);
      }
    }
    for (const std::size_t j : resident_) s_[j].rate = 0, s_[j].sms = 0;
    if (engine_.now() < switch_end_ || !has_work(active_)) return;
    JobState& s = s_[active_];
    if (!s.current) start_head(active_);
    s.rate = 1;
    s.sms = kernel_of(active_, s.kernel).width;
  }

  // MIG: each job alone on its instance, whatever the others do.
  void allocate_partitioned() {
    for (const std::size_t j : resident_) {
      JobState& s = s_[j];
      if (!s.current && !s.ready.empty()) start_head(j);
      if (!s.current) {
        s.rate = 0, s.sms = 0;
        continue;
      }
      const StepKernel& k = kernel_of(j, s.kernel);
      s.sms = std::min(k.width, d_.partition_sms);
      s.rate = static_cast<double>(s.sms) / k.width;
      if (k.memory_bound) {
        const double wants = bandwidth_wanted(j);
        if (wants > d_.partition_bandwidth.value()) s.rate *= d_.partition_bandwidth.value() / wants;
      }
    }
  }

  void allocate_concurrent() {
    // Every event re-divides the SMs among up to K running kernels: the buffers are members and
    // each kernel's cap is looked up once, not in every comparison (MPS at K = 32 spent half its
    // time here).
    run_.clear();
    const int client_cap = std::max(1, static_cast<int>(d_.client_sm_share * d_.sms));
    for (const std::size_t j : resident_) {
      if (!s_[j].current && !s_[j].ready.empty()) start_head(j);
      if (s_[j].current) run_.push_back({std::min(kernel_of(j, s_[j].kernel).width, client_cap), j});
    }
    // Max-min fair SMs with caps: the kernels wanting least are served first.
    std::sort(run_.begin(), run_.end());
    int free = d_.sms;
    for (std::size_t i = 0; i < run_.size(); ++i) {
      const auto [cap, j] = run_[i];
      const int left = static_cast<int>(run_.size() - i);
      // min(cap, free / left) without the division where the cap fits (the usual case)
      const int fair = cap * left <= free ? cap : free / left;
      const int got = std::max(std::min(cap, fair), free > 0 ? 1 : 0);
      const int width = kernel_of(j, s_[j].kernel).width;
      s_[j].sms = got;
      s_[j].rate = got == width ? 1.0 : static_cast<double>(got) / width;
      free -= got;
    }
    // Memory-bound kernels share the achievable bandwidth: each wants its bytes at its pace.
    double demand = 0;
    for (const auto& [cap, j] : run_) {
      if (kernel_of(j, s_[j].kernel).memory_bound) demand += bandwidth_wanted(j);
    }
    if (demand > d_.memory_bandwidth.value()) {
      const double f = d_.memory_bandwidth.value() / demand;
      for (const auto& [cap, j] : run_) {
        if (kernel_of(j, s_[j].kernel).memory_bound) s_[j].rate *= f;
      }
    }
    for (const std::size_t j : resident_) {
      if (!s_[j].current) s_[j].rate = 0, s_[j].sms = 0;
    }
  }

  void update() {
    advance();
    rates_before_.resize(s_.size());
    for (const std::size_t j : resident_) rates_before_[j] = s_[j].rate;
    switch (d_.mode) {
      case DeviceSharing::Mode::exclusive: allocate_exclusive(); break;
      case DeviceSharing::Mode::concurrent: allocate_concurrent(); break;
      case DeviceSharing::Mode::partitioned: allocate_partitioned(); break;
    }
    for (const std::size_t j : resident_) {
      JobState& s = s_[j];
      // A kernel progressing at the rate it had keeps the finish already scheduled: most events
      // change one job's rate, and rescheduling all K made MPS at K = 32 quadratic in practice.
      if (s.has_finish && s.current && s.rate > 0 && s.rate == rates_before_[j]) continue;
      if (s.has_finish) engine_.cancel(s.finish);
      s.has_finish = false;
      if (s.current && s.rate > 0) {
        s.finish = engine_.schedule_after(seconds(s.remaining / s.rate), [this, j] { kernel_done(j); });
        s.has_finish = true;
      }
    }
  }

  const std::vector<ColocatedJob>& jobs_;
  const DeviceSharing& d_;
  std::vector<JobState> s_;
  std::vector<std::size_t> resident_;  // admitted and not done, ascending
  double stretch_ = 1;                  // stretch(): the issuing jobs' cores over the host's
  std::size_t next_admit_ = 0;
  Engine engine_;
  SimTime then_, last_, slice_start_, switch_end_;
  std::size_t active_ = 0;
  bool held_ = false;  // some context has held the device
  double energy_j_ = 0, busy_s_ = 0, sm_s_ = 0;
  double steps_done_ = 0;  // by every job, for the progress shown
  std::uint64_t switches_ = 0;
  std::map<std::size_t, std::vector<double>> recorded_;  // qualities seen at each milestone
  std::vector<double> rates_before_;  // each job's rate before the allocation in progress
  std::vector<std::pair<int, std::size_t>> run_;  // allocate_concurrent's running kernels: (SM cap, job)
};

}  // namespace

ColocationRun simulate_colocation(const std::vector<ColocatedJob>& jobs, const DeviceSharing& device,
                                  const std::function<void(double)>& progress) {
  return Simulation(jobs, device).run(progress);
}

double quantile_linear(std::vector<double> v, double q) {
  return v.empty() ? 0.0 : quantile(std::move(v), std::clamp(q, 0.0, 1.0));  // sim/core/quantile.hpp
}

}  // namespace sp::models
