// An allocator adaptor under which a container's value-initialisation
// (std::vector<T>::resize(n), vector(n)) leaves trivially constructible
// elements uninitialised. For large buffers that a parallel loop fills
// right after: their pages are then first touched, and zeroed by the
// kernel, on the threads that write them, instead of by one thread's
// memset before the fill.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace perflab {

template <typename T, typename A = std::allocator<T>>
class DefaultInitAllocator : public A {
  using Traits = std::allocator_traits<A>;

 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };

  using A::A;

  /// Default-initialisation: no zeroing for trivial types.
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    Traits::construct(static_cast<A&>(*this), p, std::forward<Args>(args)...);
  }
};

}  // namespace perflab
