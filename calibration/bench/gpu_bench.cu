// scalepoint-gpu-bench: what one GPU achieves (GEMM throughput, memory bandwidth) and what the GPUs
// of one node achieve together (NCCL all-reduce), for calibrating a platform's compute and
// intra-node figures. Run as
//   build/scalepoint-gpu-bench --out gpu_bench.csv
// A sample is GPU time between two CUDA events around one call. All repetitions of a size are queued
// back to back and read after one synchronisation, so samples are execution times, not host launch
// latencies. Columns: size is m (= n = k) for gemm and bytes otherwise; bytes is the operand bytes
// of a GEMM (A + B + D), the bytes read plus written by a copy, and nccl-tests' per-rank buffer for
// all-reduce. achieved comes from the median time.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#ifdef SCALEPOINT_HAVE_NCCL
#include <nccl.h>
#endif
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/bench/bench_stats.hpp"

namespace {

using u64 = unsigned long long;
using std::to_string;

struct UsageError : std::runtime_error {  // exit status 2; any other exception is a GPU failure, 1
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const char* lib, const char* what, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + to_string(line) + ": " + lib + " error '" + what +
                           "' from " + call);
}
void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail("CUDA", cudaGetErrorString(e), call, file, line);
}
void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("cuBLAS", cublasLtGetStatusString(s), call, file, line);
}
#ifdef SCALEPOINT_HAVE_NCCL
void check(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess) fail("NCCL", ncclGetErrorString(r), call, file, line);
}
#endif
#define CHECK(call) check((call), #call, __FILE__, __LINE__)

struct Options {
  std::string out = "gpu_bench.csv";
  std::vector<std::string> kinds = {"gemm", "memory", "nccl"};
  std::vector<std::string> dtypes = {"fp16", "bf16", "fp32", "fp8"};
  u64 min_gemm = 256, max_gemm = 16384, min_memory = 1ull << 20, max_memory = 4ull << 30;
  u64 min_nccl = 8, max_nccl = 1ull << 30;
  int factor = 2, iterations = 20, warmup = 5, device = 0;
};

struct Output {
  std::string rows, notes;
  void note(const std::string& text) {
    std::fprintf(stderr, "scalepoint-gpu-bench: skipped %s\n", text.c_str());
    notes += "# skipped: " + text + "\n";
  }
  void row(const char* kind, const char* op, const char* dtype, int ranks, u64 size, u64 bytes,
           const sp::bench::TimingSummary& s, double achieved, const char* unit) {
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%d,%llu,%llu,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%s\n", kind, op,
                  dtype, ranks, size, bytes, s.repetitions, s.min_s * 1e6, s.median_s * 1e6, s.p10_s * 1e6,
                  s.p90_s * 1e6, achieved, unit);
    rows += line;
    std::fputs(line, stdout);  // progress: the large sizes take seconds each
    std::fflush(stdout);
  }
};

// The largest of lo, lo * factor, ... up to hi whose buffers fit in `budget` bytes (0 if none);
// the sizes that do not fit are noted, not silently dropped.
template <class Bytes>
u64 largest_fitting(const std::string& what, u64 lo, u64 hi, int factor, std::size_t budget, Bytes bytes,
                    Output& out) {
  u64 top = 0;
  for (u64 s = lo; s <= hi && bytes(s) <= budget; s *= static_cast<u64>(factor)) top = s;
  const u64 next = top == 0 ? lo : top * static_cast<u64>(factor);
  if (next <= hi) out.note(what + " from size " + to_string(next) + " up: does not fit in free memory");
  return top;
}

std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  CHECK(cudaMemGetInfo(&free, &total));
  return free / 10 * 9;  // headroom for the libraries' own allocations
}

// Times o.iterations calls of `enqueue` after o.warmup untimed ones. With several streams (one per
// GPU) a sample is the slowest stream's time, as scalepoint-bench keeps the slowest rank's.
template <class F>
sp::bench::TimingSummary time_calls(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                                    const Options& o, F&& enqueue) {
  for (int i = 0; i < o.warmup; ++i) enqueue();
  const std::size_t n = devices.size(), reps = static_cast<std::size_t>(o.iterations);
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

void fill_random(void* p, cudaDataType_t type, std::size_t n, cudaStream_t s) {
  if (type == CUDA_R_16F) fill<<<1024, 256, 0, s>>>(static_cast<__half*>(p), n);
  if (type == CUDA_R_16BF) fill<<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n);
  if (type == CUDA_R_8F_E4M3) fill<<<1024, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n);
  if (type == CUDA_R_32F) fill<<<1024, 256, 0, s>>>(static_cast<float*>(p), n);
  CHECK(cudaGetLastError());
}

struct GemmType {
  const char* name;
  cudaDataType_t ab, d;  // operands A and B; output C = D
  cublasComputeType_t compute;
  u64 ab_size, d_size;
  int min_cc;  // major * 10 + minor
};
// In cuBLASLt, CUBLAS_COMPUTE_32F never down-converts to TF32, so fp32 is true fp32; tf32 is opt-in.
// fp8 writes bf16, as training recipes do, with cuBLASLt's default (not fast) accumulation.
constexpr GemmType kGemmTypes[] = {
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

// Every dtype through cuBLASLt in the TN layout (A transposed): the only layout it offers for fp8,
// so all dtypes are measured alike.
void bench_gemm(const Options& o, int cc, cudaStream_t stream, Output& out) {
  cublasLtHandle_t lt = nullptr;
  CHECK(cublasLtCreate(&lt));
  std::size_t ws_size = 32u << 20;  // NVIDIA's recommendation for Hopper; ample before it
  void* ws = nullptr;
  CHECK(cudaMalloc(&ws, ws_size));
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size,
                                             sizeof ws_size));
  for (const std::string& name : o.dtypes) {
    const GemmType& t = *std::find_if(std::begin(kGemmTypes), std::end(kGemmTypes),
                                      [&](const GemmType& g) { return name == g.name; });
    if (cc < t.min_cc) {
      out.note("gemm " + name + ": needs compute capability " + to_string(t.min_cc / 10) + "." +
               to_string(t.min_cc % 10) + ", the device has " + to_string(cc / 10) + "." +
               to_string(cc % 10));
      continue;
    }
    const auto bytes = [&](u64 m) { return m * m * (2 * t.ab_size + t.d_size); };
    const u64 top =
        largest_fitting("gemm " + name, o.min_gemm, o.max_gemm, o.factor, free_memory(), bytes, out);
    if (top == 0) continue;
    void *a = nullptr, *b = nullptr, *d = nullptr;  // sized for the largest m, reused by the smaller
    CHECK(cudaMalloc(&a, top * top * t.ab_size));
    CHECK(cudaMalloc(&b, top * top * t.ab_size));
    CHECK(cudaMalloc(&d, top * top * t.d_size));
    fill_random(a, t.ab, top * top, stream);
    fill_random(b, t.ab, top * top, stream);
    cublasLtMatmulDesc_t op = nullptr;
    CHECK(cublasLtMatmulDescCreate(&op, t.compute, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T;
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    for (u64 m = o.min_gemm; m <= top; m *= static_cast<u64>(o.factor)) {
      cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
      CHECK(cublasLtMatrixLayoutCreate(&la, t.ab, m, m, static_cast<int64_t>(m)));
      CHECK(cublasLtMatrixLayoutCreate(&lb, t.ab, m, m, static_cast<int64_t>(m)));
      CHECK(cublasLtMatrixLayoutCreate(&ld, t.d, m, m, static_cast<int64_t>(m)));
      cublasLtMatmulHeuristicResult_t algo{};
      int found = 0;
      const cublasStatus_t status =
          cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &algo, &found);
      if (status != CUBLAS_STATUS_NOT_SUPPORTED) CHECK(status);
      if (found == 0) {
        out.note("gemm " + name + " m=" + to_string(m) + ": cuBLASLt has no algorithm for it");
      } else {
        const float alpha = 1, beta = 0;
        const auto s = time_calls({o.device}, {stream}, o, [&] {
          CHECK(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &algo.algo, ws, ws_size,
                               stream));
        });
        const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(m);
        out.row("gemm", "matmul", t.name, 1, m, bytes(m), s, flops / s.median_s / 1e12, "TFLOP/s");
      }
      CHECK(cublasLtMatrixLayoutDestroy(ld));
      CHECK(cublasLtMatrixLayoutDestroy(lb));
      CHECK(cublasLtMatrixLayoutDestroy(la));
    }
    CHECK(cublasLtMatmulDescDestroy(op));
    CHECK(cudaFree(d));
    CHECK(cudaFree(b));
    CHECK(cudaFree(a));
  }
  CHECK(cublasLtMatmulPreferenceDestroy(pref));
  CHECK(cudaFree(ws));
  CHECK(cublasLtDestroy(lt));
}

// 16-byte loads and stores, the widest a thread issues: narrower ones leave bandwidth unused.
__global__ void copy(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

void bench_memory(const Options& o, int sms, cudaStream_t stream, Output& out) {
  const u64 top = largest_fitting(
      "memory", o.min_memory, o.max_memory, o.factor, free_memory(), [](u64 s) { return 2 * s; }, out);
  if (top == 0) return;
  void *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, top));
  CHECK(cudaMalloc(&dst, top));
  fill_random(src, CUDA_R_32F, top / sizeof(float), stream);
  for (u64 s = o.min_memory; s <= top; s *= static_cast<u64>(o.factor)) {
    const std::size_t n = s / sizeof(int4);
    // Enough resident blocks to hide memory latency, few enough that each thread loops.
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 32u * unsigned(sms)));
    const auto t = time_calls({o.device}, {stream}, o, [&] {
      copy<<<blocks, 256, 0, stream>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), n);
      CHECK(cudaGetLastError());
    });
    out.row("memory", "copy", "-", 1, s, 2 * s, t, 2.0 * static_cast<double>(s) / t.median_s / 1e9, "GB/s");
  }
  CHECK(cudaFree(dst));
  CHECK(cudaFree(src));
}

#ifdef SCALEPOINT_HAVE_NCCL
// One process drives every visible GPU through ncclCommInitAll; sizes and busbw follow nccl-tests.
void bench_nccl(const Options& o, int gpus, Output& out) {
  if (gpus < 2) return out.note("nccl: needs at least 2 visible GPUs");
  const auto n = static_cast<std::size_t>(gpus);
  std::vector<int> devices(n);
  std::size_t budget = ~std::size_t{0};
  for (int d = 0; d < gpus; ++d) {
    devices[static_cast<std::size_t>(d)] = d;
    CHECK(cudaSetDevice(d));
    budget = std::min(budget, free_memory() / 10 * 9);  // NCCL's own buffers come on top
  }
  const u64 top = largest_fitting(
      "nccl", o.min_nccl, o.max_nccl, o.factor, budget, [](u64 s) { return 2 * s; }, out);
  if (top == 0) return;
  std::vector<ncclComm_t> comms(n);
  CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> send(n), recv(n);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(cudaSetDevice(devices[i]));
    CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CHECK(cudaMalloc(&send[i], top));
    CHECK(cudaMalloc(&recv[i], top));
    CHECK(cudaMemset(send[i], 0, top));  // the values do not change NCCL's speed
  }
  for (u64 s = o.min_nccl; s <= top; s *= static_cast<u64>(o.factor)) {
    const std::size_t count = std::max<std::size_t>(1, s / sizeof(float)), size = count * sizeof(float);
    const auto t = time_calls(devices, streams, o, [&] {
      CHECK(ncclGroupStart());
      for (std::size_t i = 0; i < n; ++i)
        CHECK(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
      CHECK(ncclGroupEnd());
    });
    const double busbw = static_cast<double>(size) / t.median_s / 1e9 * 2.0 * (gpus - 1) / gpus;
    out.row("nccl", "all_reduce", "fp32", gpus, size, size, t, busbw, "GB/s");
  }
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(cudaSetDevice(devices[i]));
    CHECK(cudaFree(recv[i]));
    CHECK(cudaFree(send[i]));
    CHECK(cudaStreamDestroy(streams[i]));
    CHECK(ncclCommDestroy(comms[i]));
  }
}
#endif

std::string describe(int d) {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, d));
  int sm_khz = 0, mem_khz = 0, bus = 0;  // no longer in cudaDeviceProp as of CUDA 13
  CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, d));
  CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, d));
  CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, d));
  char line[512];
  std::snprintf(line, sizeof line,
                "# device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, peak SM clock %d MHz, "
                "memory clock %d MHz, memory bus %d bit, pci %04x:%02x:%02x\n",
                d, p.name, p.major, p.minor, p.multiProcessorCount,
                static_cast<double>(p.totalGlobalMem) / (1ull << 30), sm_khz / 1000, mem_khz / 1000, bus,
                p.pciDomainID, p.pciBusID, p.pciDeviceID);
  return line;
}

int run(const Options& o, int argc, char** argv) {
  // Before the benchmarks, not after minutes of them.
  const std::filesystem::path path(o.out), dir = path.has_parent_path() ? path.parent_path() : ".";
  if (!std::filesystem::is_directory(dir)) throw UsageError("--out " + o.out + ": no folder " + dir.string());
  int gpus = 0, driver = 0, runtime = 0;
  CHECK(cudaGetDeviceCount(&gpus));
  if (o.device >= gpus)
    throw UsageError("--device " + to_string(o.device) + ": only " + to_string(gpus) + " GPU(s) visible");
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string meta = "# scalepoint-gpu-bench";
  for (int i = 1; i < argc; ++i) meta += std::string(" ") + argv[i];
  meta += std::string("\n# host: ") + host + "\n# driver: " + to_string(driver / 1000) + "." +
          to_string(driver % 1000 / 10) + ", runtime: " + to_string(runtime / 1000) + "." +
          to_string(runtime % 1000 / 10) + ", cublasLt: " + to_string(cublasLtGetVersion());
#ifdef SCALEPOINT_HAVE_NCCL
  int nccl = 0;
  CHECK(ncclGetVersion(&nccl));
  meta += ", nccl: " + to_string(nccl);
#endif
  meta += "\n# gemm and memory on device " + to_string(o.device) + ", nccl across all\n";
  for (int d = 0; d < gpus; ++d) meta += describe(d);

  Output out;
  const auto wanted = [&](const char* kind) { return std::count(o.kinds.begin(), o.kinds.end(), kind) > 0; };
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, o.device));
  CHECK(cudaSetDevice(o.device));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (wanted("gemm")) bench_gemm(o, p.major * 10 + p.minor, stream, out);
  if (wanted("memory")) bench_memory(o, p.multiProcessorCount, stream, out);
  CHECK(cudaStreamDestroy(stream));
#ifdef SCALEPOINT_HAVE_NCCL
  if (wanted("nccl")) bench_nccl(o, gpus, out);
#else
  if (wanted("nccl")) out.note("nccl: built without NCCL");
#endif

  // All or nothing: a temporary file beside the output, renamed into place.
  const std::filesystem::path tmp = path.string() + ".tmp" + to_string(getpid());
  std::ofstream f(tmp);
  f << meta << out.notes
    << "kind,op,dtype,ranks,size,bytes,repetitions,time_min_us,time_median_us,time_p10_us,time_p90_us,"
       "achieved,achieved_unit\n"
    << out.rows;
  f.close();
  if (!f) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "scalepoint-gpu-bench: GEMM, memory-bandwidth and NCCL all-reduce timings of this node's GPUs"};
  const auto kinds = {"gemm", "memory", "nccl"};
  const auto dtypes = {"fp16", "bf16", "fp32", "tf32", "fp8"};
  const auto bytes = CLI::AsSizeValue(false);  // 1 KiB = 1 kb = 1024
  app.add_option("--out,-o", o.out, "CSV to write")->capture_default_str();
  app.add_option("--kinds", o.kinds, "gemm memory nccl")->delimiter(',')->check(CLI::IsMember(kinds));
  app.add_option("--dtypes", o.dtypes, "GEMM dtypes: fp16 bf16 fp32 tf32 fp8")
      ->delimiter(',')
      ->check(CLI::IsMember(dtypes));
  app.add_option("--min-gemm", o.min_gemm, "smallest m = n = k")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 17));
  app.add_option("--max-gemm", o.max_gemm, "largest m = n = k")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 17));
  app.add_option("--min-memory", o.min_memory, "smallest copy, bytes")
      ->transform(bytes)
      ->capture_default_str();
  app.add_option("--max-memory", o.max_memory, "largest copy, bytes")
      ->transform(bytes)
      ->capture_default_str();
  app.add_option("--min-nccl", o.min_nccl, "smallest all-reduce, bytes")
      ->transform(bytes)
      ->capture_default_str();
  app.add_option("--max-nccl", o.max_nccl, "largest all-reduce, bytes")
      ->transform(bytes)
      ->capture_default_str();
  app.add_option("--factor", o.factor, "size step factor")->capture_default_str()->check(CLI::Range(2, 1024));
  app.add_option("--iterations,-n", o.iterations, "timed repetitions per size")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup,-w", o.warmup, "untimed repetitions first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--device", o.device, "GPU for gemm and memory (nccl uses all visible)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
    if (o.min_gemm > o.max_gemm || o.min_memory > o.max_memory || o.min_nccl > o.max_nccl)
      throw UsageError("a --min-* option exceeds its --max-*");
    if (o.min_memory == 0 || o.min_memory % 16 != 0)
      throw UsageError("--min-memory: a positive multiple of 16 bytes (the copy moves 16-byte words)");
    if (o.min_nccl == 0) throw UsageError("--min-nccl: at least 1 byte");
    return run(o, argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is a ParseError too
  } catch (const UsageError& e) {
    std::fprintf(stderr, "scalepoint-gpu-bench: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalepoint-gpu-bench: error: %s\n", e.what());
    return 1;
  }
}
