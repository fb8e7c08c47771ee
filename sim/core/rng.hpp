// Reproducible randomness. A stream is named and derived from (seed, point id, stream name), so
// adding a consumer never shifts another consumer's draws, and a sweep point gives the same draws
// whichever MPI rank runs it. The generator (xoshiro256**) and every distribution are our own
// code: std:: distributions are not specified bit for bit and differ between standard libraries.
#pragma once

#include <cstdint>
#include <string_view>

namespace sp {

class RngStream {
 public:
  RngStream(std::uint64_t seed, std::uint64_t point_id, std::string_view stream_name);

  /// 64 uniformly distributed bits.
  std::uint64_t next_u64();
  /// Uniform on [0, 1) with 53 bits of resolution.
  double uniform01();
  /// Uniform on [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  /// Normal with the given mean and standard deviation (Marsaglia's polar method).
  double normal(double mean, double stddev);
  /// exp(N(mu, sigma)): mu and sigma are the parameters of the underlying normal.
  double lognormal(double mu, double sigma);

 private:
  std::uint64_t s_[4];
};

/// FNV-1a 64-bit hash; stable across platforms, used to turn names into seeds.
std::uint64_t fnv1a64(std::string_view text);
/// SplitMix64 finaliser: a bijective 64-bit mixer.
std::uint64_t splitmix64(std::uint64_t x);

}  // namespace sp
