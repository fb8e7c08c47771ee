#include "sim/config/loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <variant>

#include <yaml-cpp/depthguard.h>

#include "sim/config/config_impl.hpp"

namespace sp::config {

std::string origin_of(const Override& o) { return o.text.rfind("--", 0) == 0 ? o.text : "--set " + o.text; }

namespace {

namespace fs = std::filesystem;
constexpr int kMaxIncludeDepth = 16;
// No scenario, platform or sweep nests deeper than a dozen levels; an alias inside the node it
// names (`x: &A [*A]`) nests without end, and walking it would overflow the stack.
constexpr int kMaxNesting = 100;

// The line of a second document's first content (after a `---` or `...` marker that follows the
// first document's content), or 0. Found in the text, not with YAML::LoadAll: yaml-cpp 0.7's
// LoadAll never returns on some malformed input (a top-level flow mapping followed by a comma,
// found by fuzz_measurements), where Load stops after the first document. A marker at column 0
// ends a document wherever it stands (YAML 1.2, 9.1), so the scan needs no parsing.
int second_document_line(const std::string& text) {
  bool content = false, marker = false;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string rest = line;
    for (const char* m : {"---", "..."}) {
      if (line.rfind(m, 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t')) {
        if (content) marker = true;
        rest = line.substr(3);
      }
    }
    const std::size_t first = rest.find_first_not_of(" \t");
    if (first == std::string::npos || rest[first] == '#') continue;
    if (!content && !marker && rest[first] == '%') continue;  // a directive (%YAML 1.2) before the first document
    if (marker) return line_no;
    content = true;
  }
  return 0;
}

// Whether the text is UTF-16 or UTF-32 (with or without a byte-order mark, as YAML 1.2, 5.2
// detects it from the first bytes): yaml-cpp decodes those, whose ASCII characters carry NULs.
bool wide_encoding(const std::string& text) {
  if (text.size() < 2) return false;
  const auto b = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0x100u; };
  if ((b(0) == 0xFE && b(1) == 0xFF) || (b(0) == 0xFF && b(1) == 0xFE)) return true;  // UTF-16 (or -32 LE) marks
  if (b(0) == 0 && b(1) == 0 && (b(2) == 0xFE || b(2) == 0)) return true;           // UTF-32 BE
  return (b(0) == 0) != (b(1) == 0);  // an ASCII first character in UTF-16 (or UTF-32 LE)
}

YAML::Node parse_yaml(const std::string& text, const std::string& label) {
  // yaml-cpp reads a NUL in UTF-8 as an escape it does not know ("unknown escape character: \x0a").
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos && !wide_encoding(text)) {
    throw InputError(location_in(text, nul, label), "", "holds a NUL byte; a YAML file is text",
                     "was a binary file named?");
  }
  try {
    // A second document would be ignored: say so rather than drop it. An empty one holds nothing.
    if (const int line = second_document_line(text)) {
      throw InputError(SourceLocation{label, line, 1}, "", "holds a second YAML document; a file is one",
                       "remove the '---' (or '...') and what follows, or merge it into the first");
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const int column = e.mark.is_null() ? 0 : e.mark.column + 1;
    // yaml-cpp's guard against a stack overflow, which it words as "bad file". Its mark is where
    // its scanner stands, which may be past the bracket that went too deep.
    if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
      throw InputError(SourceLocation{label, line, column}, "",
                       "nested " + std::to_string(deep->depth()) + " levels deep, more than the YAML reader follows",
                       "no scenario, platform or sweep nests more than a dozen");
    }
    throw InputError(SourceLocation{label, line, column}, "", "YAML syntax error: " + e.msg);
  }
}

std::string join_key(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Replaces every `!include file` below `node` by the loaded file, recording where it came from.
void resolve_includes(YAML::Node node, const fs::path& dir, const std::string& path,
                      const std::string& file, LoadContext& ctx, int depth, int nesting = 0) {
  if (nesting > kMaxNesting) {
    const YAML::Mark m = node.Mark();
    const std::string key = path.size() > 60 ? path.substr(0, 60) + "..." : path;
    throw InputError(SourceLocation{file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1}, key,
                     "nested more than " + std::to_string(kMaxNesting) + " levels deep",
                     "no scenario nests a dozen: does an alias (*name) stand inside the node it names?");
  }
  if (++ctx.nodes > kMaxYamlNodes) {
    throw InputError(SourceLocation{file, 0, 0}, "",
                     "expands to more than " + std::to_string(kMaxYamlNodes) + " YAML nodes",
                     "are aliases (*name) repeating aliases?");
  }
  // A tag scalepoint does not know (`seed: !foo 1`) was dropped without a word: the value read
  // would not be what the author meant by it. "!" marks a quoted scalar, "?" a plain one, and
  // YAML's own tags (!!str ...) are its core schema's.
  if (const std::string& tag = node.Tag();
      !tag.empty() && tag != "!" && tag != "?" && tag != "!include" && tag.rfind("tag:yaml.org,2002:", 0) != 0) {
    const YAML::Mark m = node.Mark();
    throw InputError(SourceLocation{file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1}, path,
                     "unknown YAML tag '" + tag + "'", "scalepoint reads !include only");
  }
  const auto include = [&](YAML::Node target, const std::string& child_path) -> YAML::Node {
    const YAML::Mark m = target.Mark();
    const SourceLocation where{file, m.line + 1, m.column + 1};
    if (!target.IsScalar() || target.Scalar().empty()) {
      throw InputError(where, child_path, "!include needs a file name");
    }
    // The C library would end the name at a NUL and open another file than the one written.
    if (target.Scalar().find('\0') != std::string::npos) {
      throw InputError(where, child_path, "!include: a file name with a NUL character");
    }
    if (depth >= kMaxIncludeDepth) {
      throw InputError(where, child_path, "!include nested too deeply", "is there an include cycle?");
    }
    const fs::path inc = (dir / target.Scalar()).lexically_normal();
    std::string text;
    try {
      text = read_text_file(inc.string());
    } catch (const InputError& e) {
      throw InputError(where, child_path, e.message());
    }
    YAML::Node loaded = parse_yaml(text, inc.string());
    ctx.origins[child_path] = inc.string();
    resolve_includes(loaded, inc.parent_path(), child_path, inc.string(), ctx, depth + 1);
    return loaded;
  };

  if (node.IsMap()) {
    // Replace included values through their own nodes after the walk: looking a key up again
    // (node[key]) inserts a new pair when the key is not a plain scalar (a null or complex key),
    // which invalidates the iteration (found by fuzzing: heap use after free).
    std::vector<std::pair<YAML::Node, YAML::Node>> included;
    for (auto kv : node) {
      const std::string child_path = join_key(path, kv.first.IsScalar() ? kv.first.Scalar() : std::string("?"));
      if (kv.second.Tag() == "!include") {
        included.emplace_back(kv.second, include(kv.second, child_path));
      } else {
        resolve_includes(kv.second, dir, child_path, file, ctx, depth, nesting + 1);
      }
    }
    for (auto& [value, replacement] : included) value = replacement;
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string child_path = path + "[" + std::to_string(i) + "]";
      if (node[i].Tag() == "!include") {
        node[i] = include(node[i], child_path);
      } else {
        resolve_includes(node[i], dir, child_path, file, ctx, depth, nesting + 1);
      }
    }
  }
}

using Segment = std::variant<std::string, std::size_t>;

std::vector<Segment> split_path(const Override& o) {
  const SourceLocation where{origin_of(o), 0, 0};
  std::vector<Segment> segs;
  std::size_t i = 0;
  const std::string& p = o.path;
  while (i < p.size()) {
    if (p[i] == '[') {
      const std::size_t close = p.find(']', i);
      const std::string digits = close == std::string::npos ? "" : p.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw InputError(where, o.path, "bad list index in key path", "write e.g. accelerators[2]");
      }
      segs.emplace_back(static_cast<std::size_t>(std::stoull(digits)));
      i = close + 1;
      if (i < p.size() && p[i] == '.') ++i;
    } else {
      const std::size_t end = p.find_first_of(".[", i);
      const std::string key = p.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (key.empty()) throw InputError(where, o.path, "empty key in key path");
      segs.emplace_back(key);
      i = end == std::string::npos ? p.size() : end;
      if (i < p.size() && p[i] == '.') ++i;
    }
  }
  if (segs.empty()) throw InputError(where, o.path, "empty key path");
  return segs;
}

// Sets the value at segs[i..] below `node`; a mapping it has to create belongs to the --set
// argument (`origins`), so that a key it misspells is blamed on the argument, not on the file.
void set_path(YAML::Node node, const std::vector<Segment>& segs, std::size_t i, const YAML::Node& value,
              const Override& o, const std::string& walked, std::map<std::string, std::string>& origins) {
  const SourceLocation where{origin_of(o), 0, 0};
  const bool last = i + 1 == segs.size();
  if (const auto* key = std::get_if<std::string>(&segs[i])) {
    if (!node.IsMap() && !node.IsNull()) {
      throw InputError(where, walked, "is not a mapping, so it has no key '" + *key + "'");
    }
    if (last) {
      node[*key] = value;
      return;
    }
    if (!node[*key].IsDefined() || node[*key].IsNull()) {
      node[*key] = YAML::Node(YAML::NodeType::Map);
      origins[join_key(walked, *key)] = origin_of(o);
    }
    set_path(node[*key], segs, i + 1, value, o, join_key(walked, *key), origins);
    return;
  }
  const std::size_t idx = std::get<std::size_t>(segs[i]);
  if (!node.IsSequence() || idx > node.size() || (idx == node.size() && !last)) {
    throw InputError(where, walked, "has no element [" + std::to_string(idx) + "]");
  }
  if (last) {
    if (idx == node.size()) {
      node.push_back(value);
    } else {
      node[idx] = value;
    }
    return;
  }
  set_path(node[idx], segs, i + 1, value, o, walked + "[" + std::to_string(idx) + "]", origins);
}

std::string canonical_path(const std::vector<Segment>& segs) {
  std::string out;
  for (const Segment& s : segs) {
    if (const auto* key = std::get_if<std::string>(&s)) {
      out = join_key(out, *key);
    } else {
      out += "[" + std::to_string(std::get<std::size_t>(s)) + "]";
    }
  }
  return out;
}

ConfigNode finish_load(YAML::Node root, const std::string& label, const fs::path& dir,
                       const std::vector<Override>& overrides) {
  auto ctx = std::make_shared<LoadContext>();
  resolve_includes(root, dir, "", label, *ctx, 0);
  if (!overrides.empty() && root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const Override& o : overrides) {
    const std::vector<Segment> segs = split_path(o);
    const std::string path = canonical_path(segs);
    // The subtree is replaced: the files its old keys came from (a platform's included protocol
    // table) no longer say where anything under it is.
    for (auto it = ctx->origins.lower_bound(path); it != ctx->origins.end() && it->first.rfind(path, 0) == 0;) {
      const char next = it->first.size() > path.size() ? it->first[path.size()] : '\0';
      it = next == '.' || next == '[' ? ctx->origins.erase(it) : std::next(it);
    }
    if (o.file.empty()) {
      set_path(root, segs, 0, parse_yaml(o.value, origin_of(o)), o, "", ctx->origins);
      ctx->origins[path] = origin_of(o);
      continue;
    }
    YAML::Node value = parse_yaml(read_text_file(o.file), o.file);
    resolve_includes(value, fs::path(o.file).parent_path(), path, o.file, *ctx, 0);
    set_path(root, segs, 0, value, o, "", ctx->origins);
    ctx->origins[path] = o.file;
  }
  return make_node(root, std::move(ctx), "", label);
}

}  // namespace

Override parse_override(const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(SourceLocation{"--set " + argument, 0, 0}, "",
                     "expected key.path=value", "e.g. --set platform.scale_out.nics=4");
  }
  return Override{argument.substr(0, eq), argument.substr(eq + 1), argument};
}

bool exists_quietly(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec) && !ec;
}

bool regular_file_quietly(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && !ec;
}

std::string read_text_file(const std::string& file) {
  std::error_code ec;
  const SourceLocation where{file, 0, 0};
  if (fs::is_directory(file, ec)) throw InputError(where, "", "is a directory, expected a file");
  // Devices and pipes (/dev/zero, /dev/stdin) could feed bytes forever: only regular files, and
  // none larger than any input scalepoint has a use for.
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
    throw InputError(where, "", "is not a regular file (a device, pipe or socket)");
  }
  if (const auto size = fs::file_size(file, ec); !ec && size > kMaxInputBytes) {
    throw InputError(where, "",
                     "is " + std::to_string(size) + " bytes; input files are limited to " +
                         std::to_string(kMaxInputBytes >> 20) + " MiB");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw InputError(where, "", std::string("cannot open: ") + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ConfigNode load_file(const std::string& file, const std::vector<Override>& overrides) {
  const std::string text = read_text_file(file);
  return finish_load(parse_yaml(text, file), file, fs::path(file).parent_path(), overrides);
}

ConfigNode load_string(const std::string& yaml, const std::string& name,
                       const std::vector<Override>& overrides) {
  return finish_load(parse_yaml(yaml, name), name, fs::current_path(), overrides);
}

namespace {
// Where a line's first JSON value ends when it is an object: the column after its closing brace
// (strings and their escapes skipped), or npos. YAML's parser reads "{...} garbage" and two
// objects on one line without a word.
std::size_t object_end(const std::string& line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != '{') return std::string::npos;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = start; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
  }
  return std::string::npos;
}
}  // namespace

std::vector<ConfigNode> load_json_lines(const std::string& text, const std::string& name) {
  std::vector<ConfigNode> out;
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    // Padded with the lines before it, so that the parser's line numbers are the file's.
    ConfigNode row = load_string(std::string(n - 1, '\n') + line, name);
    if (!row.is_map()) row.fail("expected one JSON object per line");
    if (const std::size_t end = object_end(line);
        end != std::string::npos && line.find_first_not_of(" \t\r", end) != std::string::npos) {
      throw InputError(SourceLocation{name, static_cast<int>(n), static_cast<int>(end) + 1}, "",
                       "text after the line's JSON object (one object per line)");
    }
    // JSON leaves a repeated name's meaning to the reader (RFC 8259, 4); yaml-cpp keeps the first.
    row.expect_unique_keys();
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace sp::config
