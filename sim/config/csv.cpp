#include "sim/config/csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "sim/config/loader.hpp"
#include "sim/config/quantity.hpp"
#include "sim/core/error.hpp"

namespace sp::config {

CsvTable::CsvTable(const std::string& input, std::string file) : file_(std::move(file)) {
  // Spreadsheets save UTF-8 CSV with a byte-order mark, which is not part of the first column's name.
  const std::string_view bom = "\xEF\xBB\xBF";
  const std::string_view text =
      std::string_view(input).substr(std::string_view(input).starts_with(bom) ? bom.size() : 0);
  // A NUL is no text: a name read up to it would be another name than the file holds.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw InputError(location_in(text, nul, file_), "", "holds a NUL byte; a CSV file is text");
  }
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool field_started = false;
  int line = 1;
  int row_line = 1;
  const auto end_row = [&] {
    row.push_back(field);
    field.clear();
    field_started = false;
    const bool blank = row.size() == 1 && row[0].empty();
    if (!blank) {
      if (header_.empty()) {
        // A column named twice would be read from its first place only.
        std::set<std::string> seen;
        for (const std::string& name : row) {
          if (!name.empty() && !seen.insert(name).second) {
            throw InputError(SourceLocation{file_, row_line, 0}, name, "column appears twice in the header");
          }
        }
        header_ = row;
      } else {
        if (row.size() != header_.size()) {
          throw InputError(SourceLocation{file_, row_line, 0}, "",
                           "has " + std::to_string(row.size()) + " fields, the header has " +
                               std::to_string(header_.size()));
        }
        rows_.push_back(row);
        lines_.push_back(row_line);
      }
    }
    row.clear();
    row_line = line;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      ++line;
      end_row();
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  if (quoted) throw InputError(SourceLocation{file_, row_line, 0}, "", "unterminated quoted field");
  if (!row.empty() || !field.empty()) end_row();
  if (header_.empty()) throw InputError(SourceLocation{file_, 1, 0}, "", "empty CSV file, expected a header row");
}

CsvTable CsvTable::read(const std::string& file) { return CsvTable(read_text_file(file), file); }

CsvTable CsvTable::read_rows(const std::string& file) {
  CsvTable t = read(file);
  if (t.rows() == 0) {
    throw InputError(SourceLocation{file, 1, 0}, "", "has a header but no data rows: nothing to read",
                     "add at least one row under the header");
  }
  return t;
}

bool CsvTable::has_column(const std::string& name) const {
  for (const auto& h : header_) {
    if (h == name) return true;
  }
  return false;
}

std::size_t CsvTable::index(const std::string& column) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) return i;
  }
  throw InputError(SourceLocation{file_, 1, 0}, column, "missing column");
}

const std::string& CsvTable::cell(std::size_t row, const std::string& column) const {
  return rows_.at(row)[index(column)];
}

void CsvTable::fail(std::size_t row, const std::string& column, const std::string& message) const {
  throw InputError(SourceLocation{file_, lines_.at(row), 0}, column, message);
}

std::optional<double> CsvTable::number(std::size_t row, const std::string& column) const {
  const std::string& s = cell(row, column);
  if (s.empty()) return std::nullopt;
  const std::optional<double> v = parse_plain_number(s);
  if (!v) fail(row, column, "\"" + s + "\" is not a number");
  return v;
}

std::optional<std::int64_t> CsvTable::integer(std::size_t row, const std::string& column) const {
  const std::string& s = cell(row, column);
  if (s.empty()) return std::nullopt;
  const std::optional<std::int64_t> v = parse_plain_integer(s);
  if (!v) fail(row, column, "\"" + s + "\" is not an integer");
  return v;
}

}  // namespace sp::config
