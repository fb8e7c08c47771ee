// Collective operations and their algorithms as closed-form cost terms (the "analytic"
// fidelity). Each algorithm returns its terms as data: a fixed start-up, latency terms (steps x
// per-step latency at a tier) and bandwidth terms (bytes factor x n / bandwidth), either run one
// after another or pipelined (the slowest bandwidth term bounds the time). The terms are linear
// in the latencies and inverse bandwidths, so calibration can fit them directly.
//
// Sizes follow nccl-tests: n is the per-rank buffer of an all-reduce or broadcast, the whole
// gathered buffer of an all-gather or reduce-scatter, and the per-rank send buffer of an
// all-to-all; bus bandwidth = n / time x (2(p-1)/p for all-reduce, (p-1)/p for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/collective/kinds.hpp"
#include "models/network/platform.hpp"
#include "models/network/topology.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// nccl-tests' bus-bandwidth factor for `op` over p ranks.
double bus_factor(CollectiveOp op, int ranks);

struct LatencyTerm {
  std::size_t tier;
  std::int64_t steps;
  Duration per_step;
};

struct BandwidthTerm {
  std::string link;     // which link limits this term, for reports ("scale_up", "scale_out nics")
  double bytes_factor;  // bytes crossing that link per byte of n
  BytesPerSecond bandwidth;
};

struct CostTerms {
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  Duration fixed;  // launch and in-network start-up
  std::vector<LatencyTerm> latency;
  std::vector<BandwidthTerm> bandwidth;
  bool pipelined = true;  // bandwidth terms overlap (max) rather than add

  Duration latency_total() const;
  Duration time(Bytes n) const;
};

/// The terms of `algorithm` with `protocol` for `op` on `group`, or nullopt when the
/// combination does not exist on this platform (no NVLS switch, p not a power of two, ...).
std::optional<CostTerms> cost_terms(const Platform& platform, const Group& group, CollectiveOp op,
                                    Algorithm algorithm, Protocol protocol);

/// What the caller allows; unset means "as the platform's library would choose".
struct CollectiveChoice {
  std::optional<Algorithm> algorithm;
  std::optional<Protocol> protocol;
};

struct Selected {
  CostTerms terms;
  Duration time;
};

/// The fastest allowed (algorithm, protocol) for `bytes`, as NCCL's tuner picks: among the
/// platform's library algorithms unless one is forced. Throws ModelError if none applies.
Selected select_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes bytes,
                           const CollectiveChoice& choice = {});

}  // namespace sp::models
