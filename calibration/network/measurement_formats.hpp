// What the measurement formats share, for the files that read them: measurements.cpp (the text
// helpers and the dispatch), nccl_tests_formats.cpp and mpi_benchmark_formats.cpp. Every format
// reads lines, fields and numbers the same way and makes its rows through row(), so that a row
// is held to the same sizes and times whichever tool printed it. Internal to calibration/network.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/network/measurements.hpp"

namespace sp::calibration::detail {

// An InputError at the file and line (0: the file as a whole), with what to do about it.
[[noreturn]] void fail(const std::string& file, int line, const std::string& message,
                       const std::string& hint = {});

// Lines, fields and numbers, read alike by every text format (the rules: measurements.cpp).
std::vector<std::string> lines_of(const std::string& text);
std::vector<std::string> split_ws(const std::string& s);
bool is_uint(std::string_view s);
std::optional<double> number(const std::string& s);
std::string lower(std::string s);
std::optional<std::string> comment(const std::string& line);
std::vector<std::string> data_fields(const std::string& line);

// What a file may leave unsaid: the collective, and the scope its rank and node counts imply.
bool known_op(const std::string& op);
std::optional<std::string> op_in_name(const std::string& name);
std::string resolve_op(const MeasurementDefaults& d, const std::optional<std::string>& from_content,
                       const std::string& name);
std::string scope_of(const MeasurementDefaults& d, int ranks, int nodes);

// Every format's rows are made here, so that each is checked alike, then given what the file says
// of all of them.
Measurement row(const std::string& name, int line, const char* format, double bytes, double time_us);
void fill(std::vector<Measurement>& rows, const MeasurementDefaults& d, const std::string& op, int ranks,
          int nodes);

// The formats, which measurements.cpp tells apart (nccl_tests_formats.cpp, mpi_benchmark_formats.cpp).
std::vector<Measurement> parse_nccl_text(const std::string& text, const std::string& name,
                                         const MeasurementDefaults& d);
std::vector<Measurement> parse_nccl_json(const std::string& text, const std::string& name,
                                         const MeasurementDefaults& d);
std::vector<Measurement> parse_osu(const std::string& text, const std::string& name,
                                   const MeasurementDefaults& d);
std::vector<Measurement> parse_bench(const std::string& text, const std::string& name);

}  // namespace sp::calibration::detail
