#include "sim/output/table.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace sp::output {

const Column& Table::column(const std::string& name) const {
  for (const auto& c : columns) {
    if (c.name == name) return c;
  }
  throw std::out_of_range("no column named " + name);
}

std::string format_value(const Column& c, double v) {
  if (c.integer) return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{}", v);
}

std::string to_csv(const Table& t) {
  std::string out;
  for (std::size_t j = 0; j < t.columns.size(); ++j) out += (j ? "," : "") + t.columns[j].name;
  out += '\n';
  for (std::size_t i = 0; i < t.rows(); ++i) {
    for (std::size_t j = 0; j < t.columns.size(); ++j) {
      out += (j ? "," : "") + format_value(t.columns[j], t.columns[j].values[i]);
    }
    out += '\n';
  }
  return out;
}

}  // namespace sp::output
