// Independent tasks spread over the cores: f(k) for every k in [0, n), on up to 16 threads (the
// calling one included). Each task must write only its own slot, so results do not depend on the
// thread count; the first exception stops handing out tasks and is rethrown once all have joined.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sp {

inline void parallel_for(std::size_t n, const std::function<void(std::size_t)>& f) {
  std::atomic<std::size_t> next{0};
  std::mutex lock;
  std::exception_ptr failure;
  const auto work = [&] {
    for (std::size_t k = next++; k < n; k = next++) {
      try {
        f(k);
      } catch (...) {
        const std::lock_guard<std::mutex> g(lock);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sp
