// Simulated time: a point (SimTime) and a span (Duration), both integer picoseconds.
// Integers make "same time" exact and results identical on every machine; 1 ps is the time one
// byte takes at 1 TB/s, and int64 picoseconds cover about +-106 days of simulated time.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace sp {

/// A sum or product of times past int64 picoseconds (about 106 days): the ModelError that
/// seconds() throws for such a span, where the raw arithmetic would wrap round.
[[noreturn]] void time_overflow();
constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) time_overflow();
  return r;
}
constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) time_overflow();
  return r;
}
constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) time_overflow();
  return r;
}

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration from_ps(std::int64_t ps) { return Duration(ps); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }

  constexpr Duration operator+(Duration o) const { return Duration(checked_add(ps_, o.ps_)); }
  constexpr Duration operator-(Duration o) const { return Duration(checked_sub(ps_, o.ps_)); }
  constexpr Duration& operator+=(Duration o) { ps_ = checked_add(ps_, o.ps_); return *this; }
  constexpr Duration& operator-=(Duration o) { ps_ = checked_sub(ps_, o.ps_); return *this; }
  constexpr Duration operator*(std::int64_t k) const { return Duration(checked_mul(ps_, k)); }
  constexpr Duration operator/(std::int64_t k) const { return Duration(ps_ / k); }
  /// Ratio of two spans (dimensionless).
  constexpr double operator/(Duration o) const {
    return static_cast<double>(ps_) / static_cast<double>(o.ps_);
  }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

constexpr Duration operator*(std::int64_t k, Duration d) { return d * k; }

constexpr Duration picoseconds(std::int64_t v) { return Duration::from_ps(v); }
constexpr Duration nanoseconds(std::int64_t v) { return Duration::from_ps(v * 1'000); }
constexpr Duration microseconds(std::int64_t v) { return Duration::from_ps(v * 1'000'000); }
constexpr Duration milliseconds(std::int64_t v) { return Duration::from_ps(v * 1'000'000'000); }

/// Seconds (possibly fractional) to a Duration, rounded to the nearest picosecond.
/// Throws std::out_of_range when the value does not fit (NaN, infinite, > ~106 days).
Duration seconds(double s);
/// Scale a span by a real factor (e.g. an efficiency), rounded to the nearest picosecond.
Duration scale(Duration d, double factor);
constexpr double to_seconds(Duration d) { return static_cast<double>(d.ps()) * 1e-12; }

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ps(std::int64_t ps) { return SimTime(ps); }
  static constexpr SimTime zero() { return SimTime(0); }
  constexpr std::int64_t ps() const { return ps_; }

  constexpr SimTime operator+(Duration d) const { return SimTime(checked_add(ps_, d.ps())); }
  constexpr SimTime& operator+=(Duration d) { ps_ = checked_add(ps_, d.ps()); return *this; }
  constexpr Duration operator-(SimTime o) const { return Duration::from_ps(checked_sub(ps_, o.ps_)); }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

constexpr double to_seconds(SimTime t) { return static_cast<double>(t.ps()) * 1e-12; }
constexpr SimTime max(SimTime a, SimTime b) { return a < b ? b : a; }
constexpr Duration max(Duration a, Duration b) { return a < b ? b : a; }
constexpr SimTime min(SimTime a, SimTime b) { return b < a ? b : a; }
constexpr Duration min(Duration a, Duration b) { return b < a ? b : a; }

}  // namespace sp
