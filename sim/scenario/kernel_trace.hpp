// A measured training step as the co-location simulation's job: the kernels of one step of a
// torch.profiler trace as calibration/bench/pointnet_profile.py writes it (<model>_kernels.csv:
// step, kind, name, start_us, duration_us, launch_us, grid, ...). It separates what the sharing
// model gets right from what the kernel model costs: a job run from its own trace has its real
// kernels, gaps and launch pattern.
#pragma once

#include <string>
#include <vector>

#include "models/colocation/small_workload.hpp"
#include "models/hardware/accelerator.hpp"
#include "sim/core/time.hpp"

namespace sp {

// A kernel launched within this time of the one before it on the host was launched by a library
// inside the same framework op (cuDNN's transposes, a backward's second GEMM): a framework dispatch
// takes 30-37 us on the measured hosts, a bare launch 4 us (profiled, about 1.5x slower).
inline constexpr Duration kLibraryLaunchWindow = microseconds(8);

/// The kernels of trace step `step` (-1: the middle one of those in the file): each its measured
/// duration plus the accelerator's launch latency alone, as wide as its grid's blocks (at most the
/// SMs; memory copies 1), a framework dispatch unless launched within kLibraryLaunchWindow of the
/// previous one (then `library_launch` of host time), and the host waiting on a copy to the host
/// before the step's end (GradScaler's check). InputError naming file, line and column otherwise.
std::vector<models::StepKernel> load_kernel_trace(const std::string& csv, int step, const models::Accelerator& a,
                                                  Duration library_launch);

}  // namespace sp
