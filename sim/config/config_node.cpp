#include "sim/config/config_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "sim/config/config_impl.hpp"
#include "sim/config/quantity.hpp"

namespace sp::config {

ConfigNode::ConfigNode(std::shared_ptr<const Impl> impl, std::shared_ptr<const LoadContext> ctx,
                       std::string path, std::string origin)
    : impl_(std::move(impl)), ctx_(std::move(ctx)), path_(std::move(path)), origin_(std::move(origin)) {}

SourceLocation ConfigNode::location() const {
  // A command-line argument (--set k=v, --anchor N=T) has no lines: the argument is the place.
  if (origin_.rfind("--", 0) == 0) return SourceLocation{origin_, 0, 0};
  const YAML::Mark m = impl_->node.IsNull() && !impl_->key_mark.is_null() ? impl_->key_mark : impl_->node.Mark();
  if (m.is_null()) return SourceLocation{origin_, 0, 0};
  return SourceLocation{origin_, m.line + 1, m.column + 1};
}

void ConfigNode::fail(const std::string& message, const std::string& hint) const {
  throw InputError(location(), path_, message, hint);
}

bool ConfigNode::is_map() const { return impl_->node.IsMap(); }
bool ConfigNode::is_sequence() const { return impl_->node.IsSequence(); }
bool ConfigNode::is_scalar() const { return impl_->node.IsScalar(); }
bool ConfigNode::is_null() const { return !impl_->node.IsDefined() || impl_->node.IsNull(); }

ConfigNode ConfigNode::child(std::string path) const {
  const auto it = ctx_->origins.find(path);
  return ConfigNode(impl_, ctx_, std::move(path), it == ctx_->origins.end() ? origin_ : it->second);
}

bool ConfigNode::has(std::string_view key) const {
  if (!is_map()) return false;
  const YAML::Node& n = impl_->node;
  return n[std::string(key)].IsDefined();
}

std::optional<ConfigNode> ConfigNode::find(std::string_view key) const {
  if (!is_map()) {
    if (is_null()) return std::nullopt;
    fail("expected a mapping (key: value pairs)");
  }
  const YAML::Node& n = impl_->node;
  const YAML::Node c = n[std::string(key)];
  if (!c.IsDefined()) return std::nullopt;
  const std::string p = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  ConfigNode out = child(p);
  YAML::Mark key_mark = YAML::Mark::null_mark();
  if (c.IsNull()) {
    for (const auto& kv : n) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) key_mark = kv.first.Mark();
    }
  }
  out.impl_ = std::make_shared<const Impl>(Impl{c, key_mark});
  return out;
}

ConfigNode ConfigNode::at(std::string_view key) const {
  std::optional<ConfigNode> c = find(key);
  const std::string p = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (!c) throw InputError(location(), p, "missing required key");
  if (c->is_null()) c->fail("has no value");
  return *c;
}

std::vector<ConfigNode> ConfigNode::elements() const {
  if (!is_sequence()) fail("expected a list");
  std::vector<ConfigNode> out;
  std::size_t i = 0;
  for (const YAML::Node& e : impl_->node) {
    ConfigNode c = child(path_ + "[" + std::to_string(i++) + "]");
    c.impl_ = std::make_shared<const Impl>(Impl{e, YAML::Mark::null_mark()});
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::pair<YAML::Node, YAML::Node>> ConfigNode::entries_checked() const {
  if (!is_map()) fail("expected a mapping (key: value pairs)");
  std::vector<std::pair<YAML::Node, YAML::Node>> out;
  for (const auto& kv : impl_->node) {
    if (!kv.first.IsScalar()) {
      // At the key itself (a null or complex key), not at the mapping that holds it.
      ConfigNode key = child(path_);
      key.impl_ = std::make_shared<const Impl>(Impl{kv.first, YAML::Mark::null_mark()});
      key.fail("keys must be plain names");
    }
    out.emplace_back(kv.first, kv.second);
  }
  return out;
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::entries() const {
  std::vector<std::pair<std::string, ConfigNode>> out;
  for (const auto& kv : entries_checked()) {
    const std::string key = kv.first.Scalar();
    ConfigNode c = child(path_.empty() ? key : path_ + "." + key);
    c.impl_ = std::make_shared<const Impl>(Impl{kv.second, kv.first.Mark()});
    out.emplace_back(key, std::move(c));
  }
  return out;
}

void ConfigNode::expect_only(std::initializer_list<std::string_view> allowed) const {
  expect_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

// A bad key is reported where the key is written, not where its value is.
void ConfigNode::fail_at_key(const YAML::Node& key_node, const std::string& message, const std::string& hint) const {
  const std::string& key = key_node.Scalar();
  const YAML::Mark m = key_node.Mark();
  const std::string p = path_.empty() ? key : path_ + "." + key;
  SourceLocation where = child(p).location();
  if (where.line > 0 && !m.is_null()) {
    where.line = m.line + 1;
    where.column = m.column + 1;
  }
  throw InputError(where, p, message, hint);
}

void ConfigNode::expect_unique_keys() const {
  std::set<std::string> seen;
  for (const auto& kv : entries_checked()) {
    if (!seen.insert(kv.first.Scalar()).second) fail_at_key(kv.first, "duplicate key", "");
  }
}

void ConfigNode::expect_only(const std::vector<std::string>& names) const {
  std::set<std::string> seen;
  for (const auto& kv : entries_checked()) {
    const std::string& key = kv.first.Scalar();
    if (!seen.insert(key).second) fail_at_key(kv.first, "duplicate key", "");
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    const std::optional<std::string> guess = closest_match(key, names);
    std::string valid;
    for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
    fail_at_key(kv.first, "unknown key", guess ? "did you mean '" + *guess + "'? valid keys: " + valid
                                               : "valid keys: " + valid);
  }
}

std::string ConfigNode::scalar_text(std::string_view what) const {
  if (!is_scalar()) fail("expected " + std::string(what));
  return impl_->node.Scalar();
}

std::string ConfigNode::as_string() const { return scalar_text("a text value"); }

std::string ConfigNode::as_folder_name() const {
  const std::string s = as_string();
  if (s.empty() || s == "." || s == ".." || has_control_chars(s) || s.find_first_of("/\\") != std::string::npos) {
    fail("must be a name without slashes, control characters, '.' or '..' (it names the output folder)");
  }
  // "results/ " or "results/x " looks like results/x in every listing: no blank ends.
  if (s.front() == ' ' || s.back() == ' ') fail("must not begin or end with a space (it names the output folder)");
  // A folder name is at most 255 bytes on Linux file systems (NAME_MAX); leave room for suffixes.
  if (s.size() > 200) fail("is " + std::to_string(s.size()) + " characters long; at most 200 (it names the output folder)");
  return s;
}

double ConfigNode::as_number() const {
  const std::string s = scalar_text("a number");
  const std::optional<double> v = parse_plain_number(s);
  if (!v) fail("\"" + s + "\" is not a number");
  return *v;
}

std::int64_t ConfigNode::as_int() const {
  const std::string s = scalar_text("an integer");
  const std::optional<std::int64_t> v = parse_plain_integer(s);
  if (!v) {
    // A whole number past int64 (a seed of 2^64 - 1) is out of range, not "not an integer".
    const bool digits = !s.empty() && s.find_first_not_of("0123456789", s[0] == '-' || s[0] == '+' ? 1 : 0) == std::string::npos &&
                        s.size() > (s[0] == '-' || s[0] == '+' ? 1u : 0u);
    if (digits) fail("\"" + s + "\" is beyond the 64-bit integers");
    fail("\"" + s + "\" is not an integer");
  }
  return *v;
}

std::int64_t ConfigNode::as_positive_int() const {
  const std::int64_t v = as_int();
  if (v < 1) fail("must be at least 1, got " + std::to_string(v));
  return v;
}

int ConfigNode::as_count(std::int64_t max) const {
  const std::int64_t v = as_positive_int();
  if (v > max) fail("must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

double ConfigNode::as_positive_number() const {
  const double v = as_number();
  if (!(v > 0.0)) fail("must be greater than 0, got " + as_string());
  return v;
}

double ConfigNode::as_fraction() const {
  const double v = as_number();
  if (!(v > 0.0 && v <= 1.0)) fail("must be in (0, 1], got " + as_string());
  return v;
}

bool ConfigNode::as_bool() const {
  const std::string s = scalar_text("true or false");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  fail("\"" + s + "\" is not true or false");
}

namespace {
template <class F>
auto parse_located(const ConfigNode& n, const std::string& text, F parse) {
  try {
    return parse(text);
  } catch (const QuantityError& e) {
    n.fail(e.what(), e.hint());
  } catch (const std::out_of_range& e) {
    n.fail(e.what());
  } catch (const ModelError& e) {  // a duration beyond the simulated range
    n.fail(e.what());
  }
}
}  // namespace

Bytes ConfigNode::as_bytes() const { return parse_located(*this, scalar_text("a size"), parse_bytes); }
BytesPerSecond ConfigNode::as_bandwidth() const {
  return parse_located(*this, scalar_text("a bandwidth"), parse_bandwidth);
}
Duration ConfigNode::as_duration() const {
  return parse_located(*this, scalar_text("a time"), parse_duration);
}
Flops ConfigNode::as_flops() const { return parse_located(*this, scalar_text("a FLOP count"), parse_flops); }
FlopsPerSecond ConfigNode::as_flop_rate() const {
  return parse_located(*this, scalar_text("a compute rate"), parse_flop_rate);
}
Watts ConfigNode::as_power() const { return parse_located(*this, scalar_text("a power"), parse_power); }

namespace {
template <class Q>
Q require_positive(const ConfigNode& n, Q q) {
  if (!(q.value() > 0)) n.fail("must be greater than 0, got \"" + n.as_string() + "\"");
  return q;
}
}  // namespace

Bytes ConfigNode::as_positive_bytes() const { return require_positive(*this, as_bytes()); }
BytesPerSecond ConfigNode::as_positive_bandwidth() const {
  const BytesPerSecond b = require_positive(*this, as_bandwidth());
  // No link scalepoint models (PCIe, NICs, NVLink, HBM) is slower than a megabyte per second;
  // "1 b/s" is a unit slip whose times would leave the simulated range.
  if (b.value() < 1e6) fail("\"" + as_string() + "\" is below 1 MB/s, slower than any link scalepoint models");
  // Nor faster than a petabyte a second (HBM3e moves 8 TB/s): a unit slip.
  if (!(b.value() <= 1e15)) fail("\"" + as_string() + "\" is above 1 PB/s, faster than any link or memory scalepoint models");
  return b;
}
FlopsPerSecond ConfigNode::as_positive_flop_rate() const { return require_positive(*this, as_flop_rate()); }
Bytes ConfigNode::as_nonnegative_bytes() const {
  const Bytes b = as_bytes();
  if (!(b.value() >= 0) || !std::isfinite(b.value())) fail("must be a size of 0 or more, got \"" + as_string() + "\"");
  return b;
}
Duration ConfigNode::as_nonnegative_duration() const {
  const Duration d = as_duration();
  if (d < Duration::zero()) fail("must not be negative, got \"" + as_string() + "\"");
  return d;
}

double ConfigNode::as_positive_seconds() const {
  const double s = parse_located(*this, scalar_text("a time"),
                                 [](std::string_view t) { return parse_quantity(t, Dimension::time); });
  if (!(s > 0) || !std::isfinite(s)) fail("must be greater than 0, got \"" + as_string() + "\"");
  return s;
}

std::string ConfigNode::dump() const {
  YAML::Emitter out;
  out << impl_->node;
  return out.c_str();
}

namespace {
// The emitter follows a parsed node's own (block) style over the YAML::Flow manipulator, so the
// copy to be emitted is set to flow style all the way down.
void set_flow(YAML::Node n) {
  if (n.IsMap() || n.IsSequence()) n.SetStyle(YAML::EmitterStyle::Flow);
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) set_flow(it->second);
  } else if (n.IsSequence()) {
    for (auto it = n.begin(); it != n.end(); ++it) set_flow(*it);
  }
}
}  // namespace

std::string ConfigNode::dump_flow() const {
  YAML::Node copy = YAML::Clone(impl_->node);
  set_flow(copy);
  YAML::Emitter out;
  out << YAML::Flow << copy;
  return out.c_str();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string known_names_hint(std::string_view wanted, const std::vector<std::string>& known,
                             std::optional<std::string> guess) {
  if (!guess) guess = closest_match(wanted, known);
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return (guess ? "did you mean '" + *guess + "'? " : std::string()) + "known: " + list;
}

}  // namespace sp::config
