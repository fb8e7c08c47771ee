// The calibrated parameters (calibration/params/mlperf_v4.1.yaml, written by `scalepoint
// calibrate mlperf`) and how they change the model:
//  - per workload, how fast its MLPerf implementation runs relative to its ops as described
//    (software_efficiency, compute_model.hpp), and its per-evaluation overhead and host work;
//  - the software efficiency of an accelerator beyond what its kernel costs explain, relative to
//    NVIDIA's stack on Hopper, as a product of three levels, each a log-scale with its own
//    uncertainty: the software stack ("tinygrad", "jax"), the architecture family on that stack
//    ("blackwell/nvidia") and the kind itself ("B200-SXM-180GB"). A kind the fit never saw takes
//    its family's (or its stack's, or none) and the spread of the levels it misses widens its
//    prediction interval; predict says which it was.
// Few, physical, bounded: see calibration/mlperf/calibrate.hpp.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "models/hardware/accelerator.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct WorkloadCalibration {
  double software_efficiency = 1;
  double log_sd = 0;        // its uncertainty after the fit (log scale)
  double model_error = 0;   // log-space spread of the model's held-out errors (prediction intervals)
  // Fitted where the workload file has them, in kEvaluationCosts' order.
  std::array<std::optional<Duration>, kEvaluationCosts.size()> evaluation_costs;
  std::optional<Duration> host_per_step;  // fitted where the workload file sets it
  // The same for the workload's code on another software stack (Workload::kDescribedStack is
  // the files'), fitted where that stack's rows are: "jax" -> maxdiffusion's fixed time per step.
  std::map<std::string, Duration> host_per_step_on;

  std::optional<Duration>& cost(std::string_view calibration_key);
  const std::optional<Duration>& cost(std::string_view calibration_key) const;
};

/// One level of the software efficiency: a log-scale, and the uncertainty after the fit of the
/// sum of the levels from the stack down to this one (the levels are correlated).
struct SoftwareLevel {
  double log_scale = 0;
  double sd = 0;
};

/// What an accelerator's software efficiency is, and where it came from.
struct SoftwareEfficiency {
  double scale = 1;
  double log_sd = 0;   // uncertainty of log(scale): fitted levels' sd, unseen levels' spread
  std::string source;  // "fitted: H200-SXM5-141GB", "family: blackwell/nvidia", "stack: jax", "prior: ..."
};

struct Calibration {
  std::map<std::string, WorkloadCalibration> workloads;  // by workload name
  std::map<std::string, SoftwareLevel> stacks;     // the reference stack is absent: 0
  std::map<std::string, SoftwareLevel> families;   // "family/stack"; the reference family absent
  std::map<std::string, SoftwareLevel> kinds;      // kinds with calibration rows; the reference absent
  // How far a kind strays from its family, a family from its stack, a stack from the reference,
  // before any data: the priors of the fit, and the spread added for a level it never saw.
  double kind_spread = 0.15, family_spread = 0.25, stack_spread = 0.7;
  // How far a workload's fitted quantities (host time per step, evaluation costs) may stray from
  // the files' estimates, in log: the fit's prior width, and the spread of the host time per step
  // of code on a stack the fit never saw (Calibration::unseen_host_spread).
  double workload_spread = 2.0;
  std::string reference_stack = "nvidia", reference_family = "hopper/nvidia", reference_kind = "H100-SXM5-80GB";
  std::map<int, double> scale_error;  // upper bound of N -> model error there (Workload::model_error_by_scale)
  // How much faster the compute-bound kernels of a run with its SM clock boosted go (nvidia-smi
  // boost-slider --vboost; Accelerator::compute_clock = 1 + gain), and the fit's uncertainty of
  // it. Fitted on the rows whose configurations boost against those that do not; no public figure.
  double clock_boost_gain = 0, clock_boost_sd = 0;
  /// The most a boost can give: the SMs stay within their clock range, whose top (1.98 GHz on the
  /// H100 SXM5) is 8 % above the 1.83 GHz its low-precision tensor peak is rated at (NVIDIA's H100
  /// whitepaper, as transcribed at glennklockwood.com/garden/processors/h100), and a power-capped
  /// part runs below its rated clock: twice that.
  static constexpr double kMaxClockBoostGain = 0.16;

  /// The workload as calibration has it, for its code on software `stack` (the files' when
  /// empty): its implementation costs and prediction spread fitted (the file's where the fit has
  /// none); what the model is, what the benchmark asks and the recipes as the file gives them.
  /// Applied at lookup, to a copy: the catalog's description is never written.
  Workload calibrated(Workload w, const std::string& stack = {}) const;
  /// The log-spread of `w`'s host time per step on `stack`: 0 where the fit saw that code (the
  /// files' stack, or a fitted host_per_step_on), workload_spread for another stack's code the
  /// fit never saw (it takes the files' value, which says little about other code).
  double unseen_host_spread(const Workload& w, const std::string& stack) const;
  SoftwareEfficiency software(const Accelerator& a, const std::string& stack) const;
  /// Sets the accelerator's efficiency_scale for software `stack` (its own default when empty).
  SoftwareEfficiency apply(Accelerator& a, const std::string& stack = {}) const;
};

/// The scale ranges of the error summaries: "N<=8", "N=9-64", "N>64", by upper bound of N.
const std::map<int, std::string>& scale_ranges();

/// The software stack a published result ran: from its framework string ("tinygrad",
/// "maxdiffusion" -> jax, ...), else the accelerator's usual one.
std::string software_stack_of(const std::string& framework, const Accelerator& a);

/// Reads the `workloads`, `software` and `model_error_by_scale` sections of a parameter file.
Calibration parse_calibration(const config::ConfigNode& node);
/// The default: calibration/params/mlperf_v4.1.yaml under the data root, if it exists.
Calibration default_calibration();

}  // namespace sp::models
