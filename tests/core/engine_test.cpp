#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/engine.hpp"

namespace sp {

TEST(Engine, RunsEventsInTimeOrder) {
  Engine e;
  std::vector<int> order;
  e.schedule_at(SimTime::zero() + microseconds(30), [&] { order.push_back(3); });
  e.schedule_at(SimTime::zero() + microseconds(10), [&] { order.push_back(1); });
  e.schedule_at(SimTime::zero() + microseconds(20), [&] { order.push_back(2); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(e.now().ps(), microseconds(30).ps());
  EXPECT_EQ(e.events_processed(), 3u);
}

TEST(Engine, SameTimeEventsRunInInsertionOrder) {
  Engine e;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    e.schedule_at(SimTime::zero() + nanoseconds(5), [&order, i] { order.push_back(i); });
  }
  e.run();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(Engine, EventsScheduledByEventsJoinTheQueue) {
  Engine e;
  std::vector<std::string> log;
  e.schedule_after(microseconds(1), [&] {
    log.push_back("a@" + std::to_string(e.now().ps()));
    e.schedule_after(Duration::zero(), [&] { log.push_back("c@" + std::to_string(e.now().ps())); });
  });
  e.schedule_after(microseconds(1), [&] { log.push_back("b@" + std::to_string(e.now().ps())); });
  e.run();
  // c is scheduled at the same time as b but after it, so it runs after b.
  EXPECT_EQ(log, (std::vector<std::string>{"a@1000000", "b@1000000", "c@1000000"}));
}

TEST(Engine, CancelledEventsDoNotRun) {
  Engine e;
  int ran = 0;
  const EventId a = e.schedule_after(microseconds(1), [&] { ran += 1; });
  e.schedule_after(microseconds(2), [&] { ran += 10; });
  EXPECT_TRUE(e.cancel(a));
  EXPECT_FALSE(e.cancel(a));
  EXPECT_EQ(e.pending(), 1u);
  e.run();
  EXPECT_EQ(ran, 10);
  EXPECT_FALSE(e.cancel(a));  // its slot may be reused, the old id stays dead
}

TEST(Engine, RunUntilStopsAtTheLimit) {
  Engine e;
  int ran = 0;
  e.schedule_after(microseconds(1), [&] { ++ran; });
  e.schedule_after(microseconds(5), [&] { ++ran; });
  e.run_until(SimTime::zero() + microseconds(3));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(e.now().ps(), microseconds(3).ps());
  e.run();
  EXPECT_EQ(ran, 2);
}

TEST(Engine, AdvancesOnlyWhereNothingIsDueBeforeOrAtTheTime) {
  // An event due at 5 us: the clock may move to 4 us, not to 5 (the event, scheduled earlier,
  // would run before anything scheduled now for 5), nor back; a cancelled event is not due.
  Engine e;
  int ran = 0;
  e.schedule_after(microseconds(5), [&] { ++ran; });
  const EventId late = e.schedule_after(microseconds(2), [&] { ++ran; });
  EXPECT_FALSE(e.idle_through(SimTime::zero() + microseconds(3)));
  EXPECT_TRUE(e.cancel(late));
  EXPECT_TRUE(e.idle_through(SimTime::zero() + microseconds(4)));
  EXPECT_FALSE(e.idle_through(SimTime::zero() + microseconds(5)));
  e.advance_to(SimTime::zero() + microseconds(4));
  EXPECT_EQ(e.now().ps(), microseconds(4).ps());
  EXPECT_EQ(ran, 0);
  EXPECT_THROW(e.advance_to(SimTime::zero() + microseconds(5)), std::logic_error);
  EXPECT_THROW(e.advance_to(SimTime::zero() + microseconds(3)), std::logic_error);
  // From inside an event, as the goodput run does: the rest of the queue keeps its order.
  std::vector<int> order;
  e.schedule_after(microseconds(1), [&] {
    e.advance_to(e.now() + nanoseconds(500));
    e.schedule_after(Duration{}, [&] { order.push_back(2); });
    order.push_back(1);
  });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(ran, 1);  // the event due at 5 us, before the one scheduled later for 5 us
  EXPECT_EQ(e.now().ps(), nanoseconds(5500).ps());
}

TEST(Engine, SchedulingInThePastIsRejected) {
  Engine e;
  e.schedule_after(microseconds(2), [] {});
  e.run();
  EXPECT_THROW(e.schedule_at(SimTime::zero(), [] {}), std::logic_error);
}

TEST(Engine, EnginesAreIndependentValues) {
  Engine a;
  Engine b;
  int ran_a = 0;
  a.schedule_after(microseconds(1), [&] { ++ran_a; });
  b.schedule_after(microseconds(7), [] {});
  b.run();
  EXPECT_EQ(ran_a, 0);
  EXPECT_EQ(b.now().ps(), microseconds(7).ps());
  EXPECT_EQ(a.now().ps(), 0);
  a.run();
  EXPECT_EQ(ran_a, 1);
}

// A pseudo-random cascade of events gives the same trace on every run.
TEST(Engine, ReplaysIdentically) {
  const auto trace = [] {
    Engine e;
    std::vector<std::int64_t> out;
    std::uint64_t x = 12345;
    std::function<void(int)> spawn = [&](int depth) {
      out.push_back(e.now().ps());
      if (depth == 0) return;
      for (int k = 0; k < 2; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        e.schedule_after(picoseconds(static_cast<std::int64_t>(x >> 54)), [&spawn, depth] { spawn(depth - 1); });
      }
    };
    e.schedule_after(Duration::zero(), [&] { spawn(10); });
    e.run();
    return out;
  };
  const auto first = trace();
  EXPECT_EQ(first.size(), 2047u);
  EXPECT_EQ(first, trace());
}

TEST(Engine, ManyTimesCollidingAndCancelledKeepTheirOrder) {
  // Against a plain reference: every event that was not cancelled runs, in (time, scheduling
  // sequence) order. Times from a small range so that buckets are reused, reopened after they
  // were spent, and the time index grows, probes past collisions and erases inside probe runs;
  // a third of the events schedule another one, some at their own time.
  Engine e;
  std::mt19937_64 rng(7);
  std::vector<std::tuple<std::int64_t, int>> expected;  // (time ps, sequence)
  std::vector<int> ran;
  std::vector<EventId> ids;
  std::vector<bool> cancelled;
  int sequence = 0;
  std::function<void(std::int64_t)> add = [&](std::int64_t t) {
    const int id = sequence++;
    cancelled.push_back(false);
    ids.push_back(e.schedule_at(SimTime::from_ps(t), [&, id, t] {
      ran.push_back(id);
      if (id % 3 == 0 && sequence < 60000) add(t + static_cast<std::int64_t>(rng() % 4) * 1000);
    }));
    expected.emplace_back(t, id);
  };
  for (int i = 0; i < 20000; ++i) add(static_cast<std::int64_t>(rng() % 3000) * 1000);
  for (int i = 0; i < 20000; i += 5) {
    ASSERT_TRUE(e.cancel(ids[static_cast<std::size_t>(i)]));
    cancelled[static_cast<std::size_t>(i)] = true;
  }
  e.run();
  std::vector<int> want;
  std::sort(expected.begin(), expected.end());
  for (const auto& [t, id] : expected) {
    if (!cancelled[static_cast<std::size_t>(id)]) want.push_back(id);
  }
  EXPECT_EQ(ran, want);
  EXPECT_EQ(e.pending(), 0u);
}

}  // namespace sp
