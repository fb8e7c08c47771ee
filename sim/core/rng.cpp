#include "sim/core/rng.hpp"

#include <cmath>

#include "sim/core/det_math.hpp"

namespace sp {

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

RngStream::RngStream(std::uint64_t seed, std::uint64_t point_id, std::string_view stream_name) {
  // Mix the three coordinates through distinct splitmix rounds so that (seed, point) pairs that
  // differ in one coordinate give unrelated states.
  std::uint64_t x = splitmix64(seed) ^ splitmix64(point_id ^ 0x6a09e667f3bcc909ULL) ^
                    splitmix64(fnv1a64(stream_name));
  for (auto& word : s_) {
    x = splitmix64(x);
    word = x;
  }
}

std::uint64_t RngStream::next_u64() {
  const auto rotl = [](std::uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RngStream::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double RngStream::normal(double mean, double stddev) {
  // Polar method: needs only log and sqrt; sqrt is correctly rounded by IEEE 754 and log is ours.
  for (;;) {
    const double u = 2.0 * uniform01() - 1.0;
    const double v = 2.0 * uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) {
      return mean + stddev * u * std::sqrt(-2.0 * det::log(s) / s);
    }
  }
}

double RngStream::lognormal(double mu, double sigma) { return det::exp(normal(mu, sigma)); }

}  // namespace sp
