// scalepoint-coloc-bench: how one GPU shares itself among K processes, and what it draws meanwhile,
// measured for the co-location model (models/colocation) and the energy model (models/energy).
//  - co-location: K worker processes, each a synthetic training loop (per step, `launches` kernels
//    of `width` SMs and about `kernel_us` each, every launch preceded by `gap_us` of busy host work,
//    then one synchronisation), started together; makespan against K x the one-job time gives the
//    speedup over running them one after another, as HFTA reports it. Run once under the default
//    scheduling (time slicing) and once with the MPS daemon started (the script's --sharing mps).
//  - probe: the round-trip latency of a short kernel of one process while another runs long
//    kernels on all but a few SMs: under time slicing it waits for the other's slice to end.
//  - power: the board's energy counter (NVML) over idle, an idle context, FMA kernels on 1..all SMs
//    and bf16 GEMMs of three sizes;
//  - memory: the device memory in use (NVML) while K processes each hold a bare CUDA context.
// A worker kernel is a block of 1,024 threads holding 120 KB of shared memory, so one block fills
// one SM and `width` blocks hold exactly `width` SMs; each thread runs four independent FMA chains,
// real work that a preempted kernel must still finish.
// Builds with nvcc alone (NVML is opened at run time; without it the energy columns are empty):
//   nvcc -O2 -std=c++17 -arch=sm_90 -I. -I<CLI11 include> calibration/bench/coloc_bench.cu
//        -lcublasLt -ldl -o scalepoint-coloc-bench
// (calibration/bench/run_coloc_bench.sh does that and runs it with and without MPS).
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "calibration/bench/gpu_timing.cuh"
#include "calibration/bench/coloc_nvml.hpp"

namespace {

using namespace gpubench;
constexpr int kThreads = 1024;
constexpr int kSharedBytes = 120 << 10;  // over half an SM's 228 KB (H100), 164 KB (A100): one block per SM

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}
void spin_until(long long t) {
  while (now_ns() < t) {
  }
}

__global__ void fma_work(float* out, int iterations) {
  extern __shared__ float shared[];
  float a = threadIdx.x, b = a + 1, c = a + 2, d = a + 3;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, 0.999999f, 1e-7f);
    b = fmaf(b, 0.999999f, 1e-7f);
    c = fmaf(c, 0.999999f, 1e-7f);
    d = fmaf(d, 0.999999f, 1e-7f);
  }
  shared[threadIdx.x] = a + b + c + d;
  __syncthreads();
  if (shared[threadIdx.x] == -1.0f) out[blockIdx.x] = shared[(threadIdx.x + 1) % kThreads];  // never
}

struct Loop {  // one worker's synthetic training loop
  int width = 1, iterations = 1000, launches = 1;
  double gap_us = 0;
  long long steps = 1, start_ns = 0;
  bool probe = false;  // synchronise after every launch and record its round trip
  double hold_mib = 0;  // allocated and written before the warm-up: a context's footprint
  bool copy_per_step = false;  // end each step by copying a result to pinned host memory (loss.item())
};

void prepare(float** out, cudaStream_t* stream) {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFuncSetAttribute(fma_work, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  CHECK(cudaMalloc(out, 4096 * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
}

// Prints "ready_ns start_ns end_ns latency_median_us latency_p90_us latency_max_us".
int worker(const Loop& l) {
  float* out = nullptr;
  cudaStream_t s = nullptr;
  prepare(&out, &s);
  void* held = nullptr;
  if (l.hold_mib > 0) {
    const size_t bytes = static_cast<size_t>(l.hold_mib * 1048576.0);
    CHECK(cudaMalloc(&held, bytes));
    CHECK(cudaMemsetAsync(held, 1, bytes, s));
  }
  fma_work<<<l.width, kThreads, kSharedBytes, s>>>(out, l.iterations);  // warm-up: module load
  CHECK(cudaStreamSynchronize(s));
  float* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, sizeof(float)));
  const long long ready = now_ns();
  spin_until(l.start_ns);
  const long long start = now_ns();
  std::vector<double> latency;
  for (long long step = 0; step < l.steps; ++step) {
    for (int k = 0; k < l.launches; ++k) {
      spin_until(now_ns() + static_cast<long long>(l.gap_us * 1e3));
      const long long t = now_ns();
      fma_work<<<l.width, kThreads, kSharedBytes, s>>>(out, l.iterations);
      if (l.probe) {
        CHECK(cudaStreamSynchronize(s));
        latency.push_back((now_ns() - t) * 1e-3);
      }
    }
    if (l.copy_per_step) CHECK(cudaMemcpyAsync(pinned, out, sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaGetLastError());
  const long long end = now_ns();
  std::sort(latency.begin(), latency.end());
  const auto at = [&](double q) { return latency.empty() ? NAN : latency[static_cast<size_t>(q * (latency.size() - 1))]; };
  std::printf("%lld %lld %lld %.3f %.3f %.3f\n", ready, start, end, at(0.5), at(0.9), at(1.0));
  return 0;
}

// Prints the median time of one FMA iteration on one SM, in ns.
int calibrate() {
  float* out = nullptr;
  cudaStream_t s = nullptr;
  prepare(&out, &s);
  cudaEvent_t a = nullptr, b = nullptr;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  constexpr int kIterations = 200000;
  std::vector<double> ns;
  for (int i = 0; i < 12; ++i) {
    CHECK(cudaEventRecord(a, s));
    fma_work<<<1, kThreads, kSharedBytes, s>>>(out, kIterations);
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 2) ns.push_back(ms * 1e6 / kIterations);
  }
  std::sort(ns.begin(), ns.end());
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  char bus[32] = "";
  CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  std::printf("%.6f %d %s %s\n", ns[ns.size() / 2], p.multiProcessorCount, bus, p.name);
  return 0;
}

int hold(double seconds) {  // a context that launches nothing
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  const long long start = now_ns();
  usleep(static_cast<useconds_t>(seconds * 1e6));
  std::printf("%lld %lld %lld nan nan nan\n", start, start, now_ns());
  return 0;
}

}  // namespace

#include "calibration/bench/coloc_gemm.cuh"
#include "calibration/bench/coloc_driver.cuh"

int main(int argc, char** argv) {
  CLI::App app{"scalepoint-coloc-bench: K processes sharing one GPU (time slicing or MPS), and its power"};
  coloc::Options o;
  Loop l;
  std::string role = "driver";
  double seconds = 0;
  int gemm_size = 8192;
  app.add_option("--out", o.out, "CSV to write")->capture_default_str();
  app.add_option("--sharing", o.sharing, "the sharing in force: time_slicing, or mps when the daemon runs (checked)")
      ->capture_default_str()
      ->check(CLI::IsMember({"time_slicing", "mps"}));
  app.add_option("--jobs", o.jobs, "job counts K")->capture_default_str()->delimiter(',');
  app.add_option("--job-seconds", o.job_seconds, "one job's length alone")->capture_default_str();
  app.add_option("--cases", o.cases, "co-location cases to run (default all)")->delimiter(',');
  app.add_flag("--no-colocation", o.no_colocation, "skip the co-location cases");
  app.add_flag("--no-power", o.no_power, "skip the power phases");
  app.add_flag("--no-probe", o.no_probe, "skip the latency probe");
  app.add_option("--role", role, "internal: driver, worker, calibrate, hold, gemm")->capture_default_str();
  app.add_option("--width", l.width, "internal")->check(CLI::Range(1, 1024));
  app.add_option("--iterations", l.iterations, "internal");
  app.add_option("--launches", l.launches, "internal");
  app.add_option("--gap-us", l.gap_us, "internal");
  app.add_option("--steps", l.steps, "internal");
  app.add_option("--start-ns", l.start_ns, "internal");
  app.add_flag("--probe", l.probe, "internal");
  app.add_option("--seconds", seconds, "internal");
  app.add_option("--gemm-size", gemm_size, "internal")->check(CLI::Range(256, 16384));
  app.add_flag("--no-memory", o.no_memory, "skip the memory-per-context phase");
  app.add_flag("--copy-per-step", o.copy_per_step, "end each co-location step with a 4-byte copy to the host");
  app.add_option("--hold-mib", o.hold_mib, "device memory each co-location worker allocates and writes first (MiB)")
      ->check(CLI::Range(0.0, 1e6));
  try {
    app.parse(argc, argv);
    l.hold_mib = o.hold_mib;
    l.copy_per_step = o.copy_per_step;
    if (role == "worker") return worker(l);
    if (role == "calibrate") return calibrate();
    if (role == "hold") return hold(seconds);
    if (role == "gemm") return gemm_load(seconds, static_cast<unsigned long long>(gemm_size));
    coloc::check_cases(o.cases);
    coloc::check_sharing(o.sharing);
    if (!(o.job_seconds > 0 && o.job_seconds <= 600)) throw UsageError("--job-seconds: between 0 and 600 s");
    if (o.jobs.empty() || o.jobs.front() != 1 || std::any_of(o.jobs.begin(), o.jobs.end(), [](int k) { return k < 1; }))
      throw UsageError("--jobs: positive counts starting with 1 (the one-job time every speedup divides)");
    return coloc::drive(o, argv[0]);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "scalepoint-coloc-bench: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalepoint-coloc-bench: error: %s\n", e.what());
    return 1;
  }
}
