// Gradient buckets: backward runs the layers in reverse order and each layer instance produces
// its gradients (trainable parameters x bytes per parameter) over its backward time. Gradients
// are packed into buckets of at most the bucket cap, in production order; a bucket is ready for
// its all-reduce when its last byte is produced (production inside an instance is taken as
// uniform, so a bucket boundary may fall inside a large layer).
#pragma once

#include <vector>

#include "models/workloads/workload.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

struct GradientBucket {
  Bytes bytes;
  Duration ready;  // from the start of backward
};

/// `backward_time[i]` is the backward time of one instance of `layers[i]`.
std::vector<GradientBucket> make_buckets(const std::vector<LayerGroup>& layers,
                                         const std::vector<Duration>& backward_time,
                                         Bytes bytes_per_parameter, Bytes bucket_cap);

}  // namespace sp::models
