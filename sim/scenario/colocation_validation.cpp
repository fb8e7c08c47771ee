#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/colocation.hpp"

namespace sp {

output::Table validate_colocation(const std::string& published_csv, const models::Catalog& catalog) {
  const config::CsvTable csv = config::CsvTable::read_rows(published_csv);
  if (csv.rows() == 0) throw InputError({published_csv, 0, 0}, "", "no published points to compare with");
  // Each scenario once, at every K its rows ask for, with the strategies they name.
  std::map<std::string, ColocationSpec> specs;
  std::map<std::string, std::vector<ColocationPoint>> runs;
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const std::string name = csv.cell(i, "scenario");
    if (specs.count(name)) continue;
    const std::filesystem::path file = models::data_root() / "scenarios" / "colocation" / (name + ".yaml");
    if (name.find('/') != std::string::npos || !config::regular_file_quietly(file.string())) {
      csv.fail(i, "scenario", "no scenarios/colocation/" + name + ".yaml");
    }
    specs.emplace(name, load_colocation(file.string(), {}, catalog));
  }
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    ColocationSpec& s = specs.at(csv.cell(i, "scenario"));
    const auto k = csv.integer(i, "jobs");
    if (!k || *k < 1 || *k > 1024) csv.fail(i, "jobs", "needs a job count between 1 and 1024");
    const std::optional<Strategy> st = strategy_named(csv.cell(i, "strategy"));
    if (!st) csv.fail(i, "strategy", "unknown strategy '" + csv.cell(i, "strategy") + "' (valid: " + strategy_names() + ")");
    if (*st == Strategy::mig && !s.accelerator.mig) csv.fail(i, "strategy", s.accelerator.name + " has no MIG");
    if (std::find(s.strategies.begin(), s.strategies.end(), *st) == s.strategies.end()) s.strategies.push_back(*st);
    if (std::find(s.jobs.begin(), s.jobs.end(), static_cast<int>(*k)) == s.jobs.end()) s.jobs.push_back(static_cast<int>(*k));
  }
  for (auto& [name, s] : specs) {
    std::sort(s.jobs.begin(), s.jobs.end());
    runs[name] = run_colocation(s);
  }
  output::Column jobs{"jobs", "count", "K", true, {}, {}}, published{"published_speedup", "1", "aggregate throughput / one job at a time, published", false, {}, {}},
      reference{"published_reference", "1", "one job at a time on the published axis (published value = published_speedup x this)", false, {}, {}},
      model{"model_speedup", "1", "the same, simulated", false, {}, {}}, error{"error", "1", "model / published - 1", false, {}, {}},
      tolerance{"tolerance", "1", "accepted |error|", false, {}, {}}, inside{"within_tolerance", "1", "1 if |error| <= tolerance", true, {}, {}};
  std::vector<std::string> scenario, strategy, accelerator, source;
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const std::string name = csv.cell(i, "scenario"), st = csv.cell(i, "strategy");
    const int k = static_cast<int>(*csv.integer(i, "jobs"));
    const auto pub = csv.number(i, "published_speedup");
    const auto tol = csv.number(i, "tolerance");
    if (!pub || !(*pub > 0)) csv.fail(i, "published_speedup", "needs a positive number");
    // K jobs sharing one GPU: their aggregate throughput over one at a time is at most about K
    // (each as fast as alone) and never a thousand times more.
    if (*pub > 1000) csv.fail(i, "published_speedup", "must be at most 1000 (aggregate over one job at a time)");
    if (!tol || !(*tol > 0)) csv.fail(i, "tolerance", "needs a positive number");
    // Curves normalised to another baseline than one job at a time of the same kind (HFTA plots
    // every precision against serial fp32) say where that job sits on their axis.
    std::optional<double> ref = 1.0;
    if (csv.has_column("reference") && !csv.cell(i, "reference").empty()) ref = csv.number(i, "reference");
    if (!ref || !(*ref > 0)) csv.fail(i, "reference", "needs a positive number (empty: 1)");
    const double speedup = *pub / *ref;
    double got = std::nan("");
    for (const ColocationPoint& p : runs.at(name)) {
      if (p.jobs == k && st == strategy_name(p.strategy) && p.status == "ok") got = p.speedup;
    }
    scenario.push_back(name);
    strategy.push_back(st);
    accelerator.push_back(specs.at(name).accelerator.name);
    source.push_back(csv.has_column("source") ? csv.cell(i, "source") : "-");
    jobs.values.push_back(k);
    published.values.push_back(speedup);
    reference.values.push_back(*ref);
    model.values.push_back(got);
    error.values.push_back(got / speedup - 1);
    tolerance.values.push_back(*tol);
    inside.values.push_back(std::abs(got / speedup - 1) <= *tol ? 1 : 0);
  }
  output::Table t;
  t.columns = {output::text_column("scenario", "scenarios/colocation file", scenario),
               output::text_column("accelerator", "catalog kind", accelerator),
               output::text_column("strategy", "sharing strategy", strategy), jobs, published, reference, model, error, tolerance, inside,
               output::text_column("source", "where the published value comes from", source)};
  return t;
}

// The co-location simulation against K processes measured sharing a real GPU
// (scalepoint-coloc-bench, calibration/data/colocation/h100_coloc_bench.csv). The bench's loops are
// synthetic, so each becomes simulated jobs directly: per step `launches_per_step` kernels of
// `width_sms` SMs lasting kernel_us plus the GPU's kernel latency, each launch after gap_us plus
// the host's cost of a launch, one synchronisation a step.
namespace {
constexpr double kTolerance = 0.10;  // measured repeatability 0.5 %; the rest is the model's
constexpr double kHostCores = 16;    // files without host_cores: the H100 node of h100_coloc_bench.csv

// The row of (kind, case, sharing, jobs) in the first run that has it.
std::size_t row_of(const config::CsvTable& t, const std::string& kind, const std::string& name,
                   const std::string& sharing, int jobs) {
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.cell(i, "kind") == kind && t.cell(i, "case") == name && t.cell(i, "sharing") == sharing &&
        t.integer(i, "jobs") == jobs)
      return i;
  }
  throw InputError({t.file(), 0, 0}, "case", "no " + kind + " row '" + name + "' (" + sharing + ", K = " +
                                               std::to_string(jobs) + ") to derive the time-slicing constants from");
}

double positive(const config::CsvTable& t, std::size_t row, const std::string& column) {
  const auto v = t.number(row, column);
  if (!v || !(*v > 0)) t.fail(row, column, "needs a positive number");
  return *v;
}

std::int64_t count(const config::CsvTable& t, std::size_t row, const std::string& column, std::int64_t most) {
  const auto v = t.integer(row, column);
  if (!v || *v < 1 || *v > most) t.fail(row, column, "needs a whole number between 1 and " + std::to_string(most));
  return *v;
}
}  // namespace

TimeSlicingDerivation derive_time_slicing(const config::CsvTable& t, Duration kernel_latency) {
  TimeSlicingDerivation d;
  const double latency_us = to_seconds(kernel_latency) * 1e6;
  // A host-bound loop alone: a step is its launches' host time and the last kernel.
  std::size_t r = row_of(t, "colocation", "host_bound", "time_slicing", 1);
  const double per_step_us = positive(t, r, "makespan_s") / positive(t, r, "steps") * 1e6;
  const double launch_us = (per_step_us - positive(t, r, "kernel_us") - latency_us) / positive(t, r, "launches_per_step") -
                           t.number(r, "gap_us").value_or(0);
  if (!(launch_us >= 0)) t.fail(r, "makespan_s", "too short for its launches, gaps and kernel: no host time is left per launch");
  // A launch costs the host microseconds; a second per launch is a unit slip, and would overflow
  // the simulated time.
  if (launch_us > 10'000) t.fail(r, "makespan_s", "implies more than 10 ms of host time per launch (is it in seconds?)");
  d.launch_cost = seconds(launch_us * 1e-6);
  const auto has = [&](const char* kind, const char* name) {
    for (std::size_t i = 0; i < t.rows(); ++i) {
      if (t.cell(i, "kind") == kind && t.cell(i, "case") == name && t.cell(i, "sharing") == "time_slicing") return true;
    }
    return false;
  };
  // Both are needed for the fixed point; without either the H100's constants stay.
  if (!has("colocation", "queued_long") || !has("probe", "beside_long_kernels")) return d;
  // Streams that never run dry switch at each slice's end: W of work per step costs W + n switches,
  // n = ceil(W / slice). A short kernel beside long ones waits the slice's remainder and a switch,
  // at most slice + switch beyond its round trip alone. Both together, by fixed point on n.
  r = row_of(t, "colocation", "queued_long", "time_slicing", 1);
  const double work_us = positive(t, r, "makespan_s") / positive(t, r, "steps") * 1e6;
  std::int64_t most = 1;  // the most jobs measured: the loss per switch is steadiest there
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.cell(i, "kind") == "colocation" && t.cell(i, "case") == "queued_long" && t.cell(i, "sharing") == "time_slicing")
      most = std::max(most, count(t, i, "jobs", 1024));
  }
  r = row_of(t, "colocation", "queued_long", "time_slicing", static_cast<int>(most));
  const double speedup = positive(t, r, "speedup");
  if (speedup >= 1) t.fail(r, "speedup", "a queued loop cannot gain from time slicing (needs a speedup below 1)");
  const std::size_t probe = row_of(t, "probe", "beside_long_kernels", "time_slicing", 2);
  const double waits = positive(t, probe, "latency_max_us") -
                       positive(t, row_of(t, "probe", "alone", "time_slicing", 1), "latency_median_us");
  if (!(waits > 0)) t.fail(probe, "latency_max_us", "no longer than the probe's round trip alone: no slice to measure");
  double switches = std::ceil(work_us / waits), switch_us = 0;
  for (int i = 0; i < 100; ++i) {
    switch_us = work_us * (1 / speedup - 1) / switches;
    const double next = std::ceil(work_us / (waits - switch_us));
    if (!(waits - switch_us > 0)) t.fail(r, "speedup", "implies a switch longer than the probe's longest wait");
    if (next == switches) {
      if (seconds((waits - switch_us) * 1e-6) < models::kShortestTimeSlice) {
        t.fail(probe, "latency_max_us", "implies a time slice below 1 us (is it in microseconds?)");
      }
      d.time_slice = seconds((waits - switch_us) * 1e-6);
      d.switch_cost = seconds(switch_us * 1e-6);
      d.slice_measured = true;
      return d;
    }
    switches = next;
  }
  t.fail(r, "speedup", "with the probe's wait, no consistent number of switches per step (the fixed point cycles)");
}

output::Table validate_sharing_bench(const std::string& bench_csv, const models::Catalog& catalog,
                                     TimeSlicingDerivation* derived_out) {
  const config::CsvTable t = config::CsvTable::read_rows(bench_csv);
  const ColocationSpec defaults;
  // One GPU per file: every row's device must name the same catalog kind.
  std::optional<models::Accelerator> gpu;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::optional<models::Accelerator> a = catalog.find_accelerator(t.cell(i, "device"));
    if (!a) {
      std::vector<std::string> kinds;
      for (const models::Accelerator& k : catalog.accelerators()) kinds.push_back(k.name);
      t.fail(i, "device", models::unknown_accelerator_message(t.cell(i, "device"), kinds));
    }
    if (gpu && a->name != gpu->name) t.fail(i, "device", a->name + " in a file of " + gpu->name + " rows: one GPU per file");
    if (!gpu) gpu = a;
  }
  if (!gpu) throw InputError({bench_csv, 0, 0}, "", "no rows to compare with");
  const TimeSlicingDerivation derived = derive_time_slicing(t, gpu->compute.kernel_latency);
  if (derived_out) *derived_out = derived;
  const auto power = models::accelerator_power(*gpu, models::default_power_calibration());

  std::vector<std::string> run, name, sharing, use;
  output::Column jobs{"jobs", "count", "K", true, {}, {}}, width{"width_sms", "SMs", "a kernel's SMs", true, {}, {}},
      measured{"measured_speedup", "1", "K x one job's makespan / makespan, measured", false, {}, {}},
      model{"model_speedup", "1", "the same, simulated", false, {}, {}},
      measured_s{"measured_makespan_s", "s", "measured", false, {}, {}},
      model_s{"model_makespan_s", "s", "simulated", false, {}, {}},
      error{"error", "1", "model / measured speedup - 1", false, {}, {}},
      tolerance{"tolerance", "1", "accepted |error|", false, {}, {}},
      inside{"within_tolerance", "1", "1 if |error| <= tolerance", true, {}, {}};
  std::map<std::string, double> one_job;  // simulated K = 1 makespan per run, case and sharing
  std::map<std::string, int> seen;        // line of each (run, case, sharing, K)
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.cell(i, "kind") != "colocation") continue;
    // Files joined from several runs say which in `run`; the bench's own output has one.
    const std::string batch = t.has_column("run") ? t.cell(i, "run") : "1";
    const std::string key = batch + "/" + t.cell(i, "case") + "/" + t.cell(i, "sharing");
    const std::int64_t k = count(t, i, "jobs", 64);
    const auto [at, fresh] = seen.emplace(key + "/" + std::to_string(k), t.line(i));
    if (!fresh) t.fail(i, "jobs", "repeats the row of line " + std::to_string(at->second));
    const double kernel_us = positive(t, i, "kernel_us"), gap_us = t.number(i, "gap_us").value_or(0);
    if (kernel_us > 1e6) t.fail(i, "kernel_us", "at most 1 s a kernel");
    if (!(gap_us >= 0 && gap_us <= 1e6)) t.fail(i, "gap_us", "needs a host gap between 0 and 1e6 us");
    models::StepKernel kernel;
    kernel.alone = seconds(kernel_us * 1e-6) + gpu->compute.kernel_latency;
    kernel.width = static_cast<int>(count(t, i, "width_sms", std::max(1, gpu->compute.parallel_units)));
    const std::vector<models::StepKernel> kernels(static_cast<std::size_t>(count(t, i, "launches_per_step", 10000)),
                                                  kernel);
    models::DeviceSharing d;
    const std::string mode = t.cell(i, "sharing");
    if (mode != "time_slicing" && mode != "mps") t.fail(i, "sharing", "time_slicing or mps");
    d.mode = mode == "mps" ? models::DeviceSharing::Mode::concurrent : models::DeviceSharing::Mode::exclusive;
    d.sms = std::max(1, gpu->compute.parallel_units);
    d.memory_bandwidth = gpu->memory_bandwidth * gpu->compute.memory_efficiency;
    // The constants this file gives, so that another GPU's measurements check the mechanism with
    // that GPU's own slice and switch (the H100's are the scenarios' defaults).
    d.time_slice = derived.time_slice;
    d.switch_cost = derived.switch_cost;
    d.admit = static_cast<int>(k);
    d.host_cores = t.has_column("host_cores") && !t.cell(i, "host_cores").empty() ? positive(t, i, "host_cores") : kHostCores;
    if (power) d.power = *power;
    std::vector<models::ColocatedJob> loops(static_cast<std::size_t>(k));
    for (models::ColocatedJob& j : loops) {
      j.kernels = &kernels;
      j.steps = static_cast<double>(count(t, i, "steps", 10'000'000));
      j.dispatch_per_launch = seconds(gap_us * 1e-6) + derived.launch_cost;
    }
    const double makespan = to_seconds(models::simulate_colocation(loops, d).makespan);
    if (k == 1) one_job[key] = makespan;
    if (!one_job.count(key)) t.fail(i, "jobs", "has no K = 1 row of its case before it (the speedup's reference)");
    const double got = k * one_job[key] / makespan, pub = positive(t, i, "speedup");
    run.push_back(batch);
    name.push_back(t.cell(i, "case"));
    sharing.push_back(mode);
    use.push_back(k == 1                                                 ? "reference (K = 1)"
                  : name.back() == "queued_long" && mode == "time_slicing" && derived.slice_measured ? "derives switch_cost"
                                                                            : "validation");
    jobs.values.push_back(static_cast<double>(k));
    width.values.push_back(kernel.width);
    measured.values.push_back(pub);
    model.values.push_back(got);
    measured_s.values.push_back(positive(t, i, "makespan_s"));
    model_s.values.push_back(makespan);
    error.values.push_back(got / pub - 1);
    tolerance.values.push_back(kTolerance);
    inside.values.push_back(std::abs(got / pub - 1) <= kTolerance ? 1 : 0);
  }
  output::Table out;
  out.columns = {output::text_column("run", "bench run", run), output::text_column("case", "bench loop", name),
                 output::text_column("sharing", "time_slicing or mps", sharing), jobs, width, measured, model, error,
                 tolerance, inside, measured_s, model_s,
                 output::text_column("use", "what the row is for: validation, or a constant derived from it", use)};
  return out;
}

}  // namespace sp
