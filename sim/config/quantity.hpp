// Parsing of quantities written with their unit ("450 GB/s", "2 us", "989 TFLOP/s", "80 GiB").
// Decimal (k M G T P E) and binary (Ki Mi Gi Ti Pi Ei) prefixes are both explicit; B is a byte and
// b a bit. A number without a unit, or with a unit of the wrong kind, is an error whose message
// shows an example of what is expected.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp::config {

enum class Dimension { bytes, bandwidth, time, flops, flop_rate, power };

/// Human name and example of a dimension, used in messages: {"a bandwidth", "\"450 GB/s\""}.
std::string_view dimension_name(Dimension d);
std::string_view dimension_example(Dimension d);

/// Raised by the parsers below; config wraps it with file, line and key.
class QuantityError : public std::invalid_argument {
 public:
  QuantityError(std::string message, std::string hint)
      : std::invalid_argument(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

/// The value in the SI base unit of `expected` (B, B/s, s, FLOP, FLOP/s, W).
double parse_quantity(std::string_view text, Dimension expected);

/// A plain number, the whole of `text`, or nullopt: empty, trailing characters, or beyond the
/// range of a double (inf, nan, an overflow). An underflow (1e-310) is the tiny number it is, for
/// the caller's range check to judge.
std::optional<double> parse_plain_number(const std::string& text);
/// A whole decimal number that fits 64 bits, nothing before or after it; nullopt otherwise.
std::optional<std::int64_t> parse_plain_integer(const std::string& text);

Bytes parse_bytes(std::string_view text);
BytesPerSecond parse_bandwidth(std::string_view text);
Duration parse_duration(std::string_view text);
Flops parse_flops(std::string_view text);
FlopsPerSecond parse_flop_rate(std::string_view text);
Watts parse_power(std::string_view text);

}  // namespace sp::config
