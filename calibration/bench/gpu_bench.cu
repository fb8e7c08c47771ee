// scalepoint-gpu-bench: what the kernel-level compute model needs from one GPU, and what the GPUs
// of one node achieve together:
//  - GEMMs by cuBLASLt, graph-timed (20 back to back in a CUDA graph, so host launch cost is
//    excluded): squares, a workload's own GEMMs at a list of per-GPU batches (--workload bert
//    --batch 1,2,4 [--tp 4]), or any shapes from a file (--shapes, as `scalepoint gemm-shapes`
//    writes it);
//  - kernel latency: empty and small element-wise kernels back to back in a graph;
//  - memory bandwidth: copies of growing size in a graph;
//  - NCCL all-reduce over all visible GPUs (between events).
// `scalepoint calibrate compute --input gpu_bench.csv` turns the CSV into the GPU's kernel costs.
// It builds with nvcc alone, for GPU nodes without the project's other dependencies:
//   nvcc -O2 -std=c++17 -arch=sm_90 -I. -I<CLI11 include> calibration/bench/gpu_bench.cu -lcublasLt
//        [-DSCALEPOINT_HAVE_NCCL -lnccl] -o scalepoint-gpu-bench
// (or cmake -S calibration/bench -B build-gpu; see its CMakeLists.txt).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "calibration/bench/gpu_gemm.cuh"

namespace {

using namespace gpubench;

struct Options {
  std::string out = "gpu_bench.csv";
  std::vector<std::string> kinds = {"gemm", "latency", "memory", "nccl"};
  std::vector<std::string> dtypes = {"bf16", "fp8"};
  std::string workload, shapes;
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64};
  int tp = 1;
  bool squares = false;  // the default squares also when --workload or --shapes is given
  u64 min_gemm = 256, max_gemm = 16384, min_memory = 1ull << 20, max_memory = 4ull << 30;
  u64 min_nccl = 8, max_nccl = 1ull << 30;
  int factor = 2, device = 0;
  Timing timing;
};

struct Output {
  std::string rows, notes;
  void note(const std::string& text) {
    std::fprintf(stderr, "scalepoint-gpu-bench: skipped %s\n", text.c_str());
    notes += "# skipped: " + text + "\n";
  }
  void row(const char* kind, const std::string& label, const char* dtype, int ranks, u64 m, u64 n, u64 k, u64 batch,
           u64 bytes, const sp::bench::TimingSummary& s, double achieved, const char* unit) {
    char line[768];
    std::snprintf(line, sizeof line, "%s,%s,%s,%d,%llu,%llu,%llu,%llu,%llu,1,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%s\n", kind,
                  label.c_str(), dtype, ranks, m, n, k, batch, bytes, s.repetitions, s.min_s * 1e6, s.median_s * 1e6,
                  s.p10_s * 1e6, s.p90_s * 1e6, achieved, unit);
    rows += line;
    std::fputs(line, stdout);  // progress: the large sizes take seconds each
    std::fflush(stdout);
  }
};

constexpr const char* kHeader =
    "kind,label,dtype,ranks,m,n,k,batch,bytes,kernels,repetitions,time_min_us,time_median_us,time_p10_us,"
    "time_p90_us,achieved,achieved_unit\n";

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

std::vector<GemmJob> gemm_jobs(const Options& o, Output& out) {
  std::vector<GemmJob> jobs;
  if (!o.workload.empty()) jobs = workload_jobs(o.workload, o.batches, o.tp);
  if (!o.shapes.empty()) {
    for (GemmJob& j : shape_file_jobs(o.shapes)) jobs.push_back(std::move(j));
  }
  if (jobs.empty() || o.squares) {
    const u64 top = largest_fitting("gemm squares", o.min_gemm, o.max_gemm, o.factor, free_memory(),
                                    [](u64 m) { return 5 * m * m; }, out);
    for (GemmJob& j : square_jobs(o.min_gemm, top, static_cast<u64>(o.factor))) jobs.push_back(std::move(j));
  }
  return jobs;
}

void bench_latency(const Options& o, int sms, cudaStream_t stream, Output& out) {
  const auto t = time_in_graph(stream, o.timing, [&] {
    empty_kernel<<<1, 32, 0, stream>>>();
    CHECK(cudaGetLastError());
  });
  out.row("latency", "empty", "-", 1, 0, 0, 0, 1, 0, t, t.median_s * 1e6, "us");
  const std::size_t n = (1u << 20) / sizeof(__nv_bfloat16);  // 1 MiB of bf16
  void *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(__nv_bfloat16)));
  CHECK(cudaMalloc(&y, n * sizeof(__nv_bfloat16)));
  fill_random(x, CUDA_R_16BF, n, stream);
  fill_random(y, CUDA_R_16BF, n, stream);
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4u * unsigned(sms)));
  const auto e = time_in_graph(stream, o.timing, [&] {
    axpy<<<blocks, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), n);
    CHECK(cudaGetLastError());
  });
  out.row("latency", "axpy_1MiB", "bf16", 1, 0, 0, 0, 1, 3 * n * sizeof(__nv_bfloat16), e, e.median_s * 1e6, "us");
  CHECK(cudaFree(y));
  CHECK(cudaFree(x));
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
    Timing t = o.timing;
    t.per_graph = s >= (256ull << 20) ? 2 : t.per_graph;  // long copies need no amortising
    const auto r = time_in_graph(stream, t, [&] {
      copy<<<blocks, 256, 0, stream>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), n);
      CHECK(cudaGetLastError());
    });
    out.row("memory", "copy", "-", 1, 0, 0, 0, 1, 2 * s, r, 2.0 * static_cast<double>(s) / r.median_s / 1e9, "GB/s");
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
    const auto t = time_between_events(devices, streams, o.timing, [&] {
      CHECK(ncclGroupStart());
      for (std::size_t i = 0; i < n; ++i)
        CHECK(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
      CHECK(ncclGroupEnd());
    });
    const double busbw = static_cast<double>(size) / t.median_s / 1e9 * 2.0 * (gpus - 1) / gpus;
    out.row("nccl", "all_reduce", "fp32", gpus, 0, 0, 0, 1, size, t, busbw, "GB/s");
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
  meta += "\n# gemm, latency and memory on device " + to_string(o.device) + " (graph-timed, " +
          to_string(o.timing.per_graph) + " per graph), nccl across all\n";
  for (int d = 0; d < gpus; ++d) meta += describe(d);

  Output out;
  const auto wanted = [&](const char* kind) { return std::count(o.kinds.begin(), o.kinds.end(), kind) > 0; };
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, o.device));
  CHECK(cudaSetDevice(o.device));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (wanted("gemm")) {
    bench_gemms(gemm_jobs(o, out), o.dtypes, p.major * 10 + p.minor, stream, o.timing,
                [&](auto&&... a) { out.row(a...); }, [&](const std::string& t) { out.note(t); });
  }
  if (wanted("latency")) bench_latency(o, p.multiProcessorCount, stream, out);
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
  f << meta << out.notes << kHeader << out.rows;
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
      "scalepoint-gpu-bench: graph-timed GEMM, kernel-latency and memory-bandwidth timings of a GPU, and NCCL "
      "all-reduce over this node's GPUs"};
  const auto kinds = {"gemm", "latency", "memory", "nccl"};
  const auto dtypes = {"fp16", "bf16", "fp32", "tf32", "fp8"};
  const auto bytes = CLI::AsSizeValue(false);  // 1 KiB = 1 kb = 1024
  app.add_option("--out,-o", o.out, "CSV to write")->capture_default_str();
  app.add_option("--kinds", o.kinds, "gemm latency memory nccl")->delimiter(',')->check(CLI::IsMember(kinds));
  app.add_option("--workload", o.workload, "time this workload's GEMMs (bert, llama2_70b_lora, retinanet, ...)");
  app.add_option("--batch", o.batches, "per-GPU batches for --workload, e.g. 1,2,4")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--tp", o.tp, "tensor-parallel size for --workload")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--shapes", o.shapes, "CSV label,m,n,k[,batch] of GEMMs to time (scalepoint gemm-shapes)");
  app.add_flag("--squares", o.squares, "the default squares too, with --workload or --shapes");
  app.add_option("--per-graph", o.timing.per_graph, "launches per CUDA graph")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--dtypes", o.dtypes, "GEMM dtypes: fp16 bf16 fp32 tf32 fp8")
      ->capture_default_str()
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
  app.add_option("--iterations,-n", o.timing.iterations, "timed repetitions per size")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup,-w", o.timing.warmup, "untimed repetitions first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--device", o.device, "GPU for gemm, latency and memory (nccl uses all visible)")
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
