#include "models/step/buckets.hpp"

#include <limits>

namespace sp::models {

BucketPlan plan_buckets(const std::vector<std::pair<int, Bytes>>& backward_order, Bytes cap) {
  // A workload file always gives a positive cap; one built in code without it has no bucketing.
  if (!(cap.value() > 0)) cap = Bytes(std::numeric_limits<double>::infinity());
  BucketPlan plan;
  double open = 0;  // bytes in the open bucket
  int last_trainable = -1;
  for (const auto& [instance, grad] : backward_order) {
    const double bytes = grad.value();
    if (!(bytes > 0)) continue;
    plan.first[instance] = plan.buckets.size();
    open += bytes;
    while (open >= cap.value()) {
      plan.buckets.push_back({cap, instance});
      open -= cap.value();
    }
    last_trainable = instance;
  }
  if (open > 0) plan.buckets.push_back({Bytes(open), last_trainable});
  return plan;
}

}  // namespace sp::models
