#include "sim/core/engine.hpp"

#include <stdexcept>

namespace sp {

std::size_t Engine::TimeIndex::home(std::int64_t t) const {
  // Fibonacci hashing: event times share large power-of-two factors (durations rounded to ns or
  // us), so masking their low bits would cluster; the multiply mixes every bit into the top
  // log2(table size) bits kept.
  return static_cast<std::size_t>((static_cast<std::uint64_t>(t) * 0x9E3779B97F4A7C15ull) >> shift_);
}

const std::uint32_t* Engine::TimeIndex::find(std::int64_t t) const {
  if (table_.empty()) return nullptr;
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = home(t);; i = (i + 1) & mask) {
    const Entry& e = table_[i];
    if (!e.used) return nullptr;
    if (e.time == t) return &e.bucket;
  }
}

void Engine::TimeIndex::grow() {
  std::vector<Entry> old = std::move(table_);
  table_.assign(old.empty() ? 64 : 2 * old.size(), Entry{});
  shift_ = 64;
  for (std::size_t n = table_.size(); n > 1; n >>= 1) --shift_;
  size_ = 0;
  for (const Entry& e : old) {
    if (e.used) insert(e.time, e.bucket);
  }
}

void Engine::TimeIndex::insert(std::int64_t t, std::uint32_t bucket) {
  if (2 * (size_ + 1) > table_.size()) grow();  // load at most 1/2: short probes
  const std::size_t mask = table_.size() - 1;
  std::size_t i = home(t);
  while (table_[i].used) i = (i + 1) & mask;
  table_[i] = Entry{t, bucket, true};
  ++size_;
}

void Engine::TimeIndex::erase(std::int64_t t) {
  if (table_.empty()) return;
  const std::size_t mask = table_.size() - 1;
  std::size_t i = home(t);
  while (table_[i].used && table_[i].time != t) i = (i + 1) & mask;
  if (!table_[i].used) return;
  // Backward shift: pull later entries of the run into the hole where their probe allows, so that
  // no lookup meets an empty slot before its key.
  for (std::size_t j = (i + 1) & mask; table_[j].used; j = (j + 1) & mask) {
    const std::size_t h = home(table_[j].time);
    if (((j - h) & mask) >= ((j - i) & mask)) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i] = Entry{};
  --size_;
}

std::uint32_t Engine::bucket_for(std::int64_t t) {
  if (t == cached_time_) return cached_bucket_;
  std::uint32_t b;
  if (const std::uint32_t* found = open_.find(t)) {
    b = *found;
  } else {
    if (free_buckets_.empty()) {
      b = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    } else {
      b = free_buckets_.back();
      free_buckets_.pop_back();
    }
    buckets_[b].time_ps = t;
    buckets_[b].slots.clear();
    buckets_[b].next = 0;
    open_.insert(t, b);
    heap_push(b);
  }
  cached_time_ = t;
  cached_bucket_ = b;
  return b;
}

EventId Engine::schedule_at(SimTime when, Action action) {
  if (when < now_) throw std::logic_error("Engine::schedule_at: event in the past");
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
  buckets_[bucket_for(when.ps())].slots.push_back(slot);
  ++live_;
  return EventId{slot, s.generation};
}

bool Engine::cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (!s.live || s.generation != id.generation) return false;
  // The bucket keeps the slot number; it is skipped, and freed, when its turn comes.
  s.live = false;
  s.action.reset();
  --live_;
  return true;
}

void Engine::free_slot(std::uint32_t slot) {
  ++slots_[slot].generation;
  free_slots_.push_back(slot);
}

void Engine::heap_push(std::uint32_t b) {
  std::size_t i = heap_.size();
  heap_.push_back(b);
  const std::int64_t t = buckets_[b].time_ps;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (buckets_[heap_[parent]].time_ps <= t) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = b;
}

void Engine::heap_pop() {
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  const std::int64_t t = buckets_[last].time_ps;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (buckets_[heap_[c]].time_ps < buckets_[heap_[best]].time_ps) best = c;
    }
    if (t <= buckets_[heap_[best]].time_ps) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

Engine::Bucket* Engine::next_bucket() {
  while (!heap_.empty()) {
    const std::uint32_t b = heap_.front();
    Bucket& bucket = buckets_[b];
    while (bucket.next < bucket.slots.size() && !slots_[bucket.slots[bucket.next]].live) {
      free_slot(bucket.slots[bucket.next++]);
    }
    if (bucket.next < bucket.slots.size()) return &bucket;
    // Spent: nothing more can join it, since its time is not in the future of anything pending.
    open_.erase(bucket.time_ps);
    if (cached_time_ == bucket.time_ps) cached_time_ = -1;
    heap_pop();
    free_buckets_.push_back(b);
  }
  return nullptr;
}

bool Engine::step() {
  Bucket* bucket = next_bucket();
  if (bucket == nullptr) return false;
  const std::uint32_t slot = bucket->slots[bucket->next++];
  Slot& s = slots_[slot];
  Action action = std::move(s.action);
  s.live = false;
  free_slot(slot);
  --live_;
  now_ = SimTime::from_ps(bucket->time_ps);
  ++processed_;
  action();  // may schedule (even at now) or cancel events; `bucket` may move
  return true;
}

void Engine::run() {
  while (step()) {
  }
}

bool Engine::idle_through(SimTime t) {
  const Bucket* b = next_bucket();
  return b == nullptr || b->time_ps > t.ps();
}

void Engine::advance_to(SimTime t) {
  if (t < now_) throw std::logic_error("Engine::advance_to: time in the past");
  if (!idle_through(t)) throw std::logic_error("Engine::advance_to: an event is due first");
  now_ = t;
}

void Engine::run_until(SimTime limit) {
  for (Bucket* b = next_bucket(); b != nullptr && b->time_ps <= limit.ps(); b = next_bucket()) step();
  if (now_ < limit) now_ = limit;
}

}  // namespace sp
