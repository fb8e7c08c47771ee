// Typed errors. Library code never exits: it throws, and only the CLI decides exit codes.
//  - InputError: the user's input is wrong (file, YAML, key, unit, value); exit status 2.
//  - ModelError: the input is valid but cannot be simulated (e.g. an empty group); exit status 1.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

/// ASCII control characters (below space, and DEL): what input text must not carry into a
/// terminal line, an output path or a plot script.
constexpr bool is_control_char(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
inline bool has_control_chars(std::string_view s) {
  for (const char c : s) {
    if (is_control_char(c)) return true;
  }
  return false;
}

/// Where a value came from: a file position (line/column 1-based, 0 = unknown) or a
/// command-line override such as "--set seed=3".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string str() const;
};

/// The location of byte `offset` of `text` (a file's contents): its 1-based line and column.
SourceLocation location_in(std::string_view text, std::size_t offset, std::string file);

class InputError : public std::runtime_error {
 public:
  /// `key` is the dotted key path ("platform.scale_out.nic_bandwidth"), empty for whole-file errors.
  InputError(SourceLocation where, std::string key, std::string message, std::string hint = {});

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string message_;
  std::string hint_;
};

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Input the model accepts but the user should hear about (a fit with too few points, counts that
/// contradict each other, a batch far beyond the measured convergence table): one line on stderr,
/// "scalepoint: warning: <where>: <key>: <message>", or into the innermost WarningCapture of this
/// thread while one lives (tests).
void warn(const SourceLocation& where, const std::string& key, const std::string& message);

class WarningCapture {
 public:
  WarningCapture();
  ~WarningCapture();
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  friend void warn(const SourceLocation&, const std::string&, const std::string&);
  std::vector<std::string> messages_;
  WarningCapture* outer_;
};

}  // namespace sp
