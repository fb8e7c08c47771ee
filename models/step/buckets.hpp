// Gradient buckets, as the step graph reduces them: backward runs a stage's layer instances in
// reverse order and each produces its gradients (trainable parameters x bytes per parameter).
// They are packed into buckets of the cap in production order; a bucket is reduced after the
// backward of the instance that fills it (a large instance may fill several), and what remains
// after the last trainable instance forms a last, smaller bucket. Frozen instances produce nothing.
// (PyTorch DDP and Megatron's buckets work so: Li et al., "PyTorch Distributed", VLDB 2020.)
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace sp::models {

struct BucketPlan {
  struct Bucket {
    Bytes bytes;
    int closes_at;  // the instance whose backward fills it
  };
  std::vector<Bucket> buckets;        // in reduction order
  std::map<int, std::size_t> first;   // instance -> the bucket its first bytes go to
};

/// `backward_order`: (instance, its gradient bytes) in the order backward runs them. `cap` must be
/// positive (infinite: one bucket).
BucketPlan plan_buckets(const std::vector<std::pair<int, Bytes>>& backward_order, Bytes cap);

/// Instances whose gradients live in one buffer with its own cap (Megatron-core keeps one per
/// model chunk): a bucket never holds two segments' gradients.
struct BucketSegment {
  std::vector<std::pair<int, Bytes>> backward_order;
  Bytes cap;
};
/// The segments in the order backward runs them.
BucketPlan plan_buckets(const std::vector<BucketSegment>& segments);

}  // namespace sp::models
