// Measurements of one accelerator's kernels, read from either of the two formats users have:
//  - scalepoint-gpu-bench CSV: '#' metadata lines (the '# device 0: NAME, ..., 132 SMs, ...'
//    line names the GPU and its SM count), then rows kind,label,dtype,ranks,m,n,k,batch,bytes,
//    kernels,repetitions,time_min_us,time_median_us,time_p10_us,time_p90_us,achieved,
//    achieved_unit; gemm rows are one GEMM's (or one batched GEMM's) graph-timed time, memory
//    rows a copy of `bytes` (read + written), latency rows the time per kernel of back-to-back
//    small kernels (those moving no bytes give the kernel latency). The first version's files
//    (m = n = k in a `size` column) timed each GEMM between two events, which adds several
//    microseconds to small ones: their GEMMs are counted but not used, their copies are.
//  - JSON lines as a PyTorch script writes them: {"kind": "gemm", "dtype": "bf16", "m": ..,
//    "n": .., "k": .., "ms": ..}; other kinds are ignored.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sp::calibration {

struct GemmSample {
  std::string file;
  int line = 0;
  std::string label, dtype;
  double m = 0, n = 0, k = 0;
  double seconds = 0;  // one GEMM
  double batch = 1;    // independent products in the kernel
};

struct CopySample {
  double bytes = 0;  // read + written
  double seconds = 0;
};

struct ComputeMeasurements {
  std::string device;   // from the device line, "" when absent
  int units = 0;        // SMs from the device line, 0 when absent
  std::vector<GemmSample> gemms;
  std::vector<CopySample> copies;
  std::vector<double> kernel_seconds;  // latency probes: seconds per kernel
  int untimed_gemms = 0;               // GEMMs of the first bench version, not graph-timed
};

/// Reads `text` (the contents of `file`), appending to `into`; InputError at file:line for a
/// malformed row. The format is told by the first non-blank character ('{' for JSON lines).
void read_compute_measurements(const std::string& text, const std::string& file, ComputeMeasurements& into);

}  // namespace sp::calibration
