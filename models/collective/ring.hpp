// Ring all-reduce over p accelerators laid out in nodes (closed form, the "analytic" fidelity).
// A ring all-reduce is a reduce-scatter then an all-gather: 2(p-1) steps, each rank sending
// n/p bytes per step, so every link carries 2(p-1)/p * n bytes (Patarasuk and Yuan, JPDC 2009):
//   t = (steps over scale-up) * alpha_up + (steps crossing nodes) * alpha_out + 2(p-1)/p * n / B
// where B is the bottleneck bus bandwidth: the scale-up link, or, when the ring spans nodes and
// its channels are spread over the node's NICs, min(scale-up, NICs per node x NIC bandwidth).
// Following NCCL's tuning model, 2(nodes-1) of the steps pay the inter-node latency.
#pragma once

#include <cstdint>

#include "models/network/platform.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

/// The terms of the closed form, as data (testable without an engine, fit by calibration).
struct RingCostTerms {
  std::int64_t intra_steps = 0;   // steps paying the scale-up latency
  std::int64_t inter_steps = 0;   // steps paying the scale-out latency
  double bytes_factor = 0;        // bytes per link = bytes_factor * n  (= 2(p-1)/p)
  BytesPerSecond bus_bandwidth;   // bottleneck per-rank bandwidth
};

RingCostTerms ring_all_reduce_terms(const Platform& platform, int ranks);
Duration ring_all_reduce_time(const Platform& platform, int ranks, Bytes bytes);

}  // namespace sp::models
