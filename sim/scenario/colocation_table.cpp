#include <cmath>
#include <limits>

#include "sim/scenario/colocation.hpp"

namespace sp {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

output::Column number(const char* name, const char* unit, const char* description, bool integer = false) {
  return output::Column{name, unit, description, integer, {}, {}};
}
}  // namespace

output::Table colocation_table(const ColocationSpec& spec, const std::vector<ColocationPoint>& points) {
  output::Table t;
  auto jobs = number("jobs", "count", "K identical jobs on the accelerator", true);
  auto resident = number("resident", "count", "processes (fused: models per process) on the device at once", true);
  auto memory = number("memory_gb", "GB", "device memory at the peak: contexts, library workspaces, tensors");
  auto makespan = number("makespan_s", "s", "until the last job finishes");
  auto throughput = number("throughput_samples_per_s", "samples/s", "samples all jobs trained / makespan");
  auto speedup = number("speedup", "1", "sequential makespan / this makespan at the same K");
  auto mean = number("mean_completion_s", "s", "mean of the jobs' completion times");
  auto busy = number("gpu_busy_share", "1", "time a kernel runs / makespan (nvidia-smi utilisation)");
  auto sm = number("sm_active", "1", "time-averaged share of SMs running kernels (DCGM SM_ACTIVE)");
  auto switches = number("context_switches", "count", "time-slicing context switches", true);
  auto energy = number("energy_kj", "kJ", "accelerator board energy until the makespan");
  auto per_job = number("energy_per_job_kj", "kJ", "board energy / K");
  auto with_host = number("energy_with_host_kj", "kJ", "board energy plus the host's power over the makespan");
  auto events = number("events", "count", "engine events simulated", true);
  std::vector<std::string> strategy, status, message;
  for (const ColocationPoint& p : points) {
    const bool ok = p.status == "ok";
    const double ms = to_seconds(p.run.makespan);
    jobs.values.push_back(p.jobs);
    resident.values.push_back(p.resident);
    memory.values.push_back(p.memory.value() / 1e9);
    makespan.values.push_back(ok ? ms : kNaN);
    throughput.values.push_back(ok ? trained_samples(p, spec.batch) / ms : kNaN);
    speedup.values.push_back(ok ? p.speedup : kNaN);
    double sum = 0;
    for (Duration c : p.run.completion) sum += to_seconds(c);
    mean.values.push_back(ok && !p.run.completion.empty() ? sum / p.run.completion.size() : kNaN);
    busy.values.push_back(ok ? p.run.gpu_busy_share : kNaN);
    sm.values.push_back(ok ? p.run.sm_active : kNaN);
    switches.values.push_back(ok ? static_cast<double>(p.run.context_switches) : 0);
    const bool has_power = spec.accelerator.tdp.has_value();
    energy.values.push_back(ok && has_power ? p.run.energy.value() / 1e3 : kNaN);
    per_job.values.push_back(ok && has_power ? p.run.energy.value() / 1e3 / p.jobs : kNaN);
    with_host.values.push_back(ok && has_power ? (p.run.energy.value() + spec.host_power.value() * ms) / 1e3 : kNaN);
    events.values.push_back(static_cast<double>(p.run.events));
    strategy.push_back(strategy_name(p.strategy));
    status.push_back(p.status);
    message.push_back(p.message.empty() ? "-" : p.message);
  }
  t.columns = {jobs, output::text_column("strategy", "sequential | time_slicing | mps | fractional | fused | mig", strategy),
               resident, memory, makespan, throughput, speedup, mean, busy, sm, switches, energy, per_job, with_host,
               events, output::text_column("status", "ok | out_of_memory | invalid", status),
               output::text_column("message", "why a point has no time", message)};
  return t;
}

output::Table colocation_jobs_table(const std::vector<ColocationPoint>& points) {
  auto jobs = number("jobs", "count", "K", true);
  auto job = number("job", "count", "which job (0-based, in admission order)", true);
  auto done = number("completion_s", "s", "when the job finished");
  auto steps = number("steps_run", "count", "steps the job ran (fewer where early stopping ended it)");
  std::vector<std::string> strategy;
  for (const ColocationPoint& p : points) {
    for (std::size_t i = 0; i < p.run.completion.size(); ++i) {
      jobs.values.push_back(p.jobs);
      job.values.push_back(static_cast<double>(i));
      done.values.push_back(to_seconds(p.run.completion[i]));
      steps.values.push_back(p.run.steps_run[i]);
      strategy.push_back(strategy_name(p.strategy));
    }
  }
  output::Table t;
  t.columns = {jobs, output::text_column("strategy", "sharing strategy", strategy), job, done, steps};
  if (strategy.empty()) t.columns[1].text.clear();
  return t;
}

}  // namespace sp
