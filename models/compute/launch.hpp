// The host as a second resource of the compute model: in eager PyTorch every kernel is
// dispatched by the host (Python, the op dispatcher, autograd, the launch itself), one after
// another, and a kernel cannot start before it has been dispatched nor before the kernel ahead
// of it in the stream ends. With CUDA graphs the host dispatches once per graph and the device
// runs back to back: the dispatch cost is zero.
//
// Kernel i is dispatched at h_i = h_{i-1} + d and ends at e_i = max(h_i, e_{i-1}) + t_i. For a
// run of c identical kernels of duration t from host time H and device time D (c >= 1):
//   D' = max(D + c t, H + d + c t, H + c d + t),   H' = H + c d
// (the device's backlog, the first kernel's dispatch, or the last kernel's dispatch bounds it;
// for t >= d the last term never wins, for t < d the middle one never does). So a pass of many
// short kernels takes about its dispatches, a pass of long ones its kernels, and a mixed pass
// loses what the host cannot dispatch ahead during its short kernels.
#pragma once

#include <vector>

#include "models/hardware/host_dispatch.hpp"
#include "sim/core/time.hpp"

namespace sp::models {

/// `count` kernels of `each` device time, dispatched one after another (count may be fractional
/// where fusion removed a share of a layer's element-wise kernels).
struct KernelRun {
  double count = 0;
  Duration each;
};

/// Where the host's dispatching and the device's stream stand.
struct IssueState {
  Duration host;    // the host has dispatched everything so far
  Duration device;  // the device has run everything so far
};


/// Dispatches and runs `runs` in order from `state`, with `dispatch` host time per kernel.
void issue(IssueState& state, const std::vector<KernelRun>& runs, Duration dispatch);

/// The device time of `runs` from an idle host and device: their kernels back to back when
/// `dispatch` is zero, never less than their dispatches.
Duration issued_time(const std::vector<KernelRun>& runs, Duration dispatch);

}  // namespace sp::models
