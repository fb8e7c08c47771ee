// scalepoint-gpu-bench's GEMMs: which shapes (squares; a workload's own GEMMs at given batches
// from the table `scalepoint gemm-shapes --cxx-table` generates; or any shapes from a file) and
// how each is timed: cuBLASLt in the TN layout (the only one it offers for fp8, so every dtype is
// measured alike), the algorithm chosen by its heuristic before capture, 20 back to back in a
// CUDA graph.
#pragma once

#include <fstream>
#include <sstream>

#include "calibration/bench/gpu_timing.cuh"

namespace gpubench {

struct GemmJob {
  std::string label;
  u64 m = 0, n = 0, k = 0, batch = 1;
};

struct WorkloadGemmEntry {
  const char* workload;
  const char* label;
  double m, n, k, batch;
  char batch_dim, tp_dim;
};

// Generated from models/workloads/*.yaml; a test keeps it current.
inline constexpr WorkloadGemmEntry kWorkloadGemms[] = {
#include "calibration/bench/workload_gemms.inc"
};

inline std::vector<GemmJob> square_jobs(u64 lo, u64 hi, u64 factor) {
  std::vector<GemmJob> jobs;
  for (u64 s = lo; s <= hi; s *= factor) jobs.push_back({"square_" + to_string(s), s, s, s, 1});
  return jobs;
}

inline std::vector<GemmJob> workload_jobs(const std::string& workload, const std::vector<int>& batches, int tp) {
  std::vector<GemmJob> jobs;
  std::string known;
  for (const WorkloadGemmEntry& e : kWorkloadGemms) {
    if (known.find(std::string(e.workload) + ",") == std::string::npos) known += std::string(e.workload) + ",";
  }
  for (int b : batches) {
    for (const WorkloadGemmEntry& e : kWorkloadGemms) {
      if (workload != e.workload) continue;
      double d[3] = {e.m, e.n, e.k};
      const auto at = [](char dim) { return dim == 'm' ? 0 : dim == 'n' ? 1 : 2; };
      d[at(e.batch_dim)] *= b;
      if (e.tp_dim != '-') d[at(e.tp_dim)] /= tp;
      jobs.push_back({std::string(e.label) + ".b" + to_string(b), static_cast<u64>(d[0] + 0.5),
                      static_cast<u64>(d[1] + 0.5), static_cast<u64>(d[2] + 0.5), static_cast<u64>(e.batch)});
    }
  }
  if (jobs.empty()) throw UsageError("--workload " + workload + ": not in the table (known: " + known + ")");
  return jobs;
}

// label,m,n,k[,batch] with a header line, as `scalepoint gemm-shapes` writes it.
inline std::vector<GemmJob> shape_file_jobs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--shapes " + path + ": cannot read it");
  std::vector<GemmJob> jobs;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (++n == 1 || line.empty()) continue;
    std::istringstream cells(line);
    GemmJob j;
    std::string cell;
    std::getline(cells, j.label, ',');
    u64* dims[] = {&j.m, &j.n, &j.k, &j.batch};
    int got = 0;
    while (got < 4 && std::getline(cells, cell, ',')) {
      try {
        *dims[got] = std::stoull(cell);
      } catch (const std::exception&) {
        throw UsageError(path + ":" + to_string(n) + ": '" + cell + "' is not a positive integer");
      }
      ++got;
    }
    if (got < 3 || j.m == 0 || j.n == 0 || j.k == 0 || j.batch == 0) {
      throw UsageError(path + ":" + to_string(n) + ": expected label,m,n,k[,batch] with positive sizes");
    }
    jobs.push_back(j);
  }
  return jobs;
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
inline constexpr GemmType kGemmTypes[] = {
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

/// One result row per (dtype, job) it could time; what it could not is reported through `note`.
template <class Row, class Note>
void bench_gemms(const std::vector<GemmJob>& jobs, const std::vector<std::string>& dtypes, int cc,
                 cudaStream_t stream, const Timing& timing, Row&& row, Note&& note) {
  cublasLtHandle_t lt = nullptr;
  CHECK(cublasLtCreate(&lt));
  std::size_t ws_size = 32u << 20;  // NVIDIA's recommendation for Hopper; ample before it
  void* ws = nullptr;
  CHECK(cudaMalloc(&ws, ws_size));
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof ws_size));
  for (const std::string& name : dtypes) {
    const GemmType& t = *std::find_if(std::begin(kGemmTypes), std::end(kGemmTypes),
                                      [&](const GemmType& g) { return name == g.name; });
    if (cc < t.min_cc) {
      note("gemm " + name + ": needs compute capability " + to_string(t.min_cc / 10) + "." + to_string(t.min_cc % 10));
      continue;
    }
    // Buffers for the largest operands of any job, reused by the others.
    u64 a_max = 0, b_max = 0, d_max = 0;
    for (const GemmJob& j : jobs) {
      a_max = std::max(a_max, j.m * j.k * j.batch);
      b_max = std::max(b_max, j.k * j.n * j.batch);
      d_max = std::max(d_max, j.m * j.n * j.batch);
    }
    if ((a_max + b_max) * t.ab_size + d_max * t.d_size > free_memory()) {
      note("gemm " + name + ": the largest shape's operands do not fit in free memory; drop it from the list");
      continue;
    }
    void *a = nullptr, *b = nullptr, *d = nullptr;
    CHECK(cudaMalloc(&a, a_max * t.ab_size));
    CHECK(cudaMalloc(&b, b_max * t.ab_size));
    CHECK(cudaMalloc(&d, d_max * t.d_size));
    fill_random(a, t.ab, a_max, stream);
    fill_random(b, t.ab, b_max, stream);
    cublasLtMatmulDesc_t op = nullptr;
    CHECK(cublasLtMatmulDescCreate(&op, t.compute, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T;
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    for (const GemmJob& j : jobs) {
      // Column-major: D (m x n) = A^T (A stored k x m) B (k x n), each batch at its own offset.
      cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
      CHECK(cublasLtMatrixLayoutCreate(&la, t.ab, j.k, j.m, static_cast<int64_t>(j.k)));
      CHECK(cublasLtMatrixLayoutCreate(&lb, t.ab, j.k, j.n, static_cast<int64_t>(j.k)));
      CHECK(cublasLtMatrixLayoutCreate(&ld, t.d, j.m, j.n, static_cast<int64_t>(j.m)));
      if (j.batch > 1) {
        const int count = static_cast<int>(j.batch);
        const int64_t sa = static_cast<int64_t>(j.k * j.m), sb = static_cast<int64_t>(j.k * j.n),
                      sd = static_cast<int64_t>(j.m * j.n);
        for (auto [layout, stride] : {std::pair{la, sa}, std::pair{lb, sb}, std::pair{ld, sd}}) {
          CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
          CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                 sizeof stride));
        }
      }
      cublasLtMatmulHeuristicResult_t algo{};
      int found = 0;
      const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &algo, &found);
      if (status != CUBLAS_STATUS_NOT_SUPPORTED) CHECK(status);
      if (found == 0) {
        note("gemm " + name + " " + j.label + ": cuBLASLt has no algorithm for it");
      } else {
        const float alpha = 1, beta = 0;
        const auto s = time_in_graph(stream, timing, [&] {
          CHECK(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &algo.algo, ws, ws_size, stream));
        });
        const double flops = 2.0 * static_cast<double>(j.m) * static_cast<double>(j.n) * static_cast<double>(j.k) *
                             static_cast<double>(j.batch);
        const u64 bytes = ((j.m * j.k + j.k * j.n) * t.ab_size + j.m * j.n * t.d_size) * j.batch;
        row("gemm", j.label, t.name, 1, j.m, j.n, j.k, j.batch, bytes, s, flops / s.median_s / 1e12, "TFLOP/s");
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

}  // namespace gpubench
