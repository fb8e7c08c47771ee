#include "sim/output/manifest.hpp"

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

}  // namespace sp::output
