// Private to sim/config: the yaml-cpp side of ConfigNode. Nothing outside sim/config includes it.
#pragma once

#include <map>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_node.hpp"

namespace sp::config {

struct ConfigNode::Impl {
  YAML::Node node;
};

/// Where subtrees came from when it differs from their parent: an included file or a --set.
struct LoadContext {
  std::map<std::string, std::string> origins;
};

inline ConfigNode make_node(const YAML::Node& node, std::shared_ptr<const LoadContext> ctx,
                            std::string path, std::string origin) {
  return ConfigNode(std::make_shared<const ConfigNode::Impl>(ConfigNode::Impl{node}), std::move(ctx),
                    std::move(path), std::move(origin));
}

}  // namespace sp::config
