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

Column& Table::column(const std::string& name) {
  return const_cast<Column&>(static_cast<const Table&>(*this).column(name));
}

Column number_column(std::string name, std::string unit, std::string description, bool integer) {
  return Column{std::move(name), std::move(unit), std::move(description), integer, {}, {}};
}

Column text_column(std::string name, std::string description, std::vector<std::string> text) {
  Column c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.text = std::move(text);
  return c;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string format_cell(const Column& c, std::size_t i) {
  if (c.is_text()) return csv_field(c.text[i]);
  const double v = c.values[i];
  if (std::isnan(v)) return "";  // no value (a point that did not run, a layout without a runner-up)
  if (c.integer) return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{}", v);
}

std::string to_csv(const Table& t) {
  std::string out;
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    if (j) out += ',';
    out += t.columns[j].name;
  }
  out += '\n';
  for (std::size_t i = 0; i < t.rows(); ++i) {
    for (std::size_t j = 0; j < t.columns.size(); ++j) {
      if (j) out += ',';
      out += format_cell(t.columns[j], i);
    }
    out += '\n';
  }
  return out;
}

}  // namespace sp::output
