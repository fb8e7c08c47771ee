// The "flow" fidelity's network: flows share links max-min fairly, with one engine event per
// flow start and end. Every flow moves a number of bytes and loads each link it crosses with a
// weight times its rate (a ring's flow loads a node's NICs once per ring, a protocol that sends
// flags along with data loads its link more per useful byte); optionally a flow has its own rate
// cap. Rates are recomputed by progressive filling whenever a flow starts or ends, and only the
// next completion is kept scheduled.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/core/units.hpp"

namespace sp::models {

class FlowNetwork {
 public:
  struct Use {
    std::size_t link;
    double weight;  // link bytes per flow byte
  };

  explicit FlowNetwork(Engine& engine) : engine_(engine) {}
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  std::size_t add_link(BytesPerSecond capacity);
  /// Starts a flow now; `done` runs when its last byte has moved.
  void start(Bytes bytes, std::vector<Use> uses, std::function<void()> done,
             std::optional<BytesPerSecond> cap = std::nullopt);

  std::size_t active() const { return flows_.size(); }
  /// The current rate of every active flow, in start order (for tests).
  std::vector<double> rates() const;
  /// Bytes a link has carried so far (its flows' bytes times their weights on it).
  double carried(std::size_t link) const;
  BytesPerSecond capacity(std::size_t link) const { return BytesPerSecond(capacity_.at(link)); }

 private:
  struct Flow {
    double remaining;  // bytes
    std::vector<Use> uses;
    double cap;        // B/s, infinity if none
    double rate = 0;
    std::function<void()> done;
  };
  void advance();
  void reallocate();

  Engine& engine_;
  std::vector<double> capacity_;
  std::vector<double> carried_;  // bytes, per link
  std::vector<Flow> flows_;
  SimTime updated_;
  std::optional<EventId> next_;
};

}  // namespace sp::models
