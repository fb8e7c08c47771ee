// manifest.yaml: what produced a results folder (version, command line, seed, input hashes), so
// a result can be traced to its inputs and reproduced.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sp::output {

struct Manifest {
  std::vector<std::pair<std::string, std::string>> fields;  // in output order
  std::vector<std::string> overrides;
  std::vector<std::string> files;
};

/// YAML text; every value is a double-quoted YAML string.
std::string to_yaml(const Manifest& m);
/// `s` as a double-quoted YAML scalar.
std::string yaml_quote(const std::string& s);

}  // namespace sp::output
