#include "sim/sweep/sweep_spec.hpp"
#include "sim/config/loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/config/quantity.hpp"
#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

namespace {

using Assignment = std::vector<config::Override>;  // one value of one axis

config::Override set(const std::string& key, const config::ConfigNode& value) {
  const std::string yaml = value.dump_flow();
  return config::Override{key, yaml, key + "=" + yaml};
}

std::vector<Assignment> grid(const config::ConfigNode& n) {
  if (!n.is_map() || n.entries().empty()) n.fail("a grid maps key paths to lists of values");
  std::vector<Assignment> out = {{}};
  for (const auto& [key, list] : n.entries()) {
    if (!list.is_sequence() || list.elements().empty()) list.fail("needs a non-empty list of values");
    std::vector<Assignment> next;
    for (const Assignment& a : out) {
      for (const auto& v : list.elements()) {
        Assignment b = a;
        b.push_back(set(key, v));
        next.push_back(std::move(b));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::vector<Assignment> zip(const config::ConfigNode& n) {
  if (!n.is_map() || n.entries().empty()) n.fail("a zip maps key paths to lists of equal length");
  std::size_t length = 0;
  for (const auto& [key, list] : n.entries()) {
    if (!list.is_sequence() || list.elements().empty()) list.fail("needs a non-empty list of values");
    if (length == 0) length = list.elements().size();
    if (list.elements().size() != length) {
      list.fail("has " + std::to_string(list.elements().size()) + " values where the first list has " +
                std::to_string(length));
    }
  }
  std::vector<Assignment> out(length);
  for (const auto& [key, list] : n.entries()) {
    const auto values = list.elements();
    for (std::size_t i = 0; i < length; ++i) out[i].push_back(set(key, values[i]));
  }
  return out;
}

std::vector<Assignment> points(const config::ConfigNode& n) {
  if (!n.is_sequence() || n.elements().empty()) n.fail("points is a non-empty list of {key path: value} maps");
  std::vector<Assignment> out;
  for (const auto& p : n.elements()) {
    if (!p.is_map() || p.entries().empty()) p.fail("each point maps key paths to values");
    Assignment a;
    for (const auto& [key, v] : p.entries()) a.push_back(set(key, v));
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<Assignment> repeat(const config::ConfigNode& n) {
  const auto count = n.as_positive_int();
  std::vector<Assignment> out;
  for (std::int64_t seed = 1; seed <= count; ++seed) {
    out.push_back({config::Override{"seed", std::to_string(seed), "seed=" + std::to_string(seed)}});
  }
  return out;
}

// What makes `path` no scenario file at all (every point would fail alike), or "": missing, a
// directory or a device, empty. A file that is there but wrong fails per point, with its line.
std::string scenario_file_problem(const std::string& path) {
  if (!config::exists_quietly(path)) return "no such scenario: " + path;
  if (!config::regular_file_quietly(path)) return "a scenario that is not a regular file: " + path;
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 || ec) return "an empty scenario: " + path;
  return "";
}

}  // namespace

std::string SweepSpec::value(const SweepPoint& p, const std::string& key) const {
  std::string v;  // the last one: overrides apply in order, later axes win
  for (const auto& o : p.overrides) {
    if (o.path == key) v = o.value;
  }
  return v;
}

std::string unquoted(const std::string& v) {
  return v.size() >= 2 && (v.front() == '"' || v.front() == '\'') ? v.substr(1, v.size() - 2) : v;
}

std::string SweepSpec::base_of(const SweepPoint& p) const {
  for (const auto& o : p.overrides) {
    if (o.path == "base") return (std::filesystem::path(file).parent_path() / unquoted(o.value)).lexically_normal().string();
  }
  return base_file;
}

std::vector<config::Override> SweepSpec::overrides_of(const SweepPoint& p) const {
  std::vector<config::Override> out;
  for (const auto& o : p.overrides) {
    if (o.path != "base" && o.path != "label") out.push_back(o);
  }
  return out;
}

SweepSpec load_sweep(const std::string& file) {
  const config::ConfigNode root = config::load_file(file);
  root.expect_only({"name", "description", "base", "axes", "report", "max_points"});
  SweepSpec s;
  s.file = file;
  s.sha256 = sha256_hex(config::read_text_file(file));
  s.name = root.at("name").as_folder_name();
  const config::ConfigNode base = root.at("base");
  s.base_file = (std::filesystem::path(file).parent_path() / base.as_string()).lexically_normal().string();
  if (const std::string why = scenario_file_problem(s.base_file); !why.empty()) base.fail(why);
  // The base is a scenario, never the sweep itself (every point would fail at the sweep's keys).
  std::error_code ec;
  const auto self = std::filesystem::weakly_canonical(file, ec);
  const auto is_self = [&](const std::string& other) {
    std::error_code e;
    return !ec && std::filesystem::weakly_canonical(other, e) == self && !e;
  };
  if (is_self(s.base_file)) base.fail("names this sweep file itself; base is the scenario the sweep varies");

  // Point ids are ints, and a point costs a row of memory while it waits to be written in order.
  if (auto m = root.find("max_points")) s.max_points = m->as_count(100'000'000);
  const config::ConfigNode axes = root.at("axes");
  if (!axes.is_sequence() || axes.elements().empty()) axes.fail("needs a list of axes");
  // Every axis's size first, by multiplication (a grid's is the product of its lists'), then the
  // sweep's (saturating), and only then, within max_points, the values and the points: a grid of
  // 10^7 points is refused at once, not after expanding it.
  double total = 1;
  for (const auto& axis : axes.elements()) {
    axis.expect_only({"grid", "zip", "points", "repeat"});
    const auto entries = axis.entries();
    if (entries.size() != 1) axis.fail("each axis is exactly one of grid, zip, points, repeat");
    const auto& [kind, body] = entries.front();
    double size = 1;
    if (kind == "grid" && body.is_map()) {
      for (const auto& [key, list] : body.entries()) size *= list.is_sequence() ? static_cast<double>(list.elements().size()) : 1;
    } else if (kind == "zip" && body.is_map() && !body.entries().empty()) {
      const auto zipped = body.entries();  // the first list, alive while it is read
      const config::ConfigNode& list = zipped.front().second;
      size = list.is_sequence() ? static_cast<double>(list.elements().size()) : 1;
    } else if (kind == "points" && body.is_sequence()) {
      size = static_cast<double>(body.elements().size());
    } else if (kind == "repeat") {
      size = static_cast<double>(body.as_positive_int());
    }
    total *= size;
  }
  if (total > static_cast<double>(s.max_points)) {
    axes.fail(fmt::format("expand to {:.0f} points, more than max_points ({})", total, s.max_points),
              "split the sweep, or raise max_points in the sweep file if you mean it");
  }
  std::vector<std::vector<Assignment>> axis_values;
  for (const auto& axis : axes.elements()) {
    const auto entries = axis.entries();  // the pair below refers into it
    const auto& [kind, body] = entries.front();
    axis_values.push_back(kind == "grid"     ? grid(body)
                          : kind == "zip"    ? zip(body)
                          : kind == "points" ? points(body)
                                             : repeat(body));
  }
  // A key path the base scenario has no place for fails every point the same way: said here, at
  // the axis, before anything runs (it came out as a failed row per point, citing a --set the
  // user never typed). Each key with its first value alone; any other error is the point's own.
  {
    const models::Catalog catalog(models::data_root() / "models");
    std::set<std::string> checked;
    const auto check = [&](const std::string& key, const config::ConfigNode& where, const config::ConfigNode& value) {
      if (key == "base" || key == "label" || !checked.insert(key).second) return;
      const config::Override o = set(key, value);
      try {
        (void)load_scenario(s.base_file, {o}, catalog);
      } catch (const InputError& e) {
        const std::string what = e.what();
        if (what.find(": unknown key") == std::string::npos) return;
        const std::string prefix = o.text + ": ";
        const std::size_t at = what.find(prefix);
        where.fail("key path '" + key + "' does not fit the base scenario " + s.base_file + ": " +
                   (at == std::string::npos ? what : what.substr(at + prefix.size())));
      } catch (const std::exception&) {
      }
    };
    // A key two axes set: the later one's value wins at every point, and the earlier axis only
    // repeats points (a grid of 8 and 16 GPUs over one of 32 ran three copies of 32).
    std::map<std::string, std::size_t> axis_of;
    const auto once = [&](const std::string& key, const config::ConfigNode& where, std::size_t a) {
      if (const auto [at, added] = axis_of.emplace(key, a); !added && at->second != a) {
        where.fail(fmt::format("key path '{}' is set by axes[{}] too; each key belongs to one axis", key, at->second));
      }
    };
    const auto elements = axes.elements();
    for (std::size_t a = 0; a < elements.size(); ++a) {
      const auto entries = elements[a].entries();
      const auto& [kind, body] = entries.front();
      if (kind == "grid" || kind == "zip") {
        for (const auto& [key, list] : body.entries()) {
          once(key, list, a);
          check(key, list, list.elements().front());
        }
      } else if (kind == "points") {
        for (const auto& p : body.elements()) {
          for (const auto& [key, v] : p.entries()) {
            once(key, v, a);
            check(key, v, v);
          }
        }
      }
    }
  }
  std::vector<Assignment> expanded = {{}};
  for (const std::vector<Assignment>& values : axis_values) {
    std::vector<Assignment> next;
    for (const Assignment& a : expanded) {
      for (const Assignment& v : values) {
        Assignment b = a;
        b.insert(b.end(), v.begin(), v.end());
        next.push_back(std::move(b));
      }
    }
    expanded = std::move(next);
  }
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    for (const auto& o : expanded[i]) {
      if (std::find(s.keys.begin(), s.keys.end(), o.path) == s.keys.end()) s.keys.push_back(o.path);
    }
    s.points.push_back(SweepPoint{static_cast<int>(i), std::move(expanded[i])});
  }
  std::set<std::string> bases;  // each scenario file checked once, not once per point
  for (const SweepPoint& p : s.points) {
    if (!bases.insert(s.base_of(p)).second) continue;
    if (const std::string why = scenario_file_problem(s.base_of(p)); !why.empty()) {
      axes.fail("point " + std::to_string(p.id) + " names " + why);
    }
    if (is_self(s.base_of(p))) axes.fail("point " + std::to_string(p.id) + " names this sweep file itself as its base");
  }
  if (auto report = root.find("report")) {
    report->expect_only({"gpu_hour", "deadline"});
    if (auto price = report->find("gpu_hour")) {
      // "2.5 USD": a price per accelerator-hour (the only currency the report knows).
      const std::string text = price->as_string();
      const auto space = text.find(' ');
      if (space == std::string::npos || text.substr(space + 1) != "USD") {
        price->fail("\"" + text + "\" is not a price", "write it as \"2.5 USD\" (per accelerator-hour)");
      }
      // The whole number must parse: std::stod would read "2.5x" as 2.5.
      const std::string number = text.substr(0, space);
      char* end = nullptr;
      const double value = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size()) {
        price->fail("\"" + text + "\" is not a price", "write it as \"2.5 USD\"");
      }
      if (!(value > 0) || !std::isfinite(value)) price->fail("must be a positive, finite price");
      s.gpu_hour_usd = value;
    }
    if (auto d = report->find("deadline")) s.deadline_s = to_seconds(d->as_nonnegative_duration());
  }
  return s;
}

}  // namespace sp
