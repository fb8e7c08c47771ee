// The formats of the two MPI benchmarks whose timings `calibrate network` reads besides
// nccl-tests: OSU micro-benchmarks' text tables (one section per test, latencies in us or
// bandwidths in MB/s) and scalepoint-bench's CSV, which says everything about each row itself.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "calibration/network/measurement_formats.hpp"
#include "sim/config/csv.hpp"

namespace sp::calibration::detail {
namespace {

// OMB's test name ("Allreduce", "" for osu_latency / osu_bw) to our operation; "" unsupported.
std::string osu_op(const std::string& test, bool timed) {
  if (test == "allreduce") return "all_reduce";
  if (test == "allgather") return "all_gather";
  if (test == "reduce_scatter") return "reduce_scatter";
  if (test == "bcast" || test == "broadcast") return "broadcast";
  if (test == "alltoall") return "all_to_all";
  return test.empty() && timed ? "ping_pong" : "";
}

}  // namespace

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
        const auto bad = std::find_if(f.begin() + 1, f.end(), [](const std::string& s) { return !number(s); });
        const std::string what = bad == f.begin() + 1 ? (bandwidth ? "bandwidth" : "latency") : "value";
        fail(name, ln, "OSU data row of " + f[0] + " B: \"" + *bad + "\" is not a finite " + what);
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

}  // namespace sp::calibration::detail
