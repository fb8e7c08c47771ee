// The two forms nccl-tests writes its timings in: the text table every version prints (with or
// without a root column, under launcher prefixes, amid NCCL's own chatter) and the JSON of -J.
// Neither names everything measurements.hpp needs, so each reads what else it can from the
// file (the ranks, their hosts, the program) before falling back on the caller's defaults.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/network/measurement_formats.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/loader.hpp"

namespace sp::calibration::detail {
namespace {

bool is_int(std::string_view s) { return is_uint(!s.empty() && s[0] == '-' ? s.substr(1) : s); }
bool is_word(std::string_view s) { return !s.empty() && std::isalpha(static_cast<unsigned char>(s[0])); }

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace sp::calibration::detail
