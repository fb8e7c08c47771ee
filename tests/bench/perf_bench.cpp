// Speed and memory benchmarks (Google Benchmark), not tests: run them with
//   build/scalepoint-perf --benchmark_counters_tabular=true
// and compare with the targets in results/bench/README.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>

#include "calibration/predict/predict_table.hpp"
#include "models/catalog.hpp"
#include "models/collective/chunk_sim.hpp"
#include "models/collective/fidelity.hpp"
#include "models/goodput/goodput.hpp"
#include "models/training/layout_search.hpp"
#include "models/step/shared_fabric.hpp"
#include "models/step/step_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/engine.hpp"
#include "sim/scenario/colocation.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace sp;
using namespace sp::models;

const Catalog& catalog() {
  static const Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return c;
}

const Platform& dgx() {
  static const Platform p =
      parse_platform(config::load_file(std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml"), catalog());
  return p;
}

const Workload& workload(const std::string& name) {
  static std::map<std::string, Workload> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, catalog().workload(config::load_string("w: " + name + "\n", "bench").at("w"))).first;
  }
  return it->second;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// The raw engine: a self-rescheduling cascade of small events (the cost of schedule + dispatch).
void BM_EngineEvents(benchmark::State& state) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine e;
    std::int64_t left = 1 << 20;
    std::function<void()> tick;
    tick = [&] {
      if (--left > 0) e.schedule_after(picoseconds(1 + (left & 7)), tick);
    };
    for (int i = 0; i < 64; ++i) e.schedule_after(picoseconds(i), tick);
    e.run();
    events += e.events_processed();
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Unit(benchmark::kMillisecond);

// A chunk-level ring all-reduce over 1024 ranks (128 DGX H100 nodes): 1024 x 2046 messages.
void BM_ChunkRing(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const Group g = packed_group(dgx().topology, ranks);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const ChunkResult r = simulate_chunks(dgx(), g, CollectiveOp::all_reduce, Algorithm::ring, Protocol::simple,
                                          Bytes(256.0 * (1 << 20)));
    events += r.events;
    benchmark::DoNotOptimize(r.time);
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_ChunkRing)->Arg(1024)->Unit(benchmark::kMillisecond);

// One data-parallel BERT training step (27 gradient buckets) at N GPUs, per fidelity.
void BM_Step(benchmark::State& state, Fidelity fidelity) {
  const int n = static_cast<int>(state.range(0));
  const Workload& w = workload("bert");
  std::string why;
  const ParallelLayout lay = *resolve_layout(w.parallelism.all, dgx().topology, n, 4LL * n, why);
  for (auto _ : state) {
    const StepResult r = simulate_step(w, dgx(), lay, n, fidelity);
    benchmark::DoNotOptimize(r.step);
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK_CAPTURE(BM_Step, analytic, Fidelity::analytic)
    ->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Step, flow, Fidelity::flow)
    ->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Unit(benchmark::kMicrosecond);

// One collective at each fidelity (the chunk fidelity grows with ranks x steps).
void BM_ChunkAllReduce(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Group g = packed_group(dgx().topology, n);
  for (auto _ : state) {
    const CollectiveTiming t = time_collective(dgx(), g, CollectiveOp::all_reduce, Bytes(25.0 * (1 << 20)),
                                               {Algorithm::tree, std::nullopt}, Fidelity::chunk);
    benchmark::DoNotOptimize(t.time);
  }
}
BENCHMARK(BM_ChunkAllReduce)->Arg(1024)->Arg(4096)->Arg(16384)->Unit(benchmark::kMillisecond);

// One step of each workload with its v4.1 layout and typical global batch at N GPUs, its op
// graph built and played (the op-graph issue's targets: BERT at 1,024 GPUs under 10 ms analytic,
// Llama2-70B at 16,384 under 1 s flow); events per step as a counter.
void BM_WorkloadStep(benchmark::State& state, const char* name, Fidelity fidelity) {
  const int n = static_cast<int>(state.range(0));
  const Workload& w = workload(name);
  const ParallelSpec spec = w.parallelism.for_accelerators(n);
  std::string why;
  const int model = spec.tensor.value_or(1) * spec.context.value_or(1) * spec.pipeline.value_or(1);
  const ParallelLayout lay = *resolve_layout(spec, dgx().topology, n, typical_global_batch(w, n, n / model), why);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const StepResult r = simulate_step(w, dgx(), lay, n, fidelity);
    events = r.events;
    benchmark::DoNotOptimize(r.step);
  }
  state.counters["events_per_step"] = static_cast<double>(events);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK_CAPTURE(BM_WorkloadStep, bert_analytic, "bert", Fidelity::analytic)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WorkloadStep, bert_flow, "bert", Fidelity::flow)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WorkloadStep, llama2_70b_lora_analytic, "llama2_70b_lora", Fidelity::analytic)
    ->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WorkloadStep, llama2_70b_lora_flow, "llama2_70b_lora", Fidelity::flow)
    ->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WorkloadStep, retinanet_analytic, "retinanet", Fidelity::analytic)->Arg(1024)->Unit(benchmark::kMillisecond);
// A 405B-class step at 16,384 GPUs (Llama 3's TP8 PP16 DP128, 16 micro-batches; issue 34's
// target: under 1 s in flow fidelity).
BENCHMARK_CAPTURE(BM_WorkloadStep, llama3_405b_flow, "llama3_405b_pretrain", Fidelity::flow)
    ->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WorkloadStep, stable_diffusion_analytic, "stable_diffusion", Fidelity::analytic)
    ->Arg(1024)->Unit(benchmark::kMillisecond);

// A whole shipped scenario as `scalepoint run` does it: 8 accelerator counts, the layout search,
// 100 Monte Carlo replicates each (the speed target: under 1 s).
void BM_Scenario(benchmark::State& state, const char* name) {
  const ScenarioSpec spec =
      load_scenario(std::string(SP_SOURCE_DIR) + "/scenarios/" + name + ".yaml", {}, catalog());
  for (auto _ : state) {
    const auto points = run_scenario(spec);
    benchmark::DoNotOptimize(points.data());
  }
}
BENCHMARK_CAPTURE(BM_Scenario, bert, "bert")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Scenario, llama2_70b_lora, "llama2_70b_lora")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Scenario, retinanet, "retinanet")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Scenario, stable_diffusion, "stable_diffusion")->Unit(benchmark::kMillisecond);
// The planning scenarios: 5 sizes of Llama2-70B pre-training with pipelines searched beside
// layouts without one, and Llama 3 405B at 16k-131k GPUs with failures (under 2 s each).
BENCHMARK_CAPTURE(BM_Scenario, llama2_70b_pretrain, "llama2_70b_pretrain")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Scenario, llama3_405b_goodput, "llama3_405b_goodput")->Unit(benchmark::kMillisecond)->Iterations(2);

// `scalepoint predict` of every MLPerf v4.1 row (109 with a time, 110 in all) with the layout
// search and 100 replicates each, the platforms and calibration loaded once (the scaling issue's
// target: under 5 s).
void BM_PredictV41(benchmark::State& state) {
  const calibration::PlatformCatalog platforms(catalog());
  const config::CsvTable rows =
      config::CsvTable::read(std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv");
  const calibration::SystemModelInputs in{catalog(), platforms, default_calibration(), 100, 1};
  for (auto _ : state) {
    const output::Table t = calibration::predict_table(rows, in);
    benchmark::DoNotOptimize(t.rows());
  }
  state.counters["rows"] = static_cast<double>(rows.rows());
}
BENCHMARK(BM_PredictV41)->Unit(benchmark::kMillisecond);

// One co-location point of ResNet-18 on an A100 (scenarios/colocation/resnet18_a100.yaml, one
// epoch: 391 steps of 379 kernels a job) at K jobs, the strategy given: the event rate of the
// kernel-by-kernel simulation. items/s counts engine events.
void BM_Colocation(benchmark::State& state, const char* strategy) {
  ColocationSpec spec = load_colocation(std::string(SP_SOURCE_DIR) + "/scenarios/colocation/resnet18_a100.yaml",
                                        {config::parse_override(std::string("strategies=[") + strategy + "]"),
                                         config::parse_override("jobs=[" + std::to_string(state.range(0)) + "]")},
                                        catalog());
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto points = run_colocation(spec);
    events += points.at(0).run.events;
    benchmark::DoNotOptimize(points.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK_CAPTURE(BM_Colocation, sequential, "sequential")->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Colocation, time_slicing, "time_slicing")->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Colocation, mps, "mps")->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

// The layout search for the same 405B model at 16,384 GPUs and Llama 3's 2,048-sequence batch:
// every TP, CP, PP, interleaving, recompute and micro-batch that fits (issue 34's target: under 30 s).
void BM_LayoutSearch405B(benchmark::State& state) {
  const Workload& w = workload("llama3_405b_pretrain");
  std::string layout;
  for (auto _ : state) {
    const ParallelSpec spec = w.parallelism.for_accelerators(16384);
    const auto best = fastest_layout(w, dgx(), 16384, 2048, spec, spec.search.value_or(LayoutSearch{}));
    layout = best ? best->layout.describe() : "none";
    benchmark::DoNotOptimize(best);
  }
  state.SetLabel(layout);
}
BENCHMARK(BM_LayoutSearch405B)->Unit(benchmark::kMillisecond)->Iterations(1);

// A 54-day run of Llama 3 405B on 16,384 H100s (2,048 nodes) with failures, checkpoints and
// restarts, 100 Monte Carlo replicates on the event engine (issue 30's target: under 2 s): about
// 500 failures and 17,000 checkpoints a replicate at the default reliability.
void BM_GoodputRun(benchmark::State& state) {
  TrainingEstimate e;
  e.accelerators = 16384;
  e.nodes = 2048;
  e.run_time = e.time_to_train = seconds(54 * 86400.0);
  e.step.step = seconds(6.2);
  double interruptions = 0, goodput = 0;
  for (auto _ : state) {
    const GoodputEstimate g = estimate_goodput(default_reliability(), e, workload("llama3_405b_pretrain"), dgx(),
                                               100, 1, 16384);
    interruptions = g.interruptions;
    goodput = g.goodput;
    benchmark::DoNotOptimize(g.mean_wall_s);
  }
  state.counters["interruptions"] = interruptions;
  state.counters["goodput"] = goodput;
}
BENCHMARK(BM_GoodputRun)->Unit(benchmark::kMillisecond);

// Eight 1,024-GPU BERT jobs (128 nodes each) for 100 steps each, together in flow fidelity on a
// DGX H100 fat tree of 32 leaves of 32 nodes at 4:1, spread (issue 31's target: under 10 s).
// items/s counts engine events.
void BM_SharedFabric(benchmark::State& state) {
  Platform p = dgx();
  p.topology.tiers.back().nodes_per_leaf = 32;
  p.topology.tiers.back().oversubscription = 4;
  const Workload& w = workload("bert");
  std::string why;
  const auto lay = resolve_layout(w.parallelism.for_accelerators(1024), p.topology, 1024, 4096, why);
  const StepGraph g = build_step_graph(w, p, *lay);
  const auto where = place_jobs(Placement::spread, std::vector<int>(8, 128), 32, 32);
  std::vector<FabricJob> jobs;
  for (std::size_t j = 0; j < where.size(); ++j) jobs.push_back({&g, where[j], 100, microseconds(100.0 * static_cast<double>(j))});
  std::uint64_t events = 0;
  double mean_ms = 0;
  for (auto _ : state) {
    const FabricRun r = run_shared_fabric(p, 32, jobs);
    events += r.events;
    mean_ms = to_seconds(r.jobs[0].mean()) * 1e3;
    benchmark::DoNotOptimize(r.jobs.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["step_ms"] = mean_ms;
}
BENCHMARK(BM_SharedFabric)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
