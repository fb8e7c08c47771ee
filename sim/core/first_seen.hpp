// The distinct values of a sequence in the order they first appear: every table and plot gives
// one group and one colour per benchmark, in the order of its input.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace sp {

/// The distinct key(item) of `items`, first appearance first.
template <class Range, class Key = std::identity>
std::vector<std::string> first_seen(const Range& items, Key key = {}) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::string value = std::invoke(key, item);
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(std::move(value));
  }
  return out;
}

}  // namespace sp
