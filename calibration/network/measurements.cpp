// Reading network timings: the dispatch that tells the formats apart by their content, and the
// text helpers the formats share (measurement_formats.hpp). The formats themselves are in
// nccl_tests_formats.cpp (nccl-tests text and JSON) and mpi_benchmark_formats.cpp (OSU
// micro-benchmarks and scalepoint-bench CSV), each of which reads with what is here.
#include "calibration/network/measurements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/network/measurement_formats.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration::detail {
namespace {

constexpr std::string_view kBenchHeader = "scope,op,ranks,nodes,bytes,";
constexpr const char* kOps = "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, ping_pong";

}  // namespace

[[noreturn]] void fail(const std::string& file, int line, const std::string& message,
                       const std::string& hint) {
  throw InputError(SourceLocation{file, line, 0}, "", message, hint);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string field; in >> field;) out.push_back(std::move(field));
  return out;
}

bool is_uint(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The text after '#' on a comment line; launchers may put a label before the '#'.
std::optional<std::string> comment(const std::string& line) {
  const std::size_t hash = line.find('#');
  if (hash == std::string::npos) return std::nullopt;
  return line.substr(hash + 1);
}

// The fields of a possible data row, launcher label dropped: everything before the first plain
// integer goes, and "[1,0]<stdout>:4" (no space after Open MPI's tag) counts as "4".
std::vector<std::string> data_fields(const std::string& line) {
  std::vector<std::string> f = split_ws(line);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::size_t colon = f[i].rfind(':');
    std::string tail = colon == std::string::npos ? f[i] : f[i].substr(colon + 1);
    if (!is_uint(tail)) continue;
    f.erase(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(i));
    f[0] = std::move(tail);
    return f;
  }
  return {};
}

bool known_op(const std::string& op) {
  return op == "all_reduce" || op == "all_gather" || op == "reduce_scatter" || op == "broadcast" ||
         op == "all_to_all" || op == "ping_pong";
}

// The collective named in a program or file name ("all_reduce_perf", "alltoall_perf.log").
std::optional<std::string> op_in_name(const std::string& name) {
  static const std::pair<const char*, const char*> names[] = {
      {"all_reduce", "all_reduce"}, {"allreduce", "all_reduce"},          {"all_gather", "all_gather"},
      {"allgather", "all_gather"},  {"reduce_scatter", "reduce_scatter"}, {"broadcast", "broadcast"},
      {"alltoall", "all_to_all"},   {"all_to_all", "all_to_all"}};
  const std::string s = lower(name);
  for (const auto& [key, op] : names) {
    if (s.find(key) != std::string::npos) return std::string(op);
  }
  return std::nullopt;
}

// What the file does not say: the caller's --op first, then the program name the file records,
// then the file's own name.
std::string resolve_op(const MeasurementDefaults& d, const std::optional<std::string>& from_content,
                       const std::string& name) {
  if (d.op) return *d.op;
  if (from_content) return *from_content;
  if (auto op = op_in_name(std::filesystem::path(name).filename().string())) return *op;
  fail(name, 0, "cannot tell which collective was measured (nccl-tests does not print it)",
       std::string("pass --op: ") + kOps);
}

// One node: ranks share it. One rank per node: the network alone. Anything else mixes both.
std::string scope_of(const MeasurementDefaults& d, int ranks, int nodes) {
  if (d.scope) return *d.scope;
  if (nodes == 1) return "intra";
  if (nodes > 1 && nodes == ranks) return "inter";
  return "";
}

Measurement row(const std::string& name, int line, const char* format, double bytes, double time_us) {
  // Every format's rows pass here: whole sizes up to 1 TiB (as `collective --bytes`), times that
  // are positive and below a day (a larger one is a unit slip and leaves the simulated range).
  if (!(bytes >= 0 && bytes <= 0x1p40) || bytes != std::floor(bytes)) {
    fail(name, line, fmt::format("size {} B is not a whole number of bytes up to 1 TiB", bytes));
  }
  if (!(time_us > 0 && time_us < 86400e6)) fail(name, line, fmt::format("time {} us is not positive and below a day", time_us));
  Measurement m;
  m.source = name;
  m.line = line;
  m.format = format;
  m.bytes = bytes;
  m.time_us = time_us;
  return m;
}

void fill(std::vector<Measurement>& rows, const MeasurementDefaults& d, const std::string& op, int ranks,
          int nodes) {
  for (Measurement& m : rows) {
    m.op = op;
    m.ranks = ranks;
    m.nodes = nodes;
    m.scope = scope_of(d, ranks, nodes);
  }
}

namespace {

// Defaults come from the command line; errors name the option, as --set errors do.
void check_defaults(const MeasurementDefaults& d) {
  if (d.op && !known_op(*d.op))
    fail("--op", 0, "unknown operation \"" + *d.op + "\"", std::string("one of ") + kOps);
  if (d.ranks && *d.ranks < 2) fail("--ranks", 0, "needs at least 2 ranks");
  if (d.nodes && *d.nodes < 1) fail("--nodes", 0, "needs at least 1 node");
  if (d.scope && *d.scope != "intra" && *d.scope != "inter") fail("--scope", 0, "must be intra or inter");
}

// A JSON document opens with '{', or '[' then '{' or ']'; Open MPI's "[1,0]<stdout>:" tag and
// UCX's "[1712345678.123456]" open with '[' too.
bool looks_like_json(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{') return first != std::string::npos;
  const std::size_t next = text.find_first_not_of(" \t\r\n", first + 1);
  return text[first] == '[' && next != std::string::npos && (text[next] == '{' || text[next] == ']');
}

}  // namespace
}  // namespace sp::calibration::detail

namespace sp::calibration {

std::vector<Measurement> parse_measurements(const std::string& given, const std::string& name,
                                            const MeasurementDefaults& defaults) {
  detail::check_defaults(defaults);
  // A byte-order mark (a file saved by a spreadsheet) hid the header, and the file was taken for
  // another format with no rows.
  const std::string text = given.rfind("\xEF\xBB\xBF", 0) == 0 ? given.substr(3) : given;
  const std::vector<std::string> lines = detail::lines_of(text);
  bool osu = false;
  for (const std::string& line : lines) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, detail::kBenchHeader.size(), detail::kBenchHeader) == 0) {
      return detail::parse_bench(text, name);
    }
    if (const auto body = detail::comment(line); body && !osu) {
      const std::vector<std::string> t = detail::split_ws(*body);
      osu = !t.empty() && t[0] == "OSU";
    }
  }
  if (detail::looks_like_json(text)) return detail::parse_nccl_json(text, name, defaults);
  if (osu) return detail::parse_osu(text, name, defaults);
  return detail::parse_nccl_text(text, name, defaults);
}

std::vector<Measurement> read_measurements(const std::string& file, const MeasurementDefaults& defaults) {
  return parse_measurements(config::read_text_file(file), file, defaults);
}

}  // namespace sp::calibration
