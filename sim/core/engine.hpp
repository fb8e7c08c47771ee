// The discrete-event engine: a value (no globals, any number per process) holding simulated
// time and a queue of pending actions. Events run in (time, insertion sequence) order, so two
// events at the same picosecond always run in the order they were scheduled.
//
// Simulations of identical ranks schedule many events for the very same picosecond, so the
// queue holds one FIFO bucket per distinct time and a 4-ary heap of those times: an event costs
// an append and a read, and the heap only sees distinct times.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/action.hpp"
#include "sim/core/time.hpp"

namespace sp {

/// Handle to a scheduled event, valid until it runs or is cancelled.
struct EventId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

class Engine {
 public:
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
  /// Whether no pending event is due at or before `t`. An event scheduled now for `t` would then
  /// be the next to run (one already due at `t` runs first: it was scheduled earlier).
  bool idle_through(SimTime t);
  /// Moves now() to `t` without running anything, for a model that carries out its own chain of
  /// deterministic steps where nothing could come between; `t` before now() or a pending event
  /// due at or before `t` throws std::logic_error.
  void advance_to(SimTime t);

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }

 private:
  struct Slot {
    Action action;
    std::uint32_t generation = 0;
    bool live = false;
  };
  struct Bucket {
    std::int64_t time_ps = 0;
    std::vector<std::uint32_t> slots;  // in scheduling order
    std::size_t next = 0;              // first not yet dispatched
  };
  std::uint32_t bucket_for(std::int64_t time_ps);
  void heap_push(std::uint32_t bucket);
  void heap_pop();
  /// The bucket holding the next live event, or nullptr; drops spent buckets and cancelled slots.
  Bucket* next_bucket();
  void free_slot(std::uint32_t slot);

  SimTime now_;
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  std::vector<std::uint32_t> heap_;  // bucket ids, min-heap on time
  /// Time -> open bucket, open addressing with linear probing and backward-shift erase: one
  /// lookup, insert and erase per distinct event time, without the node std::unordered_map
  /// allocated for each (a tenth of a co-location run went to malloc and free).
  class TimeIndex {
   public:
    const std::uint32_t* find(std::int64_t t) const;
    void insert(std::int64_t t, std::uint32_t bucket);  // t must be absent
    void erase(std::int64_t t);                          // no-op when absent
    std::size_t size() const { return size_; }

   private:
    struct Entry {
      std::int64_t time = 0;
      std::uint32_t bucket = 0;
      bool used = false;
    };
    std::size_t home(std::int64_t t) const;
    void grow();
    std::vector<Entry> table_;
    std::size_t size_ = 0;
    int shift_ = 58;  // 64 - log2(table size); set by grow() before any use
  };
  TimeIndex open_;  // lookup only, never iterated: no order to depend on
  std::int64_t cached_time_ = -1;
  std::uint32_t cached_bucket_ = 0;
};

}  // namespace sp
