#include "models/step/buckets.hpp"

namespace sp::models {

std::vector<GradientBucket> make_buckets(const std::vector<LayerGroup>& layers,
                                         const std::vector<Duration>& backward_time,
                                         Bytes bytes_per_parameter, Bytes bucket_cap) {
  std::vector<GradientBucket> buckets;
  Bytes filled;        // bytes in the open bucket
  Duration t;          // backward time elapsed before the current instance
  Duration last_ready; // when the last gradient byte so far was produced
  for (std::size_t i = layers.size(); i-- > 0;) {
    const LayerGroup& layer = layers[i];
    const Bytes grad = bytes_per_parameter * static_cast<double>(layer.trainable_parameters);
    for (int r = 0; r < layer.repeat; ++r) {
      const Duration d = backward_time[i];
      Bytes produced;  // of this instance's gradients
      while (grad.value() > 0 && filled + (grad - produced) >= bucket_cap) {
        const Bytes take = bucket_cap - filled;
        produced += take;
        buckets.push_back({bucket_cap, t + scale(d, produced / grad)});
        filled = Bytes(0);
      }
      if (grad.value() > 0) {
        filled += grad - produced;
        last_ready = t + d;
      }
      t += d;
    }
  }
  if (filled.value() > 0) buckets.push_back({filled, last_ready});
  return buckets;
}

}  // namespace sp::models
