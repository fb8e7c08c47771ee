// A results table: named columns with a unit, written as CSV, HDF5 datasets and a console table.
// Column names carry the unit suffix (step_time_s); `unit` repeats it for HDF5 attributes.
#pragma once

#include <string>
#include <vector>

namespace sp::output {

struct Column {
  std::string name;         // e.g. "step_time_s"
  std::string unit;         // e.g. "s"; "1" for dimensionless, "count" for counts, "" for text
  std::string description;  // one line, stored as an HDF5 attribute
  bool integer = false;     // written as int64
  std::vector<double> values;
  std::vector<std::string> text;  // a text column when non-empty (values stay empty)

  bool is_text() const { return !text.empty(); }
  std::size_t size() const { return is_text() ? text.size() : values.size(); }
};

struct Table {
  std::vector<Column> columns;

  std::size_t rows() const { return columns.empty() ? 0 : columns.front().size(); }
  const Column& column(const std::string& name) const;
  Column& column(const std::string& name);
};

/// A text column.
Column text_column(std::string name, std::string description, std::vector<std::string> text);
/// An empty numeric column, values to be pushed.
Column number_column(std::string name, std::string unit, std::string description, bool integer = false);

/// Text of row `i` as written to CSV: integers exactly, reals in the shortest form that reads
/// back to the same double (identical on every platform), NaN (no value) as an empty cell, text
/// quoted when it must be.
std::string format_cell(const Column& c, std::size_t i);

/// A text cell, quoted when it must be (commas, quotes, newlines).
std::string csv_field(const std::string& text);

/// CSV text: a header of column names, then one line per row.
std::string to_csv(const Table& t);

}  // namespace sp::output
