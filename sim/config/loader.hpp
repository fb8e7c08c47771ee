// Loading a YAML document: read the file, resolve `!include path` (relative to the including
// file), then apply command-line overrides (`--set a.b[2].c=value`), so that there is one parse
// path whatever the source of a value. Errors name the file and line, or the --set argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/core/error.hpp"

namespace sp::config {

struct Override {
  Override(std::string path_, std::string value_, std::string text_, std::string file_ = {})
      : path(std::move(path_)), value(std::move(value_)), text(std::move(text_)), file(std::move(file_)) {}
  std::string path;   // "platform.scale_out.nics"
  std::string value;  // YAML text: "4", "\"200 Gb/s\"", "[8, 16]"
  std::string text;   // the argument as the user wrote it, for messages
  /// Where the value is a file's document (--platform FILE): read with its includes, so that an
  /// error inside it names that file and line; `value` is then unused.
  std::string file;
};

/// Parses "key.path=value"; a missing '=' or empty key is an InputError located at "--set".
Override parse_override(const std::string& argument);

/// Where an override came from, for messages: its own option where the CLI made it from one
/// (--seed, --anchor, --platform), else the --set argument.
std::string origin_of(const Override& o);

/// Runs `load` (reading and checking a document loaded with `overrides`); an InputError it throws
/// at a file's line, not at an override, while overrides were in effect, names them in its hint:
/// the line may be wrong only because of one (`--set platform.scale_out.nics_per_node=0` makes a
/// scenario's multi-node `accelerators` entry impossible, and the error is raised there).
template <class Load>
auto naming_overrides(const std::vector<Override>& overrides, Load&& load) -> decltype(load()) {
  try {
    return load();
  } catch (const InputError& e) {
    const std::string& at = e.where().file;
    if (overrides.empty() || at.empty() || at.rfind("--", 0) == 0) throw;
    std::string in_effect;
    for (const Override& o : overrides) in_effect += (in_effect.empty() ? "" : ", ") + origin_of(o);
    throw InputError(e.where(), e.key(), e.message(),
                     (e.hint().empty() ? "" : e.hint() + "; ") + "with " + in_effect + " in effect");
  }
}

/// Loads `file` with includes resolved and `overrides` applied.
ConfigNode load_file(const std::string& file, const std::vector<Override>& overrides = {});
/// Same for YAML held in memory; `name` labels messages.
ConfigNode load_string(const std::string& yaml, const std::string& name,
                       const std::vector<Override>& overrides = {});

/// JSON lines (one object a line; JSON is YAML): every non-blank line parsed alone, each node
/// located at its own line of `name`. A line that is not an object is an InputError there.
std::vector<ConfigNode> load_json_lines(const std::string& text, const std::string& name);

/// The largest input file read (scenarios, platforms, result tables, measurements).
inline constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{64} << 20;

/// Whether `path` names something that exists, without throwing for names the file system
/// refuses (too long, a component that is not a folder): those do not exist either.
bool exists_quietly(const std::string& path);
bool regular_file_quietly(const std::string& path);

/// The whole file as bytes; InputError when it cannot be read, is not a regular file or is larger
/// than kMaxInputBytes.
std::string read_text_file(const std::string& file);

}  // namespace sp::config
