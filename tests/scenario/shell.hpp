// Running commands as a user would from the tests: status and combined output, and files read back.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sp::testing {

struct RunResult {
  int status;
  std::string output;  // stdout and stderr
};

inline RunResult shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

/// An empty folder for one test, <tmp>/sp_<suite>_<pid>_<name>: whatever an earlier run left is removed.
inline std::filesystem::path fresh_dir(const std::string& suite, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("sp_" + suite + "_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(d);
  return d;
}

/// The project's scenarios/<name>.yaml.
inline std::string scenario_file(const std::string& name) {
  return std::string(SP_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
}

#ifdef SP_CLI
/// The built scalepoint with `args`, as a user runs it.
inline RunResult cli(const std::string& args) { return shell(std::string(SP_CLI) + " " + args); }
#endif

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace sp::testing
