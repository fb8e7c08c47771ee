#include "sim/output/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

namespace sp::output {

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string to_yaml(const Manifest& m) {
  std::string out;
  for (const auto& [key, value] : m.fields) out += key + ": " + yaml_quote(value) + "\n";
  const auto list = [&out](const char* key, const std::vector<std::string>& items) {
    out += std::string(key) + ":";
    if (items.empty()) {
      out += " []\n";
      return;
    }
    out += "\n";
    for (const auto& i : items) out += "  - " + yaml_quote(i) + "\n";
  };
  list("overrides", m.overrides);
  list("files", m.files);
  return out;
}

std::set<std::string> manifest_files(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "files:") {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("  - \"", 0) != 0 || line.size() < 6 || line.back() != '"') break;
    const std::string name = line.substr(5, line.size() - 6);
    const bool plain = !name.empty() && name.front() != '.' && std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '_' || c == '-' || c == '.';
    });
    if (plain) out.insert(name);
  }
  return out;
}

}  // namespace sp::output
