// The power phase's loads: bf16 GEMMs of n cubed by cuBLASLt back to back for `seconds`; 8,192
// is the kind of work that draws a training GPU's peak power, smaller ones leave it partly idle.
// Prints the achieved TFLOP/s.
#pragma once

int gemm_load(double seconds, unsigned long long n) {
  using namespace gpubench;
  CHECK(cudaSetDevice(0));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *a = nullptr, *b = nullptr, *d = nullptr, *ws = nullptr;
  const std::size_t ws_size = 32u << 20;
  CHECK(cudaMalloc(&a, n * n * 2));
  CHECK(cudaMalloc(&b, n * n * 2));
  CHECK(cudaMalloc(&d, n * n * 2));
  CHECK(cudaMalloc(&ws, ws_size));
  fill_random(a, CUDA_R_16BF, n * n, s);
  fill_random(b, CUDA_R_16BF, n * n, s);
  cublasLtHandle_t lt = nullptr;
  CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op = nullptr;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
  cublasLtMatrixLayout_t layout = nullptr;  // n x n, leading dimension n, for A (as k x m), B and D
  CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, n, n, static_cast<int64_t>(n)));
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof ws_size));
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, layout, layout, layout, layout, pref, 1, &algo, &found));
  if (found == 0) throw std::runtime_error("cuBLASLt has no bf16 algorithm for " + std::to_string(n) + "^3");
  const float alpha = 1, beta = 0;
  const auto launch = [&] {
    CHECK(cublasLtMatmul(lt, op, &alpha, a, layout, b, layout, &beta, d, layout, d, layout, &algo.algo, ws, ws_size, s));
  };
  launch();
  CHECK(cudaStreamSynchronize(s));
  const long long start = now_ns(), stop = start + static_cast<long long>(seconds * 1e9);
  long long done = 0;
  while (now_ns() < stop) {
    for (int i = 0; i < 10; ++i) launch();
    CHECK(cudaStreamSynchronize(s));
    done += 10;
  }
  const double elapsed = (now_ns() - start) * 1e-9;
  std::printf("%lld %lld %lld %.1f nan nan\n", start, start, now_ns(), 2.0 * n * n * n * done / elapsed / 1e12);
  CHECK(cublasLtMatmulPreferenceDestroy(pref));
  CHECK(cublasLtMatrixLayoutDestroy(layout));
  CHECK(cublasLtMatmulDescDestroy(op));
  CHECK(cublasLtDestroy(lt));
  for (void* p : {a, b, d, ws}) CHECK(cudaFree(p));
  return 0;
}
