// A move-only callable for engine events. Captures up to 48 bytes live inside the object, so
// scheduling a typical event (a pointer and a few indices) never allocates; larger callables go
// to the heap. std::function would copy-construct and usually allocate beyond 16 bytes.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace sp {

class Action {
 public:
  Action() = default;
  Action(std::nullptr_t) {}  // NOLINT: an empty action, as with std::function

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Action> &&
                                              std::is_invocable_r_v<void, std::decay_t<F>&>>>
  Action(F&& f) {  // NOLINT: implicit, like std::function
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInline && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      ::new (static_cast<void*>(buf_)) Fn(std::forward<F>(f));
      ops_ = &inline_ops<Fn>;
    } else {
      *reinterpret_cast<Fn**>(buf_) = new Fn(std::forward<F>(f));
      ops_ = &heap_ops<Fn>;
    }
  }

  Action(Action&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->move(buf_, o.buf_);
    o.ops_ = nullptr;
  }
  Action& operator=(Action&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) ops_->move(buf_, o.buf_);
      o.ops_ = nullptr;
    }
    return *this;
  }
  Action(const Action&) = delete;
  Action& operator=(const Action&) = delete;
  ~Action() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(buf_); }
  void reset() {
    if (ops_) ops_->destroy(buf_);
    ops_ = nullptr;
  }

 private:
  static constexpr std::size_t kInline = 48;
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* dst, void* src);  // move-construct dst from src, then destroy src
    void (*destroy)(void*);
  };
  template <class Fn>
  static constexpr Ops inline_ops = {
      [](void* p) { (*static_cast<Fn*>(p))(); },
      [](void* dst, void* src) {
        ::new (dst) Fn(std::move(*static_cast<Fn*>(src)));
        static_cast<Fn*>(src)->~Fn();
      },
      [](void* p) { static_cast<Fn*>(p)->~Fn(); }};
  template <class Fn>
  static constexpr Ops heap_ops = {
      [](void* p) { (**static_cast<Fn**>(p))(); },
      [](void* dst, void* src) { *static_cast<Fn**>(dst) = *static_cast<Fn**>(src); },
      [](void* p) { delete *static_cast<Fn**>(p); }};

  alignas(std::max_align_t) unsigned char buf_[kInline];
  const Ops* ops_ = nullptr;
};

}  // namespace sp
