// What one kernel costs on an accelerator: the kernel-level half of the compute model (the other
// half, models/workloads/ops.hpp, says which kernels a layer runs).
//
// A GEMM C[m x n] = A[m x k] B[k x n] (times `batch` independent products) is cut into output
// tiles of tile_m x tile_n (narrowed to the GEMM when it is narrower), optionally split along k
// (split-K) so that small GEMMs fill the machine; the work units run in waves of
// `parallel_units` (SMs) and each unit streams k + k_overhead steps at efficiency_max of the peak
// rate per unit. The library picks the split that finishes first, as cuBLAS's heuristics do.
//   t = kernel_latency + waves x 2 tile_m tile_n (k/split + k_overhead) / (peak x efficiency_max / units)
// bounded below by the kernel's operand and result bytes at the achievable memory bandwidth. A
// memory-bound (element-wise) kernel costs kernel_latency + bytes / (bandwidth x memory_efficiency),
// and strided_access_fraction of that bandwidth where its accesses cannot be 16-byte vectors: a
// per-channel pass over NCHW activations (bias add, batch norm, channel sums, pooling) or a GEMM
// whose contiguous dimension is not a multiple of 16 bytes (the libraries then pick 2-element
// "align2" kernels). A layout transpose (cuDNN's nchwToNhwc / nhwcToNchw) is neither: it reads
// and writes whole rows through a shared-memory tile, so both sides are coalesced, but in
// elements, not vectors; it gets transpose_access_fraction.
// The latency is a time per kernel, not a fraction of FLOPs, so it does not shrink on a faster
// chip: it is what makes small per-accelerator batches slow.
//
// Where GEMMs were measured on the accelerator (scalepoint-gpu-bench, graph-timed), the measured
// shapes correct the trend: the log ratio measured / modelled, averaged over the measured shapes
// near the query (a Gaussian kernel in log2 m, n, k), shrinks to no correction far from them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// How a memory-bound kernel touches memory (the share of a vectorised stream's bandwidth it gets).
enum class Access {
  vector,     // 16-byte vector loads and stores along the contiguous dimension
  strided,    // element accesses across it (KernelCosts::strided_access_fraction)
  transpose,  // a tiled layout transpose (KernelCosts::transpose_access_fraction)
};

struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 1;  // independent products in one kernel (attention heads, conv groups)
  // How many times smaller in memory than in the product each operand is: an implicit-GEMM
  // convolution reads its input (and writes its input gradient) once, not as the im2col matrix
  // of kernel-area copies the product multiplies (ops.hpp, Op::input_reuse).
  double a_reuse = 1, b_reuse = 1, c_reuse = 1;
  bool strided = false;  // operands without 16-byte vector accesses (see strided_access_fraction)
  Flops flops() const { return Flops(2 * m * n * k * batch); }
};

/// One dtype's GEMM mainloop.
struct GemmRate {
  double efficiency_max = 0.75;  // of the dtype's peak, on whole tiles and long k, at sustained clocks
  double k_overhead = 64;        // prologue and epilogue of a tile, in k steps
};

struct MeasuredGemm {
  double m = 0, n = 0, k = 0;
  Duration time;          // one GEMM, back to back in a CUDA graph
  double log_ratio = 0;   // log(time / trend), set by refresh_measured_ratios
};

struct KernelCosts {
  /// "measured: ..." or "estimate: ..." with the source; reported by `scalepoint list`.
  std::string source = "estimate: defaults";
  int parallel_units = 1;  // SMs (or cores) that run work units side by side
  int tile_m = 128, tile_n = 128;
  Duration kernel_latency = microseconds(2);
  double memory_efficiency = 0.85;  // achieved / peak bandwidth of a streaming kernel
  // What a kernel without 16-byte vector accesses achieves, as a share of a vectorised one's
  // bandwidth. Measured: PointNet's step on an H200 (PyTorch 2.11; calibration/data/colocation/
  // h200_pointnet_kernels.csv, step 2): the median over its 1,024-channel bias add, BatchNorm,
  // max-pool, bias-gradient sum and align2 forward GEMM (1.25 TB/s) over its ReLU of the same
  // tensor (4.01 TB/s, 0.84 of the peak: memory_efficiency's level); assumed for other GPUs.
  double strided_access_fraction = 0.311;
  // What a tiled layout transpose achieves, likewise. Measured: HFTA's fused PointNet on an H200
  // (calibration/data/colocation/h200_pointnet_fused4_kernels.csv, steps 0-2): the 1,024-channel
  // nchwToNhwc and nhwcToNchw kernels (32 x 1,024 x 2,500 x 2 B = 163.84 MB, read and written)
  // that overlap no other kernel for more than a tenth of their time, their bytes over their time,
  // over the same ReLU; assumed for other GPUs.
  double transpose_access_fraction = 0.599;
  // The share of the GEMM mainloop's rate (GemmRate) a fused attention kernel's products reach,
  // forward and backward, besides its exponentials (Kernel::exponentials): what its online-softmax
  // bookkeeping, the backward's extra shared-memory traffic and its synchronisation cost. Measured
  // on an H100 SXM5 (Shah et al., FlashAttention-3, arXiv 2407.08608, fig. 5, bf16, head_dim 128,
  // causal, 8k tokens): cuDNN 9 529 and 518 TFLOP/s forward and backward, against 725 and 726 by
  // this model with its exponentials beside the products (overlapped); flash-attn 2 333 and 318,
  // against products at 725 and 726 after the exponentials (serial). Assumed for other GPUs.
  struct AttentionEfficiency {
    double forward = 1, backward = 1;
  };
  AttentionEfficiency attention_overlapped{0.73, 0.71};
  AttentionEfficiency attention_serial{0.55, 0.47};
  std::map<std::string, GemmRate> gemm;                        // by dtype
  std::map<std::string, std::vector<MeasuredGemm>> measured;  // by dtype
  // The memory bandwidth of the part the measured shapes were timed on (0: this accelerator's).
  // Their ratios to the trend are taken at that bandwidth: what they correct (tile and wave
  // quantisation, the library's kernel choice) belongs to the die, so another part of the same die,
  // SMs and clocks with other memory (H200 against H100) keeps them and its own bandwidth.
  BytesPerSecond measured_bandwidth;
};

struct Accelerator;

/// Bytes of one element of `dtype` (fp8 1, fp32 4, else 2).
double element_bytes(const std::string& dtype);

/// The dtype whose GEMM data applies to `dtype` on `a` (fp8 -> bf16 -> fp16 where missing),
/// matching Accelerator::training_peak's fallbacks; empty when the accelerator has no peak for it.
std::string gemm_dtype(const Accelerator& a, const std::string& dtype);

/// One GEMM kernel by the trend alone (no measured correction).
Duration gemm_time_modelled(const Accelerator& a, const std::string& dtype, const GemmShape& s);
/// One GEMM kernel: the trend, corrected by the accelerator's measured shapes where it has them.
Duration gemm_time(const Accelerator& a, const std::string& dtype, const GemmShape& s);
/// The share of a vectorised stream's bandwidth a kernel of this access gets on `c`.
double access_fraction(const KernelCosts& c, Access access);

/// `kernels` memory-bound kernels moving `bytes` in all by `access`, each of `blocks` work units
/// (0: plenty; fewer than the SMs reach that share of the bandwidth).
Duration stream_time(const Accelerator& a, Bytes bytes, double kernels, Access access = Access::vector,
                     double blocks = 0);

/// Recomputes each measured shape's log(measured / trend), the trend at the measured part's
/// bandwidth (KernelCosts::measured_bandwidth): after parsing, and whenever the trend's parameters
/// or the peaks change.
void refresh_measured_ratios(Accelerator& a);

}  // namespace sp::models
