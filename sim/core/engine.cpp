#include "sim/core/engine.hpp"

#include <algorithm>
#include <stdexcept>

namespace sp {

EventId Engine::schedule_at(SimTime when, Action action) {
  if (when < now_) {
    throw std::logic_error("Engine::schedule_at: event in the past");
  }
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& s = slots_[slot];
  s.action = std::move(action);
  s.live = true;
  heap_.push_back(Entry{when.ps(), next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++live_;
  return EventId{slot, s.generation};
}

bool Engine::cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (!s.live || s.generation != id.generation) return false;
  // The heap entry stays as a tombstone and is skipped when it reaches the top.
  s.live = false;
  s.action = nullptr;
  --live_;
  return true;
}

void Engine::pop_dead() {
  while (!heap_.empty() && !slots_[heap_.front().slot].live) {
    const std::uint32_t slot = heap_.front().slot;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    ++slots_[slot].generation;
    free_slots_.push_back(slot);
  }
}

bool Engine::step() {
  pop_dead();
  if (heap_.empty()) return false;
  const Entry top = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
  Slot& s = slots_[top.slot];
  Action action = std::move(s.action);
  s.action = nullptr;
  s.live = false;
  ++s.generation;
  free_slots_.push_back(top.slot);
  --live_;
  now_ = SimTime::from_ps(top.time_ps);
  ++processed_;
  action();  // may schedule or cancel further events
  return true;
}

void Engine::run() {
  while (step()) {
  }
}

void Engine::run_until(SimTime limit) {
  for (;;) {
    pop_dead();
    if (heap_.empty() || heap_.front().time_ps > limit.ps()) break;
    step();
  }
  if (now_ < limit) now_ = limit;
}

}  // namespace sp
