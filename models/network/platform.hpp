// A platform: nodes of one accelerator kind, the network tiers that join them, and the cost
// constants of its collective library's protocols. Platform files live in scenarios/platforms/.
#pragma once

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "models/network/kinds.hpp"
#include "models/hardware/accelerator.hpp"
#include "models/network/topology.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

/// What a node draws beside its accelerators, and the scale-out fabric's switches, for the
/// energy model (models/energy/energy.hpp). DC-equivalent, as MLPerf Power scores it.
struct PlatformPower {
  std::optional<Watts> host;  // per node: CPUs, memory, NICs, fans; default per accelerator slot (calibration)
  Watts switch_power{690};    // per scale-out switch: measured, Dell MLPerf v4.1 power logs (QM9700-class, sw_0.txt)
  int switch_radix = 64;      // ports per switch: NVIDIA Quantum-2 QM9700, 64 x NDR 400 Gb/s
  double psu_efficiency = 1;  // AC to DC: energy at the wall = DC energy / psu_efficiency
  double pue = 1;             // facility overhead (cooling, distribution) on the wall energy
};

struct Platform {
  std::string name;
  // Who operates it where the file describes one operator's cluster ("Microsoft Azure", "Oracle
  // Cloud"): such a platform is used only where named (a result row's platform column, a
  // scenario), never as the default for its accelerator kind. Empty: a reference node design.
  std::string site;
  Accelerator accelerator;
  Topology topology;
  std::array<ProtocolCosts, 3> protocols;  // indexed by Protocol
  /// The hosts' CPU vendor (key host_cpu), by which NCCL prices a collective's steps across nodes
  /// (ProtocolCosts::across_nodes); a result row's host_processor sets it where it names one.
  HostCpu host_cpu = HostCpu::intel;
  /// The algorithms the platform's collective library chooses among (NCCL: ring, tree, nvls,
  /// sharp); the others run only when asked for.
  std::vector<Algorithm> library_algorithms;
  /// Relative standard deviation of one accelerator's compute time from step to step (OS noise,
  /// clocks, thermal throttling): what stragglers are drawn from.
  double compute_jitter = 0;
  /// Relative standard deviation of sustained speed between accelerators of one kind in one
  /// cluster, fixed for a run (manufacturing and power management: the same SKU under the same
  /// power cap settles at different clocks). Sinha et al., "Not All GPUs Are Created Equal"
  /// (SC'22, arXiv 2208.11035), measured 90 % of the GPUs of Summit, Sierra-class Vortex,
  /// Frontera, Longhorn and Corona: an average variation of 8 % (at most 22 %) on compute-bound
  /// work, the whisker span 4 IQR / median of per-GPU iteration times (their artifact's
  /// plot_script/plot_aggregated.py, hal-uw/gpu_variability_sc22_artifact), which is 5.4 standard
  /// deviations of a normal: 1.5 % (at most 4.1 %). Its outliers (up to 1.5x) are faults, not this.
  double gpu_speed_spread = 0.015;
  /// Bytes of its own HBM traffic a collective causes on a rank per byte the rank receives on the
  /// wire, which memory-bound kernels running beside it lose (step_executor.hpp). NCCL's ring and
  /// tree protocols stage what arrives in a FIFO buffer in memory, read it back, and read the local
  /// data they reduce with or write the user's output: 3. (In-network reductions, NVLS and SHARP,
  /// stage nothing: collective_memory_time.) NCCL's maintainer (NVIDIA/nccl issue 1428):
  /// link bandwidth "needs to be multiplied by at least 2x for memory bandwidth, as we need to
  /// store to memory, then read back from it. If you add reading from or writing to user data, it
  /// can be 3x." Plausible 2 (registered user buffers) to 3.
  double collective_memory_traffic = 3;
  PlatformPower power;

  /// sigma of one rank's compute time relative to its kind's in one step: the persistent spread
  /// and the step-to-step jitter, independent normals.
  double rank_speed_sd() const { return std::sqrt(gpu_speed_spread * gpu_speed_spread + compute_jitter * compute_jitter); }

  int accelerators_per_node() const { return topology.accelerators_per_node; }
  /// Whether `accelerators` can talk at all: within one node (or one scale-up domain), or across
  /// nodes where the platform has scale-out NICs.
  bool reaches(int accelerators) const {
    return accelerators <= accelerators_per_node() || accelerators <= topology.tiers.front().size ||
           topology.tiers.back().bandwidth.value() > 0;
  }
  int nodes_for(int accelerators) const {
    const int per = accelerators_per_node();
    return (accelerators + per - 1) / per;
  }
  const ProtocolCosts& costs(Protocol p) const { return protocols[static_cast<int>(p)]; }
};

/// Parses a platform mapping (see scenarios/platforms/*.yaml). Quantities missing from the
/// tiers default to the accelerator's hardware file (scale-up link, typical node and NICs).
/// The platform a file describes; `accelerator_of` turns its `accelerator:` key into the
/// accelerator (Catalog's overload, models/catalog.hpp, looks it up in models/hardware).
Platform parse_platform(const config::ConfigNode& node,
                        const std::function<Accelerator(const config::ConfigNode&)>& accelerator_of);

}  // namespace sp::models
