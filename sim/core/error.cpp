#include "sim/core/error.hpp"

#include <algorithm>
#include <cstdio>

namespace sp {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ':' + std::to_string(line);
    if (column > 0) s += ':' + std::to_string(column);
  }
  return s;
}

SourceLocation location_in(std::string_view text, std::size_t offset, std::string file) {
  const std::string_view before = text.substr(0, offset);
  const std::size_t line_start = before.rfind('\n');
  const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  const int column = 1 + static_cast<int>(line_start == std::string_view::npos ? offset : offset - line_start - 1);
  return SourceLocation{std::move(file), line, column};
}

namespace {
// The message is one line on a terminal: a newline, NUL or escape sequence from the input (a
// --set value, a CSV cell) is shown as \xNN, not acted on.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (is_control_char(c)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_input_error(const SourceLocation& where, const std::string& key,
                               const std::string& message, const std::string& hint) {
  std::string s = where.str() + ": ";
  if (!key.empty()) s += key + ": ";
  s += message;
  if (!hint.empty()) s += " (" + hint + ")";
  return printable(s);
}
}  // namespace

InputError::InputError(SourceLocation where, std::string key, std::string message, std::string hint)
    : std::runtime_error(format_input_error(where, key, message, hint)),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

namespace {
thread_local WarningCapture* capture = nullptr;
}  // namespace

WarningCapture::WarningCapture() : outer_(capture) { capture = this; }
WarningCapture::~WarningCapture() { capture = outer_; }

void warn(const SourceLocation& where, const std::string& key, const std::string& message) {
  const std::string line = format_input_error(where, key, message, {});
  if (capture) {
    capture->messages_.push_back(line);
  } else {
    std::fprintf(stderr, "scalepoint: warning: %s\n", line.c_str());
  }
}

}  // namespace sp
