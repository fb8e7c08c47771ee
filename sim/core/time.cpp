#include "sim/core/time.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/core/error.hpp"
#include <string>

namespace sp {

void time_overflow() {
  throw ModelError("a simulated time beyond int64 picoseconds (about +-106 days); check the inputs for a unit slip or an "
                   "implausibly long cost");
}

namespace {
// Largest magnitude (in ps) a double can be converted to int64 without overflow.
constexpr double kMaxPs = 9.2e18;

std::int64_t round_ps(double ps) {
  if (!std::isfinite(ps) || std::fabs(ps) > kMaxPs) {
    // A valid input the model cannot simulate (exit status 1), usually a unit slip somewhere.
    throw ModelError("a time span of " + std::to_string(ps * 1e-12) +
                     " s is outside the simulated range (about +-106 days); check the inputs for a unit slip "
                     "(\"1 b/s\" is one bit per second)");
  }
  return std::llround(ps);
}
}  // namespace

Duration seconds(double s) { return Duration::from_ps(round_ps(s * 1e12)); }

Duration scale(Duration d, double factor) {
  return Duration::from_ps(round_ps(static_cast<double>(d.ps()) * factor));
}

}  // namespace sp
