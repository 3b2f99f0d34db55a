// Rounding sizes and offsets up to a multiple: workspace carving, padded
// widths, packed blocks. One definition for the host code of every folder.
#pragma once

#include <type_traits>

namespace perflab {

namespace round_up_detail {
template <typename T>
struct Same {
  using type = T;
};
}  // namespace round_up_detail

/// n rounded up to a multiple of `to` (to > 0, n >= 0, n + to - 1 within T);
/// `to` takes n's type (a literal converts).
template <typename T>
constexpr T round_up(T n, typename round_up_detail::Same<T>::type to) {
  static_assert(std::is_integral_v<T>, "round_up: integers only");
  return (n + to - 1) / to * to;
}

}  // namespace perflab
