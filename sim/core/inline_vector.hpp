// A vector that holds its first N elements inline and only beyond them on the heap: a step graph
// has hundreds of thousands of operations, nearly all waiting for one to three others, and one
// heap block each for those lists was a fifth of the time to build and play a graph.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

namespace sp {

template <class T, std::size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are copied as bytes");
  static_assert(N > 0, "a vector that grows by doubling needs room for one inline");

 public:
  InlineVector() = default;
  InlineVector(std::initializer_list<T> values) { append(values.begin(), values.end()); }
  InlineVector(const std::vector<T>& values) { append(values.begin(), values.end()); }  // NOLINT: implicit
  InlineVector(const InlineVector& other) { append(other.begin(), other.end()); }
  InlineVector(InlineVector&& other) noexcept { take(other); }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) {
      size_ = 0;
      append(other.begin(), other.end());
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& other) noexcept {
    if (this != &other) take(other);
    return *this;
  }
  ~InlineVector() = default;

  void push_back(T value) {
    if (size_ == capacity()) grow(2 * capacity());
    data()[size_++] = value;
  }
  void clear() { size_ = 0; }

  T* data() { return heap_ ? heap_.get() : inline_.data(); }
  const T* data() const { return heap_ ? heap_.get() : inline_.data(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return heap_ ? heap_capacity_ : N; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  friend bool operator==(const InlineVector& a, const InlineVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  template <class It>
  void append(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    if (size_ + n > capacity()) grow(std::max(size_ + n, 2 * capacity()));
    std::copy(first, last, data() + size_);
    size_ += n;
  }
  void grow(std::size_t capacity) {
    auto bigger = std::make_unique<T[]>(capacity);
    std::copy(begin(), end(), bigger.get());
    heap_ = std::move(bigger);
    heap_capacity_ = capacity;
  }
  // Moves `other`'s elements here (its heap block, where it has one) and leaves it empty.
  void take(InlineVector& other) {
    heap_ = std::move(other.heap_);
    heap_capacity_ = other.heap_capacity_;
    if (!heap_) std::copy(other.inline_.begin(), other.inline_.begin() + other.size_, inline_.begin());
    size_ = other.size_;
    other.size_ = 0;
  }

  std::array<T, N> inline_{};
  std::unique_ptr<T[]> heap_;
  std::size_t heap_capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace sp
