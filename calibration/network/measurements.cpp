#include "calibration/network/measurements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string_view>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {
namespace {

constexpr std::string_view kBenchHeader = "scope,op,ranks,nodes,bytes,";
constexpr const char* kOps = "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, ping_pong";

[[noreturn]] void fail(const std::string& file, int line, const std::string& message,
                       const std::string& hint = {}) {
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
bool is_int(std::string_view s) { return is_uint(!s.empty() && s[0] == '-' ? s.substr(1) : s); }
bool is_word(std::string_view s) { return !s.empty() && std::isalpha(static_cast<unsigned char>(s[0])); }

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

// Defaults come from the command line; errors name the option, as --set errors do.
void check_defaults(const MeasurementDefaults& d) {
  if (d.op && !known_op(*d.op))
    fail("--op", 0, "unknown operation \"" + *d.op + "\"", std::string("one of ") + kOps);
  if (d.ranks && *d.ranks < 2) fail("--ranks", 0, "needs at least 2 ranks");
  if (d.nodes && *d.nodes < 1) fail("--nodes", 0, "needs at least 1 node");
  if (d.scope && *d.scope != "intra" && *d.scope != "inter") fail("--scope", 0, "must be intra or inter");
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

std::vector<Measurement> parse_nccl_text(const std::string& text, const std::string& name,
                                         const MeasurementDefaults& d) {
  std::vector<Measurement> out;
  std::optional<bool> header_root;  // from the column header: does the table have a root column?
  std::set<int> rank_ids;
  int highest_line = 0;  // the line of the highest rank
  std::set<std::string> hosts;
  std::optional<std::string> program_op;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i) + 1;
    if (const auto body = comment(lines[i])) {
      const std::vector<std::string> t = split_ws(*body);
      if (std::find(t.begin(), t.end(), "redop") != t.end()) {
        header_root = std::find(t.begin(), t.end(), "root") != t.end();
      } else if (t.size() >= 2 && t[0] == "Rank" && is_uint(t[1])) {
        if (t[1].size() >= 7) fail(name, ln, "rank " + t[1] + " is beyond any measured job (at most 999999)");
        const int id = std::stoi(t[1]);
        rank_ids.insert(id);
        if (id == *rank_ids.rbegin()) highest_line = ln;
        const auto on = std::find(t.begin(), t.end(), "on");
        if (on != t.end() && on + 1 != t.end()) hosts.insert(*(on + 1));
      } else if (const auto at = body->find("Collective test starting:"); at != std::string::npos) {
        program_op = op_in_name(body->substr(at));
      }
      continue;
    }
    const std::vector<std::string> f = data_fields(lines[i]);
    // size, count, type, redop: anything else (NCCL INFO chatter, warnings) is not a row.
    if (f.size() < 4 || !is_uint(f[1]) || !is_word(f[2]) || !is_word(f[3])) continue;
    // Without a header: a root is an integer in field 5, but so is a large time that lost its
    // decimals; only the old 12-field rows lack the root.
    const bool root = header_root ? *header_root : f.size() > 4 && is_int(f[4]) && f.size() != 12;
    const std::size_t at = root ? 5 : 4;
    if (f.size() < at + 4) {
      fail(name, ln, fmt::format("nccl-tests row has {} fields, expected at least {}", f.size(), at + 4));
    }
    const auto bytes = number(f[0]), time = number(f[at]);
    if (!time || !(*time > 0))
      fail(name, ln, "out-of-place time \"" + f[at] + "\" is not a positive number of us");
    if (!bytes) fail(name, ln, "size \"" + f[0] + "\" is out of range");
    out.push_back(row(name, ln, "nccl-tests", *bytes, *time));
  }
  if (out.empty()) fail(name, 0, "no measurements (no nccl-tests data rows)");
  const std::string op = resolve_op(d, program_op, name);
  int ranks = 0, nodes = d.nodes.value_or(0);
  if (!rank_ids.empty()) {
    // nccl-tests prints a line for every rank, 0 to n - 1: a gap is a line missing or mistyped,
    // and the rank count would follow the stray number.
    if (static_cast<int>(rank_ids.size()) != *rank_ids.rbegin() + 1) {
      fail(name, highest_line,
           fmt::format("rank {} but only {} rank lines: nccl-tests prints one for each of ranks 0 to n - 1",
                       *rank_ids.rbegin(), rank_ids.size()));
    }
    ranks = static_cast<int>(rank_ids.size());
    nodes = static_cast<int>(hosts.size());
  } else if (d.ranks) {
    ranks = *d.ranks;
  } else {
    fail(name, 0, "no \"#  Rank N ... on HOST\" lines, so the rank count is unknown", "pass --ranks");
  }
  fill(out, d, op, ranks, nodes);
  return out;
}

std::optional<config::ConfigNode> find_list(const config::ConfigNode& n, const char* key, int depth = 0) {
  if (n.is_sequence()) {
    const auto e = n.elements();
    if (!e.empty() && e[0].is_map() && e[0].has(key)) return n;
  } else if (n.is_map() && depth < 3) {
    for (const auto& [k, v] : n.entries()) {
      if (auto found = find_list(v, key, depth + 1)) return found;
    }
  }
  return std::nullopt;
}

std::vector<Measurement> parse_nccl_json(const std::string& text, const std::string& name,
                                         const MeasurementDefaults& d) {
  const config::ConfigNode doc = config::load_string(text, name);
  const auto records = find_list(doc, "size");
  if (!records) fail(name, 0, "no measurements (no list of records with \"size\")");
  std::vector<Measurement> out;
  for (const config::ConfigNode& r : records->elements()) {
    if (!r.is_map()) r.fail("expected a record with size and out_of_place");
    const double bytes = r.at("size").as_number();
    if (bytes < 0) r.at("size").fail("must not be negative");
    auto place = r.find("out_of_place");
    if (!place || place->is_null()) place = r.find("in_place");  // trace replay times in-place only
    if (!place || place->is_null()) r.fail("has neither out_of_place nor in_place timings");
    auto time = place->find("time");
    if (!time || time->is_null()) time = place->find("cpu_time");
    if (!time || time->is_null()) place->fail("needs time or cpu_time");
    const double us = time->as_number();
    if (!(us > 0)) time->fail("must be a positive time in us");
    out.push_back(row(name, r.location().line, "nccl-tests-json", bytes, us));
  }
  if (out.empty()) fail(name, 0, "no measurements (the list of records is empty)");

  // -J records the program (args[0]) and one device entry per process, each process driving
  // nthreads x ngpus ranks.
  std::optional<std::string> program_op;
  if (doc.is_map()) {
    if (auto args = doc.find("args"); args && args->is_sequence() && !args->elements().empty()) {
      program_op = op_in_name(args->elements()[0].as_string());
    }
  }
  const std::string op = resolve_op(d, program_op, name);
  int ranks = d.ranks.value_or(0), nodes = d.nodes.value_or(0);
  if (const auto devices = find_list(doc, "hostname")) {
    const auto config = doc.find("config");
    std::int64_t n = static_cast<std::int64_t>(devices->elements().size());
    for (const char* key : {"nthreads", "ngpus"}) {
      const auto v = config && config->is_map() ? config->find(key) : std::nullopt;
      if (v && !v->is_null()) n *= std::min<std::int64_t>(v->as_positive_int(), 1 << 16);
    }
    std::set<std::string> hosts;
    for (const auto& dev : devices->elements()) hosts.insert(dev.at("hostname").as_string());
    ranks = static_cast<int>(std::min<std::int64_t>(n, 1 << 30));
    nodes = static_cast<int>(hosts.size());
  }
  if (ranks == 0) fail(name, 0, "the JSON names no devices, so the rank count is unknown", "pass --ranks");
  fill(out, d, op, ranks, nodes);
  return out;
}

// OMB's test name ("Allreduce", "" for osu_latency / osu_bw) to our operation; "" unsupported.
std::string osu_op(const std::string& test, bool timed) {
  if (test == "allreduce") return "all_reduce";
  if (test == "allgather") return "all_gather";
  if (test == "reduce_scatter") return "reduce_scatter";
  if (test == "bcast" || test == "broadcast") return "broadcast";
  if (test == "alltoall") return "all_to_all";
  return test.empty() && timed ? "ping_pong" : "";
}

std::vector<Measurement> parse_osu(const std::string& text, const std::string& name,
                                   const MeasurementDefaults& d) {
  std::vector<Measurement> out;
  std::string op;          // of the current "# OSU ..." section; a file may hold several runs
  bool bandwidth = false;  // osu_bw: MB/s instead of us
  int header_line = 0;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int ln = static_cast<int>(i) + 1;
    if (const auto body = comment(lines[i])) {
      const std::vector<std::string> t = split_ws(*body);
      if (t.size() >= 3 && t[0] == "OSU") {
        // "OSU <library> [<name>] Latency|Bandwidth Test vX.Y"
        std::string test;
        std::size_t k = 2;
        for (; k < t.size() && t[k] != "Latency" && t[k] != "Bandwidth" && t[k] != "Test"; ++k) test += t[k];
        bandwidth = k < t.size() && t[k] == "Bandwidth";
        op = osu_op(lower(test), k < t.size() && t[k] != "Test");
        if (op.empty()) {
          fail(name, ln, "OSU test \"" + body->substr(body->find("OSU")) + "\" is not supported",
               "osu_allreduce, osu_allgather, osu_reduce_scatter, osu_bcast, osu_alltoall, osu_latency, "
               "osu_bw");
        }
        header_line = ln;
      } else if (body->find("MB/s") != std::string::npos) {
        bandwidth = true;
      }
      continue;
    }
    const std::vector<std::string> f = data_fields(lines[i]);
    if (op.empty() || f.size() < 2) continue;
    if (!std::all_of(f.begin(), f.end(), [](const std::string& s) { return number(s).has_value(); })) {
      // A size followed by numbers written as numbers, one of them nan, inf or out of a double's
      // range: a data row whose measurement failed, which is not to be passed over as chatter.
      const auto written = [](const std::string& s) {
        char* end = nullptr;
        std::strtod(s.c_str(), &end);
        return !s.empty() && *end == '\0';
      };
      if (is_uint(f[0]) && std::all_of(f.begin() + 1, f.end(), written)) {
        fail(name, ln, "OSU data row of " + f[0] + " B: \"" + f[1] + "\" is not a finite " +
                           (bandwidth ? "bandwidth" : "latency"));
      }
      continue;  // warnings, rank chatter
    }
    const double bytes = *number(f[0]), value = *number(f[1]);
    if (!(value > 0))
      fail(name, ln, "OSU " + std::string(bandwidth ? "bandwidth" : "latency") + " must be positive");
    // MB/s with MB = 1e6 B, so bytes / (MB/s) is already in us.
    out.push_back(row(name, ln, "osu", bytes, bandwidth ? bytes / value : value));
    out.back().op = op;
  }
  if (out.empty()) fail(name, 0, "no measurements (no OSU data rows)");
  const bool pt2pt =
      std::all_of(out.begin(), out.end(), [](const Measurement& m) { return m.op == "ping_pong"; });
  if (!d.ranks && !pt2pt) {
    fail(name, header_line, "OSU output does not say how many ranks ran the collective", "pass --ranks");
  }
  for (Measurement& m : out) {
    m.ranks = m.op == "ping_pong" ? 2 : *d.ranks;  // osu_latency and osu_bw run on exactly 2
    m.nodes = d.nodes.value_or(0);
    m.scope = scope_of(d, m.ranks, m.nodes);
  }
  return out;
}

std::vector<Measurement> parse_bench(const std::string& text, const std::string& name) {
  // Blank the '#' lines rather than drop them, so that CsvTable's line numbers are the file's.
  std::string csv;
  for (const std::string& line : lines_of(text)) {
    const std::size_t first = line.find_first_not_of(" \t");
    csv += (first != std::string::npos && line[first] == '#' ? std::string() : line) + "\n";
  }
  const config::CsvTable t(csv, name);
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto need = [&](const char* column, double min) {
      const auto v = t.number(i, column);
      if (!v || *v < min) t.fail(i, column, fmt::format("needs a number of at least {}", min));
      return *v;
    };
    Measurement m = row(name, t.line(i), "scalepoint-bench", need("bytes", 0), need("time_median_us", 0));
    if (!(m.time_us > 0)) t.fail(i, "time_median_us", "must be positive");
    m.op = t.cell(i, "op");
    if (!known_op(m.op)) t.fail(i, "op", "unknown operation \"" + m.op + "\"");
    m.scope = t.cell(i, "scope");
    if (m.scope != "intra" && m.scope != "inter") t.fail(i, "scope", "must be intra or inter");
    const auto count = [&](const char* column, std::int64_t min) {
      const auto v = t.integer(i, column);
      if (!v || *v < min || *v > (1 << 30))
        t.fail(i, column, fmt::format("needs a count from {} to 2^30", min));
      return static_cast<int>(*v);
    };
    m.ranks = count("ranks", 2);
    m.nodes = count("nodes", 1);
    out.push_back(m);
  }
  if (out.empty()) fail(name, 0, "no measurements (no scalepoint-bench rows)");
  return out;
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

std::vector<Measurement> parse_measurements(const std::string& given, const std::string& name,
                                            const MeasurementDefaults& defaults) {
  check_defaults(defaults);
  // A byte-order mark (a file saved by a spreadsheet) hid the header, and the file was taken for
  // another format with no rows.
  const std::string text = given.rfind("\xEF\xBB\xBF", 0) == 0 ? given.substr(3) : given;
  const std::vector<std::string> lines = lines_of(text);
  bool osu = false;
  for (const std::string& line : lines) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, kBenchHeader.size(), kBenchHeader) == 0) {
      return parse_bench(text, name);
    }
    if (const auto body = comment(line); body && !osu) {
      const std::vector<std::string> t = split_ws(*body);
      osu = !t.empty() && t[0] == "OSU";
    }
  }
  if (looks_like_json(text)) return parse_nccl_json(text, name, defaults);
  if (osu) return parse_osu(text, name, defaults);
  return parse_nccl_text(text, name, defaults);
}

std::vector<Measurement> read_measurements(const std::string& file, const MeasurementDefaults& defaults) {
  return parse_measurements(config::read_text_file(file), file, defaults);
}

}  // namespace sp::calibration
