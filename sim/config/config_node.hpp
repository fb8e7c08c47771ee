// Typed, located access to a YAML configuration tree. yaml-cpp stays behind this wrapper. Every
// accessor that fails throws sp::InputError naming the file, line, column and key path, and
// expect_only() turns unknown keys into errors with a did-you-mean.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace YAML {
class Node;
}

namespace sp::config {

/// The largest count any input may give (accelerators, ranks, batches, sizes the model indexes
/// with): an int, and far beyond any machine; the README states it.
inline constexpr std::int64_t kMaxCount = 1'000'000'000;


struct LoadContext;  // shared by every node of one loaded document

class ConfigNode {
 public:
  /// Key path from the document root: "platform.scale_out.nics", "accelerators[2]".
  const std::string& path() const { return path_; }
  SourceLocation location() const;

  bool is_map() const;
  bool is_sequence() const;
  bool is_scalar() const;
  bool is_null() const;

  bool has(std::string_view key) const;
  /// The child at `key`; missing or null is an error ("missing required key").
  ConfigNode at(std::string_view key) const;
  std::optional<ConfigNode> find(std::string_view key) const;
  /// Elements of a sequence, in order.
  std::vector<ConfigNode> elements() const;
  /// Key/value pairs of a mapping, in file order.
  std::vector<std::pair<std::string, ConfigNode>> entries() const;
  /// Rejects keys not in `allowed` (with a did-you-mean) and duplicate keys.
  void expect_only(std::initializer_list<std::string_view> allowed) const;
  void expect_only(const std::vector<std::string>& allowed) const;
  /// Rejects duplicate keys alone, where any key is allowed (a measurement row's extra fields).
  void expect_unique_keys() const;

  std::string as_string() const;
  /// A text that names an output folder or file: not empty, no slashes or control characters,
  /// not "." or ".." (which would leave the folder it is written under).
  std::string as_folder_name() const;
  double as_number() const;
  std::int64_t as_int() const;
  /// An integer >= 1 (counts of accelerators, nodes, NICs ...).
  std::int64_t as_positive_int() const;
  /// An integer from 1 to `max` that fits an int (sizes, counts the model indexes with).
  int as_count(std::int64_t max = kMaxCount) const;
  /// A real number > 0 and finite.
  double as_positive_number() const;
  /// A real number in (0, 1] (efficiencies).
  double as_fraction() const;
  bool as_bool() const;

  Bytes as_bytes() const;
  BytesPerSecond as_bandwidth() const;
  Duration as_duration() const;
  Flops as_flops() const;
  FlopsPerSecond as_flop_rate() const;
  Watts as_power() const;
  /// Same as above, but zero and negative values are rejected.
  Bytes as_positive_bytes() const;
  BytesPerSecond as_positive_bandwidth() const;
  FlopsPerSecond as_positive_flop_rate() const;
  Duration as_nonnegative_duration() const;
  /// A size >= 0 and finite (memory, traffic per parameter or token).
  Bytes as_nonnegative_bytes() const;
  /// A time > 0 in seconds, of any length (a Duration stops at about 106 days; a component's
  /// mean time between failures is years).
  double as_positive_seconds() const;

  /// Throws InputError located at this node.
  [[noreturn]] void fail(const std::string& message, const std::string& hint = {}) const;

  /// Canonical YAML text of this subtree (used for hashing and provenance).
  std::string dump() const;
  /// The same on one line (flow style): "[8, 16]", "{a: 1}".
  std::string dump_flow() const;

  struct Impl;
  ConfigNode(std::shared_ptr<const Impl> impl, std::shared_ptr<const LoadContext> ctx,
             std::string path, std::string origin);

 private:
  ConfigNode child(std::string path) const;
  std::vector<std::pair<YAML::Node, YAML::Node>> entries_checked() const;
  [[noreturn]] void fail_at_key(const YAML::Node& key, const std::string& message, const std::string& hint) const;
  std::string scalar_text(std::string_view what) const;

  std::shared_ptr<const Impl> impl_;
  std::shared_ptr<const LoadContext> ctx_;
  std::string path_;
  std::string origin_;  // file, or "--set key=value", the value came from
};

/// Levenshtein distance; used for did-you-mean suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The closest candidate to `word` if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);
/// The hint of an unknown-name error: "did you mean 'x'? known: a, b, c" (`guess` when the
/// caller has a better one than the closest spelling).
std::string known_names_hint(std::string_view wanted, const std::vector<std::string>& known,
                             std::optional<std::string> guess = std::nullopt);

}  // namespace sp::config
