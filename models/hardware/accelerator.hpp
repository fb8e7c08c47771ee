// An accelerator kind (models/hardware/*.yaml): peak throughput per precision, memory, the
// scale-up link and the node MLPerf submitters built around it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/kernel_costs.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// Multi-Instance GPU: the device splits into instances of whole compute slices (SMs) and memory
/// slices (capacity, bandwidth and L2), isolated from one another. Profiles are the instance sizes
/// the driver offers, each with the SMs it holds: compute slices x sms_per_slice on the A100, but
/// not on Hopper, whose 3g instance has 60 SMs and whose 1g with twice the memory 26
/// (`nvidia-smi mig -lgip`).
struct MigProfile {
  int compute_slices = 0;
  int memory_slices = 0;
  int sms = 0;
};
struct MigGeometry {
  int compute_slices = 0;  // in the whole device
  int memory_slices = 0;
  int sms_per_slice = 0;
  std::vector<MigProfile> profiles;  // ascending compute slices, then memory slices
};

struct Accelerator {
  std::string name;
  std::string vendor;
  std::vector<std::string> aliases;
  /// Architecture family ("hopper", "cdna3", "tpu_v5") and the software stack training usually
  /// runs on it ("nvidia": NVIDIA's MLPerf containers; "rocm", "jax", "synapse", "tinygrad"):
  /// a kind the calibration never saw inherits the software efficiency of its family on that
  /// stack, or of the stack (models/calibration.hpp).
  std::string family;
  std::string software_stack;
  std::map<std::string, FlopsPerSecond> peak;  // dense tensor rate by precision: bf16, fp16, fp8
  // Exponentials (and other special functions) a second on the SMs' multi-function units: 16 a
  // clock an SM on NVIDIA parts since Maxwell (CUDA C++ Programming Guide, arithmetic instruction
  // throughput). What a softmax pays (Kernel::exponentials); 0: not described, not charged.
  FlopsPerSecond special_function_rate;
  // What a process can allocate, the driver's total where a source gives it (NVIDIA's "80 GB" is
  // 80 GiB of HBM, of which the driver reports 81,559 MiB, 85.5 GB); a datasheet's figure else.
  Bytes memory_capacity;
  BytesPerSecond memory_bandwidth;
  std::string scale_up_topology;  // switch | bridge | pcie | torus3d
  std::string scale_up_link;
  BytesPerSecond scale_up_bandwidth;  // per accelerator, per direction
  std::optional<Watts> tdp;
  /// Board power with no kernel running (models/energy); when the file has none, a share of the
  /// TDP. Measured without a context where the file says so (H100); public figures are mostly
  /// with one, which draws a little more (PowerCalibration::context_fraction).
  std::optional<Watts> idle_power;
  /// Device memory a process's bare CUDA context takes (co-location), where measured.
  std::optional<Bytes> context_memory;
  int typical_accelerators_per_node = 1;
  int typical_nics = 0;
  BytesPerSecond typical_nic_bandwidth;
  /// How fast the submissions' training software runs on it relative to NVIDIA's on the
  /// reference H100 (1), beyond what its kernel costs explain: a factor on compute time. Set by
  /// calibration (calibration/params), not by the file.
  double efficiency_scale = 1.0;
  /// The SM clock relative to the one its kernel costs describe, which the arithmetic of GEMMs
  /// and attention (tensor and multi-function units) runs at: above 1 where a run boosts it
  /// (`nvidia-smi boost-slider --vboost`, which NVIDIA's one-node MLPerf configurations set).
  /// Bytes keep their time: HBM's clock is not the SMs'. Set from calibration for a boosted run,
  /// not by the file.
  double compute_clock = 1.0;
  /// What its kernels cost (models/hardware/kernel_costs.hpp): measured or estimated from its spec.
  KernelCosts compute;
  std::optional<MigGeometry> mig;  // where it supports MIG

  /// The dense rate training at `precision` runs at: that precision's peak, or where the
  /// accelerator has no such mode, the precision it falls back to (fp8 -> bf16 -> fp16; bf16 and
  /// fp16 stand in for each other: they share the tensor cores' rate). nullopt if none.
  std::optional<FlopsPerSecond> training_peak(const std::string& precision) const;
  /// The same; InputError at `where` when none applies.
  FlopsPerSecond peak_for(const std::string& precision, const config::ConfigNode& where) const;
};

Accelerator parse_accelerator(const config::ConfigNode& node);

}  // namespace sp::models
