// scalepoint-gpu-bench's plumbing: error checks, operand fills, the small kernels of the memory
// and latency probes, and the two ways of timing: inside a CUDA graph (one GPU: a graph of
// `per_graph` back-to-back launches replayed, so host launch cost is excluded and a sample is the
// time per kernel as a training step's graph runs it) and between events (NCCL over several GPUs).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#ifdef SCALEPOINT_HAVE_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/bench/bench_stats.hpp"

namespace gpubench {

using u64 = unsigned long long;
using std::to_string;

struct UsageError : std::runtime_error {  // exit status 2; any other exception is a GPU failure, 1
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const char* lib, const char* what, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + to_string(line) + ": " + lib + " error '" + what + "' from " +
                           call);
}
inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail("CUDA", cudaGetErrorString(e), call, file, line);
}
inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("cuBLAS", cublasLtGetStatusString(s), call, file, line);
}
#ifdef SCALEPOINT_HAVE_NCCL
inline void check(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess) fail("NCCL", ncclGetErrorString(r), call, file, line);
}
#endif
#define CHECK(call) ::gpubench::check((call), #call, __FILE__, __LINE__)

struct Timing {
  int iterations = 20, warmup = 5;
  int per_graph = 20;  // launches captured back to back in one graph
};

inline std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  CHECK(cudaMemGetInfo(&free, &total));
  return free / 10 * 9;  // headroom for the libraries' own allocations
}

// Pseudo-random values in [-1, 1): all-zero operands let tensor cores draw less power and hold
// higher clocks than training data does, which would overstate throughput.
template <class T>
__global__ void fill(T* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u;
    h = (h ^ (h >> 16)) * 0x45d9f3bu;
    p[i] = T(static_cast<float>((h ^ (h >> 16)) & 0xffffu) / 32768.0f - 1.0f);
  }
}

inline void fill_random(void* p, cudaDataType_t type, std::size_t n, cudaStream_t s) {
  if (type == CUDA_R_16F) fill<<<1024, 256, 0, s>>>(static_cast<__half*>(p), n);
  if (type == CUDA_R_16BF) fill<<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n);
  if (type == CUDA_R_8F_E4M3) fill<<<1024, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n);
  if (type == CUDA_R_32F) fill<<<1024, 256, 0, s>>>(static_cast<float*>(p), n);
  CHECK(cudaGetLastError());
}

// 16-byte loads and stores, the widest a thread issues: narrower ones leave bandwidth unused.
__global__ void copy(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

// The latency probes: a kernel that does nothing, and a small element-wise one (y = a x + y on
// bf16), the kind a training step launches by the thousand.
__global__ void empty_kernel() {}

__global__ void axpy(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    y[i] = __float2bfloat16(0.5f * __bfloat162float(x[i]) + __bfloat162float(y[i]));
}

/// Per-launch time of `enqueue` (one launch on `stream`): t.per_graph launches captured in one
/// graph, replayed t.warmup times untimed, then t.iterations times between events.
template <class F>
sp::bench::TimingSummary time_in_graph(cudaStream_t stream, const Timing& t, F&& enqueue) {
  enqueue();  // outside the capture: lets libraries allocate and pick their kernels first
  CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < t.per_graph; ++i) enqueue();
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < t.warmup; ++i) CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t start = nullptr, stop = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int i = 0; i < t.iterations; ++i) {
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms * 1e-3 / t.per_graph);
  }
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return sp::bench::summarise_timings(samples);
}

/// Time of one call of `enqueue` across several GPUs' streams, between events: a sample is the
/// slowest stream's time. All repetitions are queued back to back and read after one
/// synchronisation, so samples are execution times, not host launch latencies.
template <class F>
sp::bench::TimingSummary time_between_events(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                                             const Timing& t, F&& enqueue) {
  for (int i = 0; i < t.warmup; ++i) enqueue();
  const std::size_t n = devices.size(), reps = static_cast<std::size_t>(t.iterations);
  std::vector<cudaEvent_t> start(n * reps), stop(n * reps);
  for (std::size_t i = 0; i < n * reps; ++i) {
    CHECK(cudaSetDevice(devices[i / reps]));  // an event belongs to the device current at creation
    CHECK(cudaEventCreate(&start[i]));
    CHECK(cudaEventCreate(&stop[i]));
  }
  CHECK(cudaSetDevice(devices[0]));
  for (std::size_t r = 0; r < reps; ++r) {
    for (std::size_t d = 0; d < n; ++d) CHECK(cudaEventRecord(start[d * reps + r], streams[d]));
    enqueue();
    for (std::size_t d = 0; d < n; ++d) CHECK(cudaEventRecord(stop[d * reps + r], streams[d]));
  }
  std::vector<double> samples(reps, 0.0);
  for (std::size_t i = 0; i < n * reps; ++i) {
    float ms = 0;
    CHECK(cudaEventSynchronize(stop[i]));
    CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
    samples[i % reps] = std::max(samples[i % reps], ms * 1e-3);
    CHECK(cudaEventDestroy(start[i]));
    CHECK(cudaEventDestroy(stop[i]));
  }
  return sp::bench::summarise_timings(samples);
}

}  // namespace gpubench
