// weir::gateway::parked_allocator — the allocator for the operations an idle connection keeps
// pending for its whole life (the wait for readability, the keep-alive timer). Asio otherwise
// takes their memory from its per-thread recycling cache, which hands out whatever block the
// thread freed last: a parked wait then holds the 616 B block of a finished HTTP read where it
// needs about 150 B, on every idle connection (measured with heaptrack, docs/performance.md).
// Bound with asio::bind_allocator, an operation gets a block of its own size instead.
// Internal to gateway/.
#pragma once

#include <cstddef>
#include <new>

namespace weir::gateway {

template <class T>
struct parked_allocator {
  using value_type = T;

  parked_allocator() noexcept = default;
  template <class U>
  parked_allocator(const parked_allocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p); }

  template <class U>
  bool operator==(const parked_allocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace weir::gateway
