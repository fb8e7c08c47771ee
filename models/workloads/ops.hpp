// The operations of a layer group (the `ops:` list in models/workloads/*.yaml), described from the
// published architecture: GEMMs by their weight shape, convolutions by channels, kernel and output
// positions, attention by heads and sequence, the memory-bound rest by bytes and kernel count.
// expand() turns them into the kernels one accelerator runs for one micro-batch, after tensor
// (TP, with sequence parallelism) and context (CP) parallel splitting, so a layout change changes
// the shapes, and the kernel costs (kernel_costs.hpp) follow from the shapes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/hardware/kernel_costs.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

enum class OpKind { gemm, conv, attention, elementwise };

/// How tensor parallelism splits a GEMM's weight: by output columns (n), by input rows (k), or not.
enum class TpSplit { none, n, k };

struct Op {
  OpKind kind = OpKind::gemm;
  std::string name;
  // gemm: m = rows of the micro-batch, one kernel per entry of rows_per_sample (empty: one row
  // per token); conv: the same with output positions, n = out / groups, k = in / groups x kh x kw.
  double n = 0, k = 0, groups = 1;
  // conv: the im2col matrix repeats each input element kernel-area times, less what a stride
  // skips: kernel area / min(kernel area, stride^2) (1 for GEMMs and 1x1 convolutions)
  double input_reuse = 1;
  // conv: input elements per element of a row of k, stride^2 / kernel area: the whole input tensor,
  // which a transpose moves, is m x k x input_scale (a 1x1 stride-2 convolution reads a quarter
  // of it into its GEMM but transposes all of it)
  double input_scale = 1;
  std::vector<double> rows_per_sample;
  TpSplit tp_split = TpSplit::none;
  bool frozen = false;            // no weight gradient (frozen base weights under LoRA)
  bool input_gradient = true;     // backward computes the gradient of its input
  std::string precision;          // empty: the workload's
  std::string context_parallel_precision;  // where CP > 1 splits it (attention), if not `precision`
  // and per accelerator family, where a submitter's recipe for that architecture differs (the
  // file's {default: bf16, blackwell: fp8}: `default` above for every other family), with where
  // each family was named, for the catalog to check it names a hardware file's family
  struct FamilyPrecision {
    std::string precision;
    SourceLocation where;
    std::string key;  // its key path
  };
  std::map<std::string, FamilyPrecision> context_parallel_precision_by_family;
  // attention: per sample, queries attend to keys (empty: the sequence); GQA shares K and V
  double heads = 0, kv_heads = 0, head_dim = 0, queries = 0, keys = 0;
  bool causal = false;
  // attention: unfused as Megatron ran it before FlashAttention (2022): Q K^T and P V as batched
  // GEMMs over the whole s x s scores (masked, not skipped), with the scale-mask-softmax and the
  // dropout as memory-bound passes over the scores in between.
  bool unfused = false;
  // attention (fused): the softmax's exponentials run on the SMs' multi-function units, 16 a clock
  // an SM on NVIDIA parts against thousands of tensor-core FLOPs (Accelerator::special_function_rate).
  // `softmax: overlapped` where the kernel schedules them while its tensor cores multiply
  // (FlashAttention-3's ping-pong warpgroups, cuDNN 9's Hopper and Blackwell kernels); `serial`
  // (the default) where each warp waits for its own (FlashAttention-2, Ampere-era fused MHA).
  bool softmax_overlapped = false;
  // elementwise: bytes moved and kernels launched per pass; in the tensor-parallel region (on
  // TP-split activations) TP splits them always, elsewhere only under sequence parallelism
  bool tensor_region = false;
  // elementwise: `access: strided`, passes without 16-byte vector accesses (per channel over NCHW
  // activations). conv: `layout: nchw` (PyTorch's default), whose contiguous dimension is the
  // positions. cuDNN 9 runs a 1x1, stride-1, ungrouped one as a GEMM in place (`nchw_gemm`:
  // strided where the positions are not a multiple of 16 bytes) and any other channels-last,
  // between transposes of its activations, two a GEMM here (measured: h200_resnet18_kernels.csv,
  // 163 nchwToNhwc and nhwcToNchw kernels around its convolutions' 59 GEMMs: the rest are the
  // filters' and split-K partial sums', small; channels-last, the default, has none of them).
  bool strided = false;
  bool nchw = false, nchw_gemm = false;
  Bytes forward_bytes_per_token, backward_bytes_per_token;
  Bytes forward_bytes_per_sample, backward_bytes_per_sample;
  Bytes forward_bytes_per_parameter, backward_bytes_per_parameter;  // of the layer group instance
  double forward_kernels = 0, backward_kernels = 0;
  // elementwise: the work units (thread blocks) each kernel of the pass has, 0 for plenty. A
  // per-channel kernel has one block a channel; with fewer blocks than SMs it reaches only that
  // share of the bandwidth (measured: cuDNN's BatchNorm on 64 channels runs at half the rate of
  // 128 or more, h200_pointnet_kernels.csv and h200_resnet18_kernels.csv).
  double forward_blocks = 0, backward_blocks = 0;
};

/// One accelerator's share of one micro-batch.
struct Shard {
  double samples = 1;            // per data-parallel rank and micro-batch
  double tokens_per_sample = 1;  // the workload's sequence (positions for images)
  int tp = 1, cp = 1;
  bool sequence_parallel = true;  // with TP, norms and residuals run on 1/TP of the tokens (Megatron SP)
  double parameters = 0;         // of the layer group instance, before TP
  bool trains_weights = true;    // the layer group has trainable parameters
  bool backward = true;          // the layer group runs backward at all
  std::string family;            // the accelerator's architecture family (per-family precision recipes)
};

enum class Pass { forward, backward };

/// A kernel to cost: a GEMM (or batched GEMMs), a fused attention, or memory-bound work.
struct Kernel {
  enum class Kind { gemm, attention, stream } kind = Kind::stream;
  GemmShape shape;       // gemm, attention (one of its products: queries x keys x head_dim)
  double work = 1;       // attention: products of that shape per kernel (2 forward, 5 backward in all)
  double exponentials = 0;          // attention: softmax exponentials per kernel (one a score formed)
  bool softmax_overlapped = false;  // attention: they run beside the products (Op::softmax_overlapped)
  bool backward = false;            // attention: a backward kernel (KernelCosts::AttentionEfficiency)
  Bytes bytes;           // stream
  Access access = Access::vector;  // stream: how it touches memory
  double blocks = 0;     // stream: work units a kernel has (0: plenty)
  // launched by a library inside a framework op already dispatched (cuDNN's transposes, the second
  // GEMM of a convolution's backward): a bare launch on the host, not the framework's dispatch
  bool library_launch = false;
  // gemm from an NCHW convolution run as a GEMM in place: its activation operands' bytes (input
  // and output, or both inputs for the weight gradient), which it transposes to channels-last and
  // back once fused copies make it grouped (small_workload.cpp)
  Bytes nchw_activation_bytes;
  double count = 1;      // identical kernels
  // stream: the implementation's own kernels, described as it runs them (ring attention's merges):
  // software_efficiency, the fusion the MLPerf code adds to plain PyTorch's passes, leaves them alone
  bool as_run = false;
  std::string dtype;
  Flops model_flops;     // as the workload counts them (all kernels of this entry)
};

/// cuDNN's transposes of an NCHW convolution run channels-last: `activations` (its GEMM's input
/// and output) read and written by tiled transposes, in two launches the library makes inside the op.
Kernel nchw_transposes(Bytes activations, const std::string& dtype);

/// The kernels of `op` for one pass over one micro-batch share.
std::vector<Kernel> expand(const Op& op, const Shard& s, Pass pass, const std::string& workload_precision);

/// Parses one entry of `ops:`.
Op parse_op(const config::ConfigNode& node);

/// A precision value (bf16, fp16, fp8).
std::string parse_precision(const config::ConfigNode& node);
/// An attention's `context_parallel_precision`: one precision, or {default: P, <family>: P, ...}.
void parse_context_parallel_precision(const config::ConfigNode& node, Op& op);
/// An attention's `softmax: serial | overlapped`, refused on an unfused one (set `op.unfused` first).
void parse_softmax(const config::ConfigNode& node, Op& op);

}  // namespace sp::models
