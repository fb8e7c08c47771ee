// A training workload (models/workloads/*.yaml), by concern (the structs below): what the network
// is (its layers as data: parameters, trainable parameters, the operations each runs, whose FLOPs
// must add up to the per-sample totals the file documents; gradient and optimizer sizes; memory),
// what the benchmark asks (MLPerf's evaluation cadence, the RCPs' convergence table, runs per
// result), how submitters lay it out (v4.1 layouts and batches), what its implementation costs
// beyond the ops (priors that calibration replaces in a copy) and how far predictions stray.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/workloads/ops.hpp"
#include "models/workloads/parallelism.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct LayerGroup {
  std::string name;
  int repeat = 1;
  std::int64_t parameters = 0;            // per instance
  std::int64_t trainable_parameters = 0;  // per instance
  Flops forward;                          // per sample, per instance: what the ops add up to
  Flops backward;                         // per sample, per instance
  bool backward_pass = true;              // false when nothing before or in it trains (a frozen stem)
  // Full recompute checkpoints this layer: keeps its input alone and reruns its forward before its
  // backward. Megatron checkpoints the transformer layers only (ParallelTransformer's checkpointed
  // forward, Megatron-core's TransformerBlock): the embedding and the output layer with its loss
  // run once and keep what they keep.
  bool checkpointed = true;
  std::vector<Op> ops;                    // the kernels it runs (models/workloads/ops.hpp)
  Bytes activations;                      // kept for backward, per sample, per instance
  Bytes attention_activations;            // of which the attention core's, what selective recompute drops
  // Of them, those in the sequence region, which TP splits only under sequence parallelism (the
  // norms' inputs, the GEMM inputs and dropout masks SP shards), and those every TP rank keeps
  // whole (LoRA's qkv adapter input, handed to it gathered): the rest TP splits.
  Bytes sequence_activations;
  Bytes tp_replicated_activations;
  // What keeping the activation function's input in fp8 rather than bf16 saves
  // (MemoryRule::fp8_activation_input).
  Bytes fp8_activation_saving;
  // Tensor parallelism with sequence parallelism: per instance and sample, each forward (and
  // again each backward) all-gathers and reduce-scatters a tensor of this size in the TP group.
  Bytes tp_tensor;
  int tp_all_gathers = 0;
  int tp_reduce_scatters = 0;
  // The column-parallel GEMMs behind the all-gathers, in order ("qkv", "fc1" in a generated
  // transformer layer; empty where the layer is written by hand), which
  // ParallelLayout::not_overlapped names; and whether their weights are frozen (LoRA's base; a
  // hand-written layer's when it trains nothing), so that no weight-gradient GEMM hides a bulk
  // reduce-scatter of their input gradients.
  std::vector<std::string> tp_column_gemms;
  bool tp_gemms_frozen = false;
  Bytes cp_exchange;                      // context parallel: K and V of the whole sequence, per sample
  // Pipeline parallelism: what a stage ending with this layer hands the next one, per sample
  // (before TP and CP split it): the key `pipeline_boundary`, else the TP tensor (a transformer's
  // hidden state), else none and no stage may end here.
  Bytes pipeline_boundary;
};

/// When an implementation stores a tensor in fp8 to save memory, on accelerators with fp8.
enum class Fp8Store { never, always, where_needed };

/// What one accelerator must hold (on top of activations).
struct MemoryRule {
  Bytes weight_bytes_per_parameter;                // model weights as trained (fp16, bf16, fp8)
  // The activation function's input kept in fp8 (LayerGroup::fp8_activation_saving): of NVIDIA's
  // v4.1 Llama2 LoRA configs only the one-node H200 ones, where memory binds, set FP8_ACTIVATION,
  // so `where_needed` takes it only for a layout that would not fit otherwise.
  Fp8Store fp8_activation_input = Fp8Store::never;
  Bytes optimizer_bytes_per_trainable_parameter;  // master weights and optimizer states
  Bytes reserved;                                   // framework, workspace, fragmentation
};

/// How often evaluation runs (MLPerf's rules differ per benchmark); what it costs is the
/// implementation's (EvaluationCosts).
struct EvaluationRule {
  bool timed = true;
  std::int64_t samples = 0;              // evaluated each time
  double interval_per_global_batch = 0;  // interval = per_global_batch x GBS + samples ...
  double interval_samples = 0;
  std::int64_t round_down_to = 0;        // ... rounded down to a multiple of this (0: no rounding)
  bool round_up_to_global_batch = false; // ... or up to whole steps
  double interval_epochs = 0;            // alternatively, every this many epochs
  double skip_per_global_batch = 0;      // the first FLOOR(skip_per_global_batch x GBS + skip_count)
  std::int64_t skip_count = 0;           //   evaluations are skipped
  // Evaluation batches are the training global batch (NeMo/Megatron) or one micro-batch per
  // replica (the default).
  bool batch_is_global_batch = false;
};

/// What an evaluation costs beyond its forward passes: the implementation's fixed costs, which
/// calibration fits (the workload file's `evaluation:` values are their priors).
struct EvaluationCosts {
  Duration overhead;                     // per evaluation, whatever the scale (synchronisation, set-up)
  // Per evaluation batch: what the evaluation loop exposes at each of its steps and training
  // hides (batch fetch, loss reduced across the replicas with a host synchronisation, eager
  // launches after it).
  Duration batch_overhead;
  Duration host_work;                    // per evaluation, host-side work shared by the nodes (COCO mAP)
  // Scoring handed to one background worker (NVIDIA's RetinaNet `--async-coco`): training goes on
  // while it runs, so only the last evaluation's scoring delays the run's end, plus a backlog where
  // scoring is slower than the training between two evaluations.
  Duration asynchronous_scoring;
  // Once per run, in the training interval that ends at the first evaluation: the evaluation's
  // one-time set-up (its data loader built, its first batches' allocations and graphs). MLPerf's
  // Llama2-70B LoRA logs show it as a fixed stall just before the first `eval_start`, whatever the
  // scale (calibration/data/mlperf/README.md).
  Duration first_overhead;
  // Where the one-time set-up is the start of data loaders' worker processes rather than one
  // fixed stall, first_overhead is paid per loader that starts workers inside the timed region:
  // the training loader where a rank's micro-batch exceeds the first bound, the evaluation loader
  // (at the first evaluation) where a rank's share of the evaluation set exceeds the second
  // (NVIDIA's BERT: `num_workers=0 if batch <= 8 else 4`, and the same at 10 for its evaluation
  // loader). Unset: first_overhead once, whatever the layout.
  struct LoaderWorkers {
    std::int64_t micro_batch_above = 0;
    std::int64_t evaluation_samples_above = 0;
  };
  std::optional<LoaderWorkers> first_overhead_per_loader;
  // Host time per kernel where the evaluation's forward is dispatched eagerly although training
  // is not: modules captured as CUDA graphs in training mode run their eager forward in eval mode
  // (torch.cuda.make_graphed_callables and TransformerEngine's copy of it). Zero: the evaluation
  // launches as training does.
  Duration dispatch_per_kernel;
};

/// The evaluation costs calibration fits: their keys in workload and calibration files and where
/// they sit, in one table so that every reader and writer agrees.
struct EvaluationCostField {
  const char* workload_key;
  const char* calibration_key;
  Duration EvaluationCosts::*member;
};
inline constexpr std::array<EvaluationCostField, 6> kEvaluationCosts{{
    {"overhead", "evaluation_overhead", &EvaluationCosts::overhead},
    {"host_work", "host_work", &EvaluationCosts::host_work},
    {"batch_overhead", "evaluation_batch_overhead", &EvaluationCosts::batch_overhead},
    {"asynchronous_scoring", "evaluation_scoring", &EvaluationCosts::asynchronous_scoring},
    {"first_overhead", "evaluation_first_overhead", &EvaluationCosts::first_overhead},
    {"dispatch_per_kernel", "evaluation_dispatch_per_kernel", &EvaluationCosts::dispatch_per_kernel},
}};

struct ConvergencePoint {
  std::int64_t global_batch = 0;
  double mean = 0;   // olympic mean of the reference runs, in ConvergenceTable::unit
  double stdev = 0;  // population standard deviation of the reference runs
  int runs = 0;
  bool pruned = false;  // kept by the RCP checker for interpolation
  /// How often the reference runs evaluated, in `unit`: their values lie on this grid. 0: at the
  /// rules' interval for this batch (a submission's cadence), as the RCPs of most benchmarks do.
  double evaluated_every = 0;
};

struct ConvergenceTable {
  enum class Unit { samples, epochs } unit = Unit::samples;
  std::vector<ConvergencePoint> points;  // ascending global batch
  /// The MLPerf round whose RCPs `points` are ("4.1"); empty where the file does not say.
  std::string round;
  /// Other rounds' RCPs, by round ("5.0"): a round may re-run its reference at new
  /// hyper-parameters (Stable Diffusion's 5.0 reference converges in 17 % fewer samples at 256).
  std::map<std::string, std::vector<ConvergencePoint>> other_rounds;

  /// The table in force for a result of `round` ("5.0", "4.1"; empty: this one): the points of
  /// the latest round at or before it, or of the earliest round where it predates them all.
  ConvergenceTable at_round(const std::string& round) const;
};

/// An MLPerf round as "MAJOR.MINOR" ("4.1", "5.0"; also "v5.0" and the RCP ruleset's "5.0.0"):
/// its two numbers, or nullopt where the text is not of that form. Rounds are compared by these
/// numbers ("4.10" after "4.9").
std::optional<std::pair<int, int>> mlperf_round(const std::string& text);

// A workload by concern: what the network is, what the benchmark asks, how submitters lay it
// out, what its implementation costs beyond the ops (the file's priors, which calibration
// replaces in the copy Calibration::calibrated returns, never in the catalog's description), and
// how far predictions of it stray.

/// What the network is: its layers and their ops, parameters and trainable set, the bytes its
/// gradients and optimizer move, and what an accelerator must hold.
struct ModelDescription {
  std::string name;
  std::string description;
  std::string sample;     // what one sample is ("sequence", "image")
  std::string precision;  // selects the accelerator peak: bf16 | fp16 | fp8
  Bytes gradient_bytes_per_parameter;
  Bytes gradient_bucket;  // a fixed cap (PyTorch DDP's bucket_cap_mb, apex's), or 0 with the rule below
  /// Megatron-core's default bucket, counted in parameters and grown with the data-parallel
  /// group: max(parameters, per_data_parallel_rank x DP) of them (0: the fixed cap above).
  std::int64_t gradient_bucket_parameters = 0;
  std::int64_t gradient_bucket_parameters_per_rank = 0;
  /// The bucket cap in bytes with `data_parallel` replicas, for pipeline stage `stage`'s model
  /// chunk `chunk`. Megatron-core buckets only the first stage's first chunk
  /// (distributed_data_parallel.py: no bucketing where the pipeline rank is above 0; training.py:
  /// disable_bucketing for chunks after the first): elsewhere it is infinite, one bucket.
  Bytes gradient_bucket_for(int data_parallel, int stage = 0, int chunk = 0) const;
  Bytes optimizer_traffic_per_parameter;
  double tokens_per_sample = 1;      // sequence length (positions for images): what a GEMM's rows count
  std::vector<LayerGroup> layers;    // forward order
  MemoryRule memory;

  std::int64_t total_parameters() const;
  std::int64_t trainable_parameters() const;
  Flops forward_flops_per_sample() const;
  Flops backward_flops_per_sample() const;
  Bytes gradient_bytes() const { return gradient_bytes_per_parameter * static_cast<double>(trainable_parameters()); }
};

/// What the benchmark asks: the data, the evaluation cadence, the convergence table from the
/// MLPerf RCPs, and how many runs make a result.
struct BenchmarkRules {
  std::string mlperf_benchmark;
  /// Other names published results give the benchmark (RetinaNet's logs say "ssd").
  std::vector<std::string> benchmark_aliases;
  std::int64_t train_samples = 0;    // dataset size (one epoch)
  EvaluationRule evaluation;
  ConvergenceTable convergence;
  int runs_per_result = 10;   // MLPerf scores the olympic mean of this many runs
  /// The clock-boost setting (nvidia-smi boost-slider --vboost value) its reference
  /// configurations run one node at (0: none); on more nodes they set none. What a result that
  /// does not say ran at (MlperfResult::clock_boost).
  int clock_boost_one_node = 0;
};

/// The largest boost setting a file or a result row may name (nvidia-smi's slider takes small
/// ones; 0 is none): past it, a typed-wrong number.
inline constexpr int kMaxClockBoostSetting = 100;

/// How submitters lay it out: the v4.1 layouts and global batches.
struct SubmitterRecipes {
  ParallelSpecs parallelism;
  /// Global batches the v4.1 submissions used at some N: the default where none is given.
  std::map<int, std::int64_t> typical_global_batch;
};

/// What the implementation costs beyond its ops as described, each with the plausible range the
/// fit keeps it in: the file's values are the priors, calibration's the fitted ones.
struct ImplementationCosts {
  /// How much less element-wise work (bytes and launches) the workload's MLPerf implementation
  /// does than its ops as described (plain PyTorch's kernels): the compute model's fitted factor
  /// (compute_model.hpp), with the file's value as the prior and a plausible range.
  double software_efficiency = 1.0;
  double software_efficiency_min = 0.2, software_efficiency_max = 4.0;
  // Host time per kernel when the implementation dispatches every kernel eagerly (compute
  // `launch: eager`); zero when it replays CUDA graphs (the default): models/compute/launch.hpp.
  Duration dispatch_per_kernel;
  // Host time per training step the accelerator waits for, beside the kernels and collectives
  // the op graph simulates: the step's eager path (batch handoff, per-sample set-up, a host
  // synchronisation) around graph-captured compute. Fitted where the file sets it (compute
  // `host_per_step`), within its plausible range (`host_per_step_range`); zero otherwise.
  Duration host_per_step;
  Duration host_per_step_min, host_per_step_max;
  EvaluationCosts evaluation_costs;
  // The software stack whose MLPerf code the workload files describe (NVIDIA's): their
  // host_per_step is that code's; another stack runs other code (maxdiffusion on JAX, tinygrad).
  static constexpr const char* kDescribedStack = "nvidia";
};

/// How far the model's predictions of it stray, as calibration measured them (log space).
struct PredictionSpread {
  double model_error = 0;     // the spread of the model's own error
  /// The same, measured over all workloads per range of N: upper bound of N -> spread. The
  /// error grows with the distance from the small systems most rows come from.
  std::map<int, double> model_error_by_scale;
  /// The uncertainty of the fitted parameters a prediction rests on (log scale), added to the
  /// model error in quadrature (calibration/predict/system_model.cpp).
  double parameter_spread = 0;

  /// The spread at N: the larger of the workload's and its scale range's, with the parameters'.
  double model_error_at(int accelerators) const;
};

struct Workload : ModelDescription, BenchmarkRules, SubmitterRecipes, ImplementationCosts, PredictionSpread {};

Workload parse_workload(const config::ConfigNode& node);
/// A workload's `convergence:` block: unit, the RCP points, their round and other rounds'.
ConvergenceTable parse_convergence(const config::ConfigNode& node);

/// `s` with the layer's parameters and training flags: what expand() needs of the layer.
Shard shard_for(const LayerGroup& layer, Shard s);

/// One accelerator's share of one micro-batch under `layout`: its samples, the sequence, the TP
/// and CP splits and sequence parallelism (the layer's own fields left to shard_for).
Shard shard_of(const Workload& w, const ParallelLayout& layout);

/// Per sample, at the workload's sequence, no parallel split: the FLOPs the ops add up to.
Flops ops_flops(const LayerGroup& layer, const Workload& w, Pass pass);

/// Why `w` cannot be simulated with TP `tp`, CP `cp` and PP `pp` ("" when it can): a split its
/// file describes no traffic for. TP needs the tensor-parallel traffic of every layer whose GEMMs
/// TP splits (and some GEMM that it splits), CP a context-parallel exchange, PP a boundary tensor
/// after every layer instance but the last, and PP x `virtual_stages` parts at least as many layer
/// instances as it cuts the model into.
std::string unsupported_split(const Workload& w, int tp, int cp, int pp, int virtual_stages = 1);

/// A `launch:` value: cuda_graphs (no dispatch cost), eager (the measured PyTorch cost per
/// kernel), or {mode: eager, dispatch: "20 us"}; the host time per kernel it means.
Duration parse_launch(const config::ConfigNode& node);

/// The typical global batch at N (geometric interpolation between the workload's v4.1 points,
/// the nearest end point outside them), rounded to a whole number of samples per data-parallel
/// rank.
std::int64_t typical_global_batch(const Workload& w, int accelerators, int data_parallel);
/// The same with the data-parallel ranks `parallel`'s model-parallel sizes leave at N (N per
/// TP x CP x PP, or N where that does not divide it: the layout is then the search's).
std::int64_t typical_global_batch(const Workload& w, int accelerators, const ParallelSpec& parallel);

}  // namespace sp::models
