// Algorithm and protocol choice as NCCL's tuner makes it: predict every allowed combination and
// run the cheapest (anchors.md C.3). Ties go to the earlier algorithm, then protocol, in enum
// order, so the choice is deterministic.
#include <algorithm>

#include "models/collective/collective.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

Selected select_collective(const Platform& platform, const Group& group, CollectiveOp op, Bytes bytes,
                           const CollectiveChoice& choice) {
  std::optional<Selected> best;
  for (Algorithm a : kAlgorithms) {
    if (choice.algorithm ? a != *choice.algorithm
                         : (op != CollectiveOp::all_to_all &&
                            std::find(platform.library_algorithms.begin(), platform.library_algorithms.end(), a) ==
                                platform.library_algorithms.end())) {
      continue;
    }
    for (Protocol p : kProtocols) {
      if (choice.protocol && p != *choice.protocol) continue;
      const std::optional<CostTerms> terms = cost_terms(platform, group, op, a, p);
      if (!terms) continue;
      const Duration t = terms->time(bytes);
      if (!best || t < best->time) best = Selected{*terms, t};
    }
  }
  if (!best) {
    std::string what = std::string(op_name(op)) + " over " + std::to_string(group.ranks()) + " ranks";
    if (choice.algorithm) what += std::string(" with ") + algorithm_name(*choice.algorithm);
    if (choice.protocol) what += std::string(" and ") + protocol_name(*choice.protocol);
    throw ModelError("no algorithm applies to " + what + " on platform '" + platform.name + "'");
  }
  return *best;
}

}  // namespace sp::models
