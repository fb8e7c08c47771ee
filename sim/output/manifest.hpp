// manifest.yaml: what produced a results folder (version, command line, seed, input hashes), so
// a result can be traced to its inputs and reproduced.
#pragma once

#include <set>
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
/// The files a manifest's text lists, as to_yaml writes them (`files:`, then `  - "name"` lines),
/// those with plain names only (letters, digits, `_ - .`, not starting with a dot): what a later
/// run into the folder may remove when it no longer writes them.
std::set<std::string> manifest_files(const std::string& text);

}  // namespace sp::output
