// The discrete-event engine: a value (no globals, any number per process) holding simulated
// time and a queue of pending actions. Events run in (time, insertion sequence) order, so two
// events at the same picosecond always run in the order they were scheduled.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/time.hpp"

namespace sp {

/// Handle to a scheduled event, valid until it runs or is cancelled.
struct EventId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

class Engine {
 public:
  using Action = std::function<void()>;

  SimTime now() const { return now_; }
  /// Schedules `action` at `when`; `when` earlier than now() throws std::logic_error.
  EventId schedule_at(SimTime when, Action action);
  EventId schedule_after(Duration delay, Action action) { return schedule_at(now_ + delay, std::move(action)); }
  /// Cancels a pending event; returns false when it already ran or was cancelled.
  bool cancel(EventId id);

  /// Runs the next pending event; returns false when none is left.
  bool step();
  /// Runs until no event is left.
  void run();
  /// Runs every event with time <= limit, then sets now() to limit.
  void run_until(SimTime limit);

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }

 private:
  struct Entry {
    std::int64_t time_ps;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    Action action;
    std::uint32_t generation = 0;
    bool live = false;
  };
  // Min-heap order on (time, seq): "a after b".
  static bool later(const Entry& a, const Entry& b) {
    return a.time_ps != b.time_ps ? a.time_ps > b.time_ps : a.seq > b.seq;
  }
  void pop_dead();

  SimTime now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace sp
