#include "sim/config/quantity.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace sp::config {

namespace {

struct Unit {
  std::string_view symbol;
  Dimension dim;
  double factor;  // to the SI base unit of dim
  bool takes_prefix;
};

// Bits are converted to bytes here (factor 1/8), so "400 Gb/s" is 50e9 B/s.
constexpr std::array<Unit, 20> kUnits = {{
    {"B", Dimension::bytes, 1.0, true},
    {"b", Dimension::bytes, 0.125, true},
    {"bit", Dimension::bytes, 0.125, true},
    {"B/s", Dimension::bandwidth, 1.0, true},
    {"b/s", Dimension::bandwidth, 0.125, true},
    {"bit/s", Dimension::bandwidth, 0.125, true},
    {"bps", Dimension::bandwidth, 0.125, true},
    {"FLOP", Dimension::flops, 1.0, true},
    {"FLOP/s", Dimension::flop_rate, 1.0, true},
    {"FLOPS", Dimension::flop_rate, 1.0, true},
    {"W", Dimension::power, 1.0, true},
    {"ps", Dimension::time, 1e-12, false},
    {"ns", Dimension::time, 1e-9, false},
    {"us", Dimension::time, 1e-6, false},
    {"\xC2\xB5s", Dimension::time, 1e-6, false},  // µs
    {"ms", Dimension::time, 1e-3, false},
    {"s", Dimension::time, 1.0, false},
    {"min", Dimension::time, 60.0, false},
    {"h", Dimension::time, 3600.0, false},
    {"d", Dimension::time, 86400.0, false},  // day: failure rates and whole runs
}};

struct Prefix {
  std::string_view symbol;
  double factor;
  bool binary;
};

// Binary prefixes first so that "Gi" is not read as "G" followed by a unit "iB".
constexpr std::array<Prefix, 12> kPrefixes = {{
    {"Ki", 1024.0, true},
    {"Mi", 1048576.0, true},
    {"Gi", 1073741824.0, true},
    {"Ti", 1099511627776.0, true},
    {"Pi", 1125899906842624.0, true},
    {"Ei", 1152921504606846976.0, true},
    {"k", 1e3, false},
    {"M", 1e6, false},
    {"G", 1e9, false},
    {"T", 1e12, false},
    {"P", 1e15, false},
    {"E", 1e18, false},
}};

struct Resolved {
  Dimension dim;
  double factor;
};

std::optional<Resolved> resolve_unit(std::string_view u) {
  for (const Unit& unit : kUnits) {
    if (u == unit.symbol) return Resolved{unit.dim, unit.factor};
  }
  for (const Prefix& p : kPrefixes) {
    if (u.size() <= p.symbol.size() || u.substr(0, p.symbol.size()) != p.symbol) continue;
    const std::string_view rest = u.substr(p.symbol.size());
    for (const Unit& unit : kUnits) {
      if (!unit.takes_prefix || rest != unit.symbol) continue;
      // Binary prefixes only make sense for data sizes and rates.
      const bool data = unit.dim == Dimension::bytes || unit.dim == Dimension::bandwidth;
      if (p.binary && !data) return std::nullopt;
      return Resolved{unit.dim, p.factor * unit.factor};
    }
  }
  return std::nullopt;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "a size in bytes";
    case Dimension::bandwidth: return "a bandwidth";
    case Dimension::time: return "a time";
    case Dimension::flops: return "an amount of floating-point work";
    case Dimension::flop_rate: return "a compute rate";
    case Dimension::power: return "a power";
  }
  return "a quantity";
}

std::string_view dimension_example(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "\"80 GiB\"";
    case Dimension::bandwidth: return "\"450 GB/s\" or \"400 Gb/s\"";
    case Dimension::time: return "\"2 us\"";
    case Dimension::flops: return "\"1.5 TFLOP\"";
    case Dimension::flop_rate: return "\"989 TFLOP/s\"";
    case Dimension::power: return "\"700 W\"";
  }
  return "";
}

double parse_quantity(std::string_view text, Dimension expected) {
  const std::string_view s = trim(text);
  const std::string expect = std::string(dimension_name(expected)) + " such as " +
                             std::string(dimension_example(expected));
  // strtod needs a terminated buffer; it also rejects hex floats and "inf" below.
  const std::string buf(s);
  const char* begin = buf.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  const bool starts_numeric = !buf.empty() && (std::isdigit(static_cast<unsigned char>(buf[0])) ||
                                               buf[0] == '.' || buf[0] == '-' || buf[0] == '+');
  if (end == begin || !starts_numeric || !std::isfinite(number) ||
      buf.find_first_of("xX") < static_cast<std::size_t>(end - begin)) {
    throw QuantityError(quoted(s) + " is not a number with a unit", "expected " + expect);
  }
  const std::string_view unit = trim(std::string_view(end));
  if (unit.empty()) {
    throw QuantityError(quoted(s) + " has no unit", "expected " + expect);
  }
  const std::optional<Resolved> r = resolve_unit(unit);
  if (!r) {
    throw QuantityError("unknown unit " + quoted(unit) + " in " + quoted(s),
                        "expected " + expect +
                            "; prefixes are k M G T P (decimal) or Ki Mi Gi Ti Pi (binary), "
                            "B is a byte and b a bit");
  }
  if (r->dim != expected) {
    throw QuantityError(quoted(s) + " is " + std::string(dimension_name(r->dim)),
                        "expected " + expect);
  }
  const double value = number * r->factor;
  // "1e300 PFLOP" is a finite number times a unit past a double: said here, not as "inf" later.
  if (!std::isfinite(value)) throw QuantityError(quoted(s) + " is beyond the range of a number", "expected " + expect);
  return value;
}

Bytes parse_bytes(std::string_view t) { return Bytes(parse_quantity(t, Dimension::bytes)); }
BytesPerSecond parse_bandwidth(std::string_view t) {
  return BytesPerSecond(parse_quantity(t, Dimension::bandwidth));
}
Duration parse_duration(std::string_view t) { return seconds(parse_quantity(t, Dimension::time)); }
Flops parse_flops(std::string_view t) { return Flops(parse_quantity(t, Dimension::flops)); }
FlopsPerSecond parse_flop_rate(std::string_view t) {
  return FlopsPerSecond(parse_quantity(t, Dimension::flop_rate));
}
Watts parse_power(std::string_view t) { return Watts(parse_quantity(t, Dimension::power)); }

std::optional<double> parse_plain_number(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // ERANGE on underflow leaves a tiny number; on overflow, HUGE_VAL.
  if (text.empty() || *end != '\0' || (errno == ERANGE && std::fabs(v) > 1) || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_plain_integer(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

}  // namespace sp::config
