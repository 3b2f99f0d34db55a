// Numbers from JSON documents perflab did not necessarily write (results
// edited by hand, from another version, or damaged): converted to a C++ type
// only when the type holds the value, never through a cast that is undefined
// (1e300 to int) or silently wraps (4294967298 to int is 2).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace perflab {

/// `v` as T when `v` is a number T holds exactly: for an integer type, an
/// integer (or an integral float such as 3.0) within T's range; for double,
/// any number. Empty for anything else (not a number, out of range, 2.5 for
/// an integer type).
template <typename T>
std::optional<T> json_number(const nlohmann::json& v) {
  static_assert(std::is_same_v<T, double> || (std::is_integral_v<T> && !std::is_same_v<T, bool>),
                "json_number reads double or an integer type");
  if (!v.is_number()) return std::nullopt;
  if constexpr (std::is_same_v<T, double>) {
    return v.get<double>();
  } else {
    using limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(limits::max())) return std::nullopt;
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      if constexpr (std::is_signed_v<T>) {
        if (i < static_cast<int64_t>(limits::min()) || i > static_cast<int64_t>(limits::max())) return std::nullopt;
      } else {
        if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(limits::max())) return std::nullopt;
      }
      return static_cast<T>(i);
    }
    // A float: integral and inside [min, max], compared in double where both
    // ends are exact (min is -2^digits or 0; max + 1 is 2^digits).
    const double d = v.get<double>();
    const double end = std::ldexp(1.0, limits::digits);
    const double begin = std::is_signed_v<T> ? -end : 0.0;
    if (!std::isfinite(d) || d != std::trunc(d) || d < begin || d >= end) return std::nullopt;
    return static_cast<T>(d);
  }
}

}  // namespace perflab
