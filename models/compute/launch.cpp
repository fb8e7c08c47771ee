#include "models/compute/launch.hpp"

#include <algorithm>

namespace sp::models {

void issue(IssueState& s, const std::vector<KernelRun>& runs, Duration dispatch) {
  for (const KernelRun& r : runs) {
    if (!(r.count > 0)) continue;
    const Duration kernels = scale(r.each, r.count);
    const Duration dispatches = scale(dispatch, r.count);
    // A fractional run counts as one kernel for its first dispatch and last duration.
    const Duration first = scale(dispatch, std::min(r.count, 1.0));
    const Duration last = scale(r.each, std::min(r.count, 1.0));
    s.device = std::max({s.device + kernels, s.host + first + kernels, s.host + dispatches + last});
    s.host += dispatches;
  }
}

Duration issued_time(const std::vector<KernelRun>& runs, Duration dispatch) {
  IssueState s;
  issue(s, runs, dispatch);
  return s.device;
}

}  // namespace sp::models
