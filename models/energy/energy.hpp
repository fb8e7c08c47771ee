// Energy of a training run, DC-equivalent at the node inputs as MLPerf Power scores it, plus the
// scale-out switches, and at the wall with the PSU efficiency and the facility's PUE:
//   E = N x [ busy x P_busy + (T - busy) x P_wait ]          accelerators
//     + nodes x P_host x T                                   CPUs, memory, NICs, fans
//     + switches x P_switch x T                              scale-out fabric
//   P_busy = P_idle + f_compute x (TDP - P_idle),  P_wait = P_idle + f_wait x (TDP - P_idle)
// busy is the time an accelerator runs kernels: every step's forward, backward and optimizer
// (slowed by communication kernels beside them: interference) and the forward passes of the
// evaluations; the rest of the run it waits (exposed communication, pipeline bubble, stragglers,
// evaluation overhead, what an evaluation's forward waits for, and host work). f_compute is the share of the idle-to-TDP range training
// kernels draw: GPUs running dense training sit near their power limit (fitted on the MLPerf v4.1
// power row, `scalepoint calibrate power`); f_wait the share while only communication kernels and
// links are busy (estimate). The switch count follows a non-blocking folded Clos of the platform's
// radix over the nodes' NIC ports.
#pragma once

#include <optional>
#include <string>

#include "models/hardware/accelerator.hpp"
#include "models/network/platform.hpp"
#include "models/training/time_to_train.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// The power model's fitted and estimated constants (calibration/params/power_v4.1.yaml).
struct PowerCalibration {
  double compute_fraction = 0.9;    // of the idle-to-TDP range, while kernels run: plausible 0.5-1
  double wait_fraction = 0.1;       // while waiting on communication or the host: plausible 0-0.3
  double idle_fraction = 0.17;      // idle board power / TDP for files without idle_power
  // An idle CUDA context (co-location: a process alive between its kernels): an H100 drew 120-127 W
  // (124 W mean of three runs) with one against 101-110 W (105 W) with none
  // (calibration/data/colocation/h100_coloc_bench.csv), 0.03 of its idle-to-TDP range; assumed alike
  // elsewhere.
  double context_fraction = 0.03;
  Watts host_per_accelerator{275};  // host power per accelerator slot for platforms without power.host
  std::string source = "defaults (no calibration/params/power_v4.1.yaml)";
};

PowerCalibration parse_power_calibration(const config::ConfigNode& node);
/// calibration/params/power_v4.1.yaml under the data root, if it exists; else the defaults.
const PowerCalibration& default_power_calibration();

/// One accelerator's draw while busy, while waiting (on communication or the host, in a training
/// run), idle, and idle but holding a context; nullopt without a TDP.
struct AcceleratorPower {
  Watts idle, busy, wait, context;
};
std::optional<AcceleratorPower> accelerator_power(const Accelerator& a, const PowerCalibration& c);

/// Switches of a non-blocking folded Clos of `radix`-port switches joining `endpoints` ports: one
/// switch up to `radix` ports, else leaves with radix/2 ports down and as many tiers above as it
/// takes, the top tier half as many switches as the others.
int clos_switches(long long endpoints, int radix);

struct EnergyEstimate {
  bool ok = false;
  std::string why;  // when not ok: what the model lacks (no TDP, no time)
  Duration run;     // the time to train it is for
  Duration busy;    // per accelerator, running kernels
  AcceleratorPower accelerator;
  Watts host;  // per node
  int switches = 0;
  Joules accelerators, hosts, network;  // over the run
  double psu_efficiency = 1, pue = 1;

  Joules nodes() const { return accelerators + hosts; }
  Joules total() const { return nodes() + network; }
  /// At the wall, facility overhead included.
  Joules facility() const { return total() * (pue / psu_efficiency); }
  Watts average() const { return total() / run; }
  double busy_share() const { return busy / run; }
};

/// The energy of the run `e` describes, on `p`; `run` overrides its time to train (a percentile).
EnergyEstimate estimate_energy(const TrainingEstimate& e, const Platform& p, const PowerCalibration& c,
                               std::optional<Duration> run = std::nullopt);

/// The accelerators' busy time over a run of `e`.
Duration busy_time(const TrainingEstimate& e);

}  // namespace sp::models
