#include "models/step/buckets.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace sp::models {

BucketPlan plan_buckets(const std::vector<BucketSegment>& segments) {
  BucketPlan plan;
  for (const BucketSegment& seg : segments) {
    const double cap = seg.cap.value();
    // A zero or NaN cap would cut a bucket at every byte: a caller's error, never a workload's
    // (its file's cap is checked where it is read).
    if (!(cap > 0)) throw ModelError(fmt::format("gradient bucket cap of {} B", cap));
    double open = 0;  // bytes in the open bucket
    int last_trainable = -1;
    for (const auto& [instance, grad] : seg.backward_order) {
      const double bytes = grad.value();
      if (!(bytes > 0)) continue;
      plan.first[instance] = plan.buckets.size();
      open += bytes;
      while (open >= cap) {
        plan.buckets.push_back({seg.cap, instance});
        open -= cap;
      }
      last_trainable = instance;
    }
    if (open > 0) plan.buckets.push_back({Bytes(open), last_trainable});
  }
  return plan;
}

BucketPlan plan_buckets(const std::vector<std::pair<int, Bytes>>& backward_order, Bytes cap) {
  return plan_buckets(std::vector<BucketSegment>{{backward_order, cap}});
}

}  // namespace sp::models
