// Reading CSV input (calibration data, published measurements, systems to predict): RFC 4180
// quoting, a header row naming the columns, and errors that name the file, line and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sp::config {

class CsvTable {
 public:
  /// Parses `text`; `file` labels messages. The first row is the header.
  CsvTable(const std::string& text, std::string file);
  static CsvTable read(const std::string& file);
  /// An input table: read, and refused when it has a header but no data rows (a tool given
  /// nothing to compare or predict says so instead of writing empty results).
  static CsvTable read_rows(const std::string& file);

  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return rows_.size(); }
  bool has_column(const std::string& name) const;

  /// The cell of `column` in data row `row` (0-based); InputError if the column is missing.
  const std::string& cell(std::size_t row, const std::string& column) const;
  /// Same, parsed; empty cells give nullopt, bad numbers an InputError naming file:line and column.
  std::optional<double> number(std::size_t row, const std::string& column) const;
  std::optional<std::int64_t> integer(std::size_t row, const std::string& column) const;
  /// The 1-based line of data row `row` in the file.
  int line(std::size_t row) const { return lines_[row]; }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(std::size_t row, const std::string& column, const std::string& message) const;

 private:
  std::size_t index(const std::string& column) const;

  std::string file_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

}  // namespace sp::config
