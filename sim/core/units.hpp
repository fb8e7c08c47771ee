// Strong types for the physical quantities the model computes with. Each is a double in its SI
// base unit (bytes, FLOP, bytes/s, FLOP/s, watts, joules); only physically meaningful operators exist, so
// "bytes / FLOP/s" does not compile. Conversion to a bare double is explicit (.value()).
#pragma once

#include <compare>

#include "sim/core/time.hpp"

namespace sp {

/// A linear quantity: it adds to itself and scales by dimensionless reals.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }
  constexpr auto operator<=>(const Quantity&) const = default;
  friend constexpr Quantity operator*(double k, Quantity q) { return q * k; }

 private:
  double v_ = 0.0;
};

using Bytes = Quantity<struct BytesTag>;                    // B
using Flops = Quantity<struct FlopsTag>;                    // floating-point operations
using BytesPerSecond = Quantity<struct BytesPerSecondTag>;  // B/s
using FlopsPerSecond = Quantity<struct FlopsPerSecondTag>;  // FLOP/s
using Watts = Quantity<struct WattsTag>;                    // W
using Joules = Quantity<struct JoulesTag>;                  // J

/// Energy drawn at power `p` for `d`.
constexpr Joules operator*(Watts p, Duration d) { return Joules(p.value() * to_seconds(d)); }
constexpr Joules operator*(Duration d, Watts p) { return p * d; }
/// Average power of `e` spread over `d`.
constexpr Watts operator/(Joules e, Duration d) { return Watts(e.value() / to_seconds(d)); }

/// Time to move `b` at rate `r`, rounded to the nearest picosecond.
inline Duration operator/(Bytes b, BytesPerSecond r) { return seconds(b.value() / r.value()); }
/// Time to execute `f` at rate `r`, rounded to the nearest picosecond.
inline Duration operator/(Flops f, FlopsPerSecond r) { return seconds(f.value() / r.value()); }
constexpr Bytes operator*(BytesPerSecond r, Duration d) { return Bytes(r.value() * to_seconds(d)); }

constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }

}  // namespace sp
