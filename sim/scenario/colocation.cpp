#include "sim/scenario/colocation.hpp"

#include "sim/config/loader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/scenario/kernel_trace.hpp"

namespace sp {

namespace fs = std::filesystem;

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::sequential: return "sequential";
    case Strategy::time_slicing: return "time_slicing";
    case Strategy::mps: return "mps";
    case Strategy::fractional: return "fractional";
    case Strategy::fused: return "fused";
    case Strategy::mig: return "mig";
  }
  return "?";
}

namespace {
constexpr Strategy kStrategies[] = {Strategy::sequential, Strategy::time_slicing, Strategy::mps, Strategy::fractional,
                                    Strategy::fused, Strategy::mig};
}  // namespace

std::optional<Strategy> strategy_named(std::string_view name) {
  for (Strategy x : kStrategies) {
    if (name == strategy_name(x)) return x;
  }
  return std::nullopt;
}

std::string strategy_names() {
  std::string out;
  for (Strategy x : kStrategies) out += (out.empty() ? "" : ", ") + std::string(strategy_name(x));
  return out;
}

namespace {

models::SmallWorkload small_workload(const config::ConfigNode& where) {
  const std::string name = where.as_string();
  const fs::path dir = models::data_root() / "models" / "small";
  const fs::path file = dir / (name + ".yaml");
  if (name.find('/') != std::string::npos || !config::regular_file_quietly(file.string())) {
    std::vector<std::string> known;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml") known.push_back(e.path().stem().string());
    }
    std::sort(known.begin(), known.end());
    where.fail("unknown small workload '" + name + "'", config::known_names_hint(name, known) + " (models/small/)");
  }
  return models::parse_small_workload(config::load_file(file.string()));
}
}  // namespace

ColocationSpec load_colocation(const std::string& file, const std::vector<config::Override>& overrides,
                               const models::Catalog& catalog) {
  ColocationSpec s;
  s.file = file;
  const config::ConfigNode root = config::load_file(file, overrides);
  if (!root.is_map()) root.fail("a co-location scenario must be a mapping of keys such as name, accelerator, job, jobs");
  root.expect_only({"name", "description", "accelerator", "host", "job", "jobs", "strategies", "sharing",
                    "early_stopping"});
  s.name = root.at("name").as_folder_name();
  if (auto d = root.find("description")) s.description = d->as_string();
  s.accelerator = catalog.accelerator(root.at("accelerator"));
  if (s.accelerator.context_memory) s.context_memory = *s.accelerator.context_memory;  // unless sharing says
  s.accelerator.peak_for("fp16", root.at("accelerator"));
  // A launch's host cost is the host CPU's: the workload file's figure was measured on one host.
  std::optional<Duration> dispatch;
  if (auto h = root.find("host")) {
    h->expect_only({"cores", "power", "dispatch_per_kernel"});
    if (auto d = h->find("dispatch_per_kernel")) dispatch = models::parse_launch_time(*d);
    if (auto c = h->find("cores")) {
      s.host_cores = c->as_positive_number();
      if (s.host_cores > 4096) c->fail("must be at most 4096");
    }
    if (auto p = h->find("power")) {
      s.host_power = p->as_power();
      if (s.host_power.value() < 0 || s.host_power.value() > 1e5) p->fail("must be between 0 W and 100 kW");
    }
  }
  const config::ConfigNode job = root.at("job");
  job.expect_only({"workload", "batch", "steps", "epochs", "host_per_step", "cpu_cores", "trace"});
  s.workload = small_workload(job.at("workload"));
  if (dispatch) s.workload.dispatch_per_kernel = *dispatch;
  // The input pipeline is the run's, not the model's: data already on the GPU costs no host time a
  // step and needs no loader workers, a loader of text files a lot of both.
  if (auto x = job.find("host_per_step")) s.workload.host_per_step = x->as_nonnegative_duration();
  if (auto x = job.find("cpu_cores")) {
    s.workload.cpu_cores = x->as_number();
    if (!(s.workload.cpu_cores >= 0.1 && s.workload.cpu_cores <= 256)) x->fail("must be between 0.1 and 256 cores");
  }
  s.workload.precision = s.accelerator.training_peak(s.workload.precision) ? s.workload.precision : "fp16";
  s.batch = static_cast<double>(job.at("batch").as_positive_int());
  if (s.batch > 1e6) job.at("batch").fail("must be at most 1,000,000 samples");
  if (job.has("steps") == job.has("epochs")) job.fail("give exactly one of steps, epochs");
  if (auto st = job.find("steps")) {
    s.steps = static_cast<double>(st->as_positive_int());
  } else {
    const double epochs = job.at("epochs").as_positive_number();
    s.steps = epochs * std::ceil(s.workload.dataset_samples / s.batch);
  }
  if (s.steps > 1e7) job.fail("at most 10^7 steps per job (" + fmt::format("{:.0f}", s.steps) + " asked)");

  const config::ConfigNode list = root.at("jobs");
  for (const auto& e : list.elements()) {
    const int k = e.as_count();
    if (k > 1024) e.fail("at most 1024 jobs on one accelerator");
    if (!s.jobs.empty() && k <= s.jobs.back()) e.fail("job counts must be in ascending order");
    s.jobs.push_back(k);
  }
  if (s.jobs.empty()) list.fail("needs at least one job count");
  if (auto st = root.find("strategies")) {
    for (const auto& e : st->elements()) {
      const std::string v = e.as_string();
      const std::optional<Strategy> it = strategy_named(v);
      if (!it) e.fail("unknown strategy '" + v + "'", "valid: " + strategy_names());
      if (*it == Strategy::mig && !s.accelerator.mig) {
        e.fail(s.accelerator.name + " has no MIG", "MIG needs an accelerator whose hardware file has `mig` (A100)");
      }
      if (std::find(s.strategies.begin(), s.strategies.end(), *it) != s.strategies.end()) e.fail("'" + v + "' is listed twice");
      s.strategies.push_back(*it);
    }
    if (s.strategies.empty()) st->fail("needs at least one strategy");
  } else {
    for (Strategy x : kStrategies) {
      if (x != Strategy::mig || s.accelerator.mig) s.strategies.push_back(x);
    }
  }
  if (auto tr = job.find("trace")) {
    // A measured step instead of the workload's modelled kernels (memory and batch stay the
    // workload's): `trace: {file: PATH, step: N}`, PATH relative to the scenario file.
    tr->expect_only({"file", "step"});
    const std::filesystem::path given = tr->at("file").as_string();
    const std::filesystem::path path = given.is_absolute() ? given : std::filesystem::path(file).parent_path() / given;
    if (!config::exists_quietly(path.string())) tr->at("file").fail("no such file: " + path.string());
    if (!config::regular_file_quietly(path.string())) tr->at("file").fail("not a regular file: " + path.string());
    int step = -1;
    if (auto st = tr->find("step")) {
      // Checked before the narrowing: 4,294,967,298 once ran as step 2.
      const std::int64_t v = st->as_int();
      if (v < 0 || v > config::kMaxCount) st->fail(fmt::format("must be a step of the trace, 0 to {}", config::kMaxCount));
      step = static_cast<int>(v);
    }
    if (std::find(s.strategies.begin(), s.strategies.end(), Strategy::fused) != s.strategies.end()) {
      tr->fail("a trace is one plain job's kernels; fused copies need the workload's ops", "drop `fused` from strategies");
    }
    s.traced = load_kernel_trace(path.string(), step, s.accelerator, s.workload.library_launch);
  }
  if (auto es = root.find("early_stopping")) {
    es->expect_only({"grace", "reduction", "seed"});
    s.stop_grace = es->at("grace").as_number();
    if (!(s.stop_grace > 0 && s.stop_grace < 1)) es->at("grace").fail("must be in (0, 1): the first milestone's share of the steps");
    s.stop_reduction = es->at("reduction").as_number();
    if (!(s.stop_reduction > 1 && s.stop_reduction <= 100)) es->at("reduction").fail("must be in (1, 100]");
    // Milestones at grace x reduction^i: a reduction barely above 1 makes billions of them.
    const double milestones = std::ceil(std::log(1 / s.stop_grace) / std::log(s.stop_reduction));
    if (milestones > 100) {
      es->at("reduction").fail(fmt::format("gives {:.0f} milestones with grace {}; at most 100", milestones, s.stop_grace),
                               "ASHA's reduction factor is usually 2 to 4");
    }
    if (auto x = es->find("seed")) {
      const std::int64_t v = x->as_int();
      if (v < 0) x->fail("must not be negative");
      s.seed = static_cast<std::uint64_t>(v);
    }
  }
  if (auto sh = root.find("sharing")) {
    sh->expect_only({"time_slice", "switch_cost", "start_up", "context_memory", "mps_active_thread_percentage",
                     "fraction", "fractional_mode", "fused_max", "mps_clients_max"});
    if (auto x = sh->find("time_slice")) s.time_slice = x->as_nonnegative_duration();
    if (s.time_slice < models::kShortestTimeSlice) sh->at("time_slice").fail("must be at least 1 us (drivers slice in milliseconds)");
    if (auto x = sh->find("switch_cost")) {
      s.switch_cost = x->as_nonnegative_duration();
      // A time-slice switch saves and restores a context: microseconds to milliseconds on GPUs.
      if (s.switch_cost > seconds(1.0)) x->fail("must be at most 1 s (a context switch takes microseconds to milliseconds)");
    }
    if (auto x = sh->find("start_up")) s.start_up = x->as_nonnegative_duration();
    if (auto x = sh->find("context_memory")) s.context_memory = x->as_nonnegative_bytes();
    if (auto x = sh->find("mps_active_thread_percentage")) {
      const double p = x->as_number();
      if (!(p > 0 && p <= 100)) x->fail("must be in (0, 100]");
      s.mps_thread_share = p / 100;
    }
    if (auto x = sh->find("fraction")) {
      s.fraction = x->as_number();
      if (!(s.fraction > 0 && s.fraction <= 1)) x->fail("must be in (0, 1]");
    }
    if (auto x = sh->find("fractional_mode")) {
      const std::string m = x->as_string();
      if (m != "time_slicing" && m != "mps") x->fail("unknown mode '" + m + "'", "valid: time_slicing, mps");
      s.fractional_mps = m == "mps";
    }
    if (auto x = sh->find("fused_max")) s.fused_max = x->as_count();
    if (auto x = sh->find("mps_clients_max")) s.mps_clients_max = x->as_count();
  }
  // Each bound alone allows 1,024 jobs of 10^7 steps: days of simulation at a point. The kernels
  // the largest point launches (fused copies launch fewer) bound its time: 10^9 is some 3 x 10^9
  // events, about 5 minutes on this project's 2-core machine (12 M events a second).
  const double kernels = static_cast<double>(
      s.traced.empty() ? models::step_kernels(s.workload, s.accelerator, s.batch, 1).size() : s.traced.size());
  const double launches = kernels * s.steps * s.jobs.back();
  if (launches > kMaxColocatedLaunches) {
    (job.has("steps") ? job.at("steps") : job.at("epochs"))
        .fail(fmt::format("{} jobs of {:.0f} steps of {:.0f} kernels launch {:.3g} kernels, more than the {:.0e} a point "
                          "may simulate (minutes)",
                          s.jobs.back(), s.steps, kernels, launches, kMaxColocatedLaunches),
              "fewer steps or jobs: a run's speed-up and energy per job settle within a few hundred steps");
  }
  return s;
}

std::optional<models::MigProfile> mig_profile(const models::MigGeometry& g, int instances) {
  std::optional<models::MigProfile> best;
  for (const models::MigProfile& p : g.profiles) {
    if (instances * p.compute_slices <= g.compute_slices && instances * p.memory_slices <= g.memory_slices) best = p;
  }
  return best;
}

namespace {
ColocationPoint run_point(const ColocationSpec& s, int k, Strategy strategy,
                          const std::function<void(double)>& progress = {}) {
  ColocationPoint p;
  p.jobs = k;
  p.strategy = strategy;
  const models::SmallWorkload& w = s.workload;
  const Bytes per_process = s.context_memory + models::training_memory(w, s.batch);
  models::DeviceSharing d;
  d.sms = std::max(1, s.accelerator.compute.parallel_units);
  d.memory_bandwidth = s.accelerator.memory_bandwidth * s.accelerator.compute.memory_efficiency;
  d.time_slice = s.time_slice;
  d.switch_cost = s.switch_cost;
  d.host_cores = s.host_cores;
  d.client_sm_share = s.mps_thread_share;
  const auto power = models::accelerator_power(s.accelerator, s.power);
  if (power) d.power = *power;

  int models_per_process = 1, groups = k;
  switch (strategy) {
    case Strategy::sequential: d.admit = 1; break;
    case Strategy::time_slicing: d.admit = k; break;
    case Strategy::mps:
      d.admit = k;
      d.mode = models::DeviceSharing::Mode::concurrent;
      if (k > s.mps_clients_max) {
        p.status = "invalid";
        p.message = fmt::format("MPS serves at most {} clients per device (CUDA <= 13.0; 60 from 13.1)", s.mps_clients_max);
      }
      break;
    case Strategy::fractional:
      d.admit = std::max(1, static_cast<int>(std::floor(1 / s.fraction + 1e-9)));
      if (s.fractional_mps) d.mode = models::DeviceSharing::Mode::concurrent;
      break;
    case Strategy::mig: {
      // K equal instances, the largest profile that K of fit; more jobs than the smallest
      // profile allows instances wait for one to free.
      const models::MigGeometry& g = *s.accelerator.mig;
      const models::MigProfile& least = g.profiles.front();
      const int most = std::min(g.compute_slices / least.compute_slices, g.memory_slices / least.memory_slices);
      d.admit = std::min(k, most);
      const models::MigProfile inst = *mig_profile(g, d.admit);
      d.mode = models::DeviceSharing::Mode::partitioned;
      d.partition_sms = inst.sms;
      const double memory_share = static_cast<double>(inst.memory_slices) / g.memory_slices;
      d.partition_bandwidth = d.memory_bandwidth * memory_share;
      const Bytes instance_memory = s.accelerator.memory_capacity * memory_share;
      if (per_process > instance_memory) {
        p.status = "out_of_memory";
        p.message = fmt::format("{:.1f} GB needed per process, {:.1f} GB in a {}g instance", per_process.value() / 1e9,
                                instance_memory.value() / 1e9, inst.compute_slices);
      }
      break;
    }
    case Strategy::fused: {
      // As many copies as fit beside one context (HFTA's harness searched the largest B).
      const double per_model = models::training_memory(w, s.batch).value();
      int fit = static_cast<int>(std::floor((s.accelerator.memory_capacity - s.context_memory).value() / per_model));
      if (s.fused_max > 0) fit = std::min(fit, s.fused_max);
      models_per_process = std::clamp(fit, 1, k);
      groups = (k + models_per_process - 1) / models_per_process;
      d.admit = 1;
      break;
    }
  }
  p.fused_models = strategy == Strategy::fused ? models_per_process : 0;
  p.resident = strategy == Strategy::fused ? models_per_process : std::min(k, d.admit);
  p.memory = strategy == Strategy::fused ? s.context_memory + models::training_memory(w, s.batch, models_per_process)
                                         : per_process * static_cast<double>(std::min(k, d.admit));
  if (p.status == "ok" && p.memory > s.accelerator.memory_capacity) {
    p.status = "out_of_memory";
    p.message = fmt::format("{:.1f} GB needed, {:.1f} GB on the device", p.memory.value() / 1e9,
                            s.accelerator.memory_capacity.value() / 1e9);
  }
  if (p.status != "ok") return p;

  const std::vector<models::StepKernel> kernels =
      s.traced.empty() ? models::step_kernels(w, s.accelerator, s.batch, models_per_process) : s.traced;
  models::ColocatedJob job{&kernels, s.steps, w.dispatch_per_kernel, w.host_per_step, s.start_up, w.cpu_cores};
  std::vector<models::ColocatedJob> jobs(static_cast<std::size_t>(groups), job);
  if (s.stop_reduction > 1 && strategy != Strategy::fused) {
    d.reduction = s.stop_reduction;
    for (double m = s.stop_grace * s.steps; m < s.steps; m *= s.stop_reduction) {
      if (d.milestones.empty() || std::ceil(m) > d.milestones.back()) d.milestones.push_back(std::ceil(m));  // one decision a step
    }
    for (std::size_t j = 0; j < jobs.size(); ++j) jobs[j].quality = RngStream(s.seed, j, "quality").uniform01();
  }
  p.run = models::simulate_colocation(jobs, d, progress);
  if (strategy == Strategy::fused) {
    // Every model of a fused group finishes with its group.
    std::vector<Duration> each;
    std::vector<double> steps;
    for (int g = 0; g < groups; ++g) {
      for (int m = 0; m < models_per_process && g * models_per_process + m < k; ++m) {
        each.push_back(p.run.completion[g]);
        steps.push_back(p.run.steps_run[g]);
      }
    }
    p.run.completion = each;
    p.run.steps_run = steps;
  }
  return p;
}
}  // namespace

double trained_samples(const ColocationPoint& p, double batch) {
  double steps = 0;
  for (double s : p.run.steps_run) steps += s;
  return steps * batch;
}

std::vector<StrategyChoice> choose_strategies(const std::vector<ColocationPoint>& points) {
  std::vector<StrategyChoice> out;
  for (const ColocationPoint& p : points) {
    if (out.empty() || out.back().jobs != p.jobs) out.push_back({p.jobs});
    if (p.status != "ok") continue;
    StrategyChoice& c = out.back();
    if (!c.fastest || p.run.makespan < c.fastest->run.makespan) c.fastest = &p;
    if (!c.least_energy || p.run.energy.value() < c.least_energy->run.energy.value()) c.least_energy = &p;
  }
  return out;
}

std::vector<ColocationPoint> run_colocation(const ColocationSpec& s,
                                           const std::function<void(double done, int total)>& progress) {
  std::vector<ColocationPoint> out;
  const int total = static_cast<int>(s.jobs.size() * s.strategies.size());
  for (int k : s.jobs) {
    std::optional<Duration> sequential;
    const std::size_t first = out.size();
    for (Strategy st : s.strategies) {
      const double before = static_cast<double>(out.size());
      std::function<void(double)> within;
      if (progress) within = [&](double share) { progress(before + share, total); };
      out.push_back(run_point(s, k, st, within));
      if (progress) progress(static_cast<double>(out.size()), total);
      if (st == Strategy::sequential && out.back().status == "ok") sequential = out.back().run.makespan;
    }
    if (!sequential) sequential = run_point(s, k, Strategy::sequential).run.makespan;
    for (std::size_t i = first; i < out.size(); ++i) {
      if (out[i].status == "ok") out[i].speedup = *sequential / out[i].run.makespan;
    }
  }
  return out;
}

}  // namespace sp
