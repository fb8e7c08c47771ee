// Private to sim/config: the yaml-cpp side of ConfigNode. Nothing outside sim/config includes it.
#pragma once

#include <map>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_node.hpp"

namespace sp::config {

struct ConfigNode::Impl {
  YAML::Node node;
  // An empty value (`host_cpu:`) has the mark of whatever follows it, the next line's key: its
  // own key's mark is where it is.
  YAML::Mark key_mark = YAML::Mark::null_mark();
};

/// Where subtrees came from when it differs from their parent: an included file or a --set.
struct LoadContext {
  std::map<std::string, std::string> origins;
  std::size_t nodes = 0;  // visited while resolving includes: aliases can multiply a small file
};

/// The most YAML nodes one document may expand to (its aliases expanded): a kilobyte of nested
/// aliases can stand for 10^9 nodes; no scenario, platform or sweep needs more than a few thousand.
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;

inline ConfigNode make_node(const YAML::Node& node, std::shared_ptr<const LoadContext> ctx,
                            std::string path, std::string origin) {
  return ConfigNode(std::make_shared<const ConfigNode::Impl>(ConfigNode::Impl{node, YAML::Mark::null_mark()}), std::move(ctx),
                    std::move(path), std::move(origin));
}

}  // namespace sp::config
