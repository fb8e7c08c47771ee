// K small training jobs on one accelerator, on the event engine. Each job is a host thread that
// launches its step's kernels one after another (a dispatch each, stretched when the jobs' threads
// want more CPU cores than the host has) into one in-order stream, and waits for the step's last
// kernel before the next step (one synchronisation a step, e.g. reading the loss). The device runs
// the streams' head kernels according to the sharing mode:
//  - exclusive (default time slicing): one context at a time holds the whole device; it keeps it
//    until its stream runs dry or its time slice ends while another context has work, and each
//    switch leaves the device idle for the switch cost. Preempted kernels resume where they were.
//  - concurrent (MPS): every stream's head kernel runs at once; SMs are shared max-min fairly with
//    each kernel capped at its width (and each client at its thread percentage); a kernel
//    progresses at (SMs it holds / its width) of its speed alone; memory-bound kernels share the
//    achievable memory bandwidth when their demands exceed it.
//  - partitioned (MIG): each resident job owns an instance of `partition_sms` SMs and
//    `partition_bandwidth` of memory bandwidth; a kernel runs at (min(width, instance SMs) /
//    width) of its speed alone, memory-bound ones no faster than the instance's bandwidth allows,
//    and instances never slow each other (only the shared host does).
// Jobs are admitted `admit` at a time in order (1: sequential; Ray's fractional GPUs: 1/share);
// each pays its start-up (process, context, framework) on the host before its first launch.
// Early stopping (ASHA-like, as Ray Tune's ASHAScheduler stops trials): at each milestone, a job
// goes on only if its quality (what its validation metric would rank) is at least the
// (1 - 1/reduction) quantile of the qualities recorded there by the jobs before it (the first
// always goes on); a stopped job ends there and frees its admission slot.
// Power follows the energy model's accelerator states: idle, plus an idle context's share while
// any context is alive, plus the busy share in proportion to the SMs running kernels (an H100 draws
// close to linearly in the SMs a kernel holds: calibration/data/colocation/h100_coloc_bench.csv).
#pragma once

#include <functional>
#include <vector>

#include "models/colocation/small_workload.hpp"
#include "models/energy/energy.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

struct ColocatedJob {
  const std::vector<StepKernel>* kernels = nullptr;  // one step
  double steps = 0;
  Duration dispatch_per_launch;
  Duration host_per_step;
  Duration start_up;
  double cpu_cores = 1;
  double quality = 0;  // early stopping ranks jobs by it (higher is better)
};

// Time slicing as measured on an H100 (driver 580) by scalepoint-coloc-bench and derived in closed
// form by `scalepoint colocate --validate calibration/data/colocation/h100_coloc_bench.csv`
// (derive_time_slicing): the slice a context keeps the device for while others wait (the driver's
// nominal channel-group timeslice is 1,024 us, open-gpu-kernel-modules kernel_fifo_gv100.c; the
// device holds it about 1.8 ms), and the device's idle time per switch. Assumed for other GPUs
// until measured on them.
inline constexpr Duration kMeasuredTimeSlice = microseconds(1790);
inline constexpr Duration kMeasuredSwitchCost = microseconds(143);
// Shorter slices than this are no driver's setting (the nominal one is 1,024 us) and would cost
// the simulation an event per slice: a "1 ps" slice never ends.
inline constexpr Duration kShortestTimeSlice = microseconds(1);

struct DeviceSharing {
  enum class Mode { exclusive, concurrent, partitioned } mode = Mode::exclusive;
  int sms = 1;
  BytesPerSecond memory_bandwidth;  // achievable
  Duration time_slice = kMeasuredTimeSlice;
  Duration switch_cost = kMeasuredSwitchCost;
  double client_sm_share = 1;  // MPS active thread percentage / 100
  int admit = 1;               // jobs resident at once
  int partition_sms = 0;                // partitioned: each instance's SMs
  BytesPerSecond partition_bandwidth;   // ... and its memory bandwidth (achievable)
  double host_cores = 1;
  AcceleratorPower power;
  double reduction = 0;             // early stopping: 0 off, else ASHA's reduction factor (> 1)
  std::vector<double> milestones;   // steps at which it decides, ascending
};

struct ColocationRun {
  Duration makespan;
  std::vector<Duration> completion;  // per job, from time 0
  std::vector<double> steps_run;     // per job: all its steps, or where early stopping ended it
  double gpu_busy_share = 0;         // time with a kernel running / makespan (nvidia-smi "utilisation")
  double sm_active = 0;              // time-averaged share of SMs running kernels (DCGM SM_ACTIVE)
  Joules energy;                     // accelerator board only
  std::uint64_t context_switches = 0;
  std::uint64_t events = 0;
};

/// `progress`, where given, hears now and then the share of the jobs' steps done (0 to 1; early
/// stopping ends some short of theirs).
ColocationRun simulate_colocation(const std::vector<ColocatedJob>& jobs, const DeviceSharing& device,
                                  const std::function<void(double)>& progress = {});

/// The q-quantile of `values` with linear interpolation between order statistics (numpy's
/// default, which Ray's ASHA uses for its cut-off).
double quantile_linear(std::vector<double> values, double q);

}  // namespace sp::models
