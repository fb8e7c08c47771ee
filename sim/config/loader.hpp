// Loading a YAML document: read the file, resolve `!include path` (relative to the including
// file), then apply command-line overrides (`--set a.b[2].c=value`), so that there is one parse
// path whatever the source of a value. Errors name the file and line, or the --set argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"

namespace sp::config {

struct Override {
  std::string path;   // "platform.scale_out.nics"
  std::string value;  // YAML text: "4", "\"200 Gb/s\"", "[8, 16]"
  std::string text;   // the argument as the user wrote it, for messages
};

/// Parses "key.path=value"; a missing '=' or empty key is an InputError located at "--set".
Override parse_override(const std::string& argument);

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
