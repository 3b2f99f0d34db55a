// Half-precision values on the host: bf16 and IEEE fp16 bits, rounded to
// nearest even, and back (exact). Tests use them to give a CPU reference
// exactly the values a bf16 or fp16 kernel reads; the MPI communicator uses
// them to reduce fp16 and bf16 buffers, which MPI has no type for; the halo
// layer and its tests to fill and read back bf16 device buffers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace perflab {

/// The bf16 bits of `x`, rounded to nearest even (NaN stays NaN).
inline uint16_t to_bf16(float x) {
  if (std::isnan(x)) return 0x7FC0;
  uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/// The float a bf16 value stands for (exact).
inline float from_bf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x = 0;
  std::memcpy(&x, &bits, 4);
  return x;
}

/// The IEEE fp16 bits of `x`, rounded to nearest even (overflow to inf, subnormals kept).
inline uint16_t to_fp16(float x) {
  if (std::isnan(x)) return 0x7E00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7C00);  // rounds to inf
  if (a < std::ldexp(1.0, -14)) {  // subnormal: multiples of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24))));
  }
  int e = 0;
  const double fraction = std::frexp(a, &e);  // a = fraction * 2^e, fraction in [0.5, 1)
  int exponent = e - 1 + 15;
  int mantissa = static_cast<int>(std::nearbyint((2 * fraction - 1) * 1024));
  if (mantissa == 1024) {
    mantissa = 0;
    ++exponent;
  }
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  return static_cast<uint16_t>(sign | (exponent << 10) | mantissa);
}

/// The float an fp16 value stands for (exact).
inline float from_fp16(uint16_t h) {
  const int exponent = (h >> 10) & 31;
  const int mantissa = h & 1023;
  double value = 0;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return static_cast<float>((h & 0x8000) ? -value : value);
}

/// Host floats as a device stores them: the same floats (T = float) or
/// their nearest bf16 bits (T = uint16_t).
template <typename T>
std::vector<T> stored_as(const std::vector<float>& v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, uint16_t>, "float or bf16 bits");
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    std::vector<T> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = to_bf16(v[i]);
    return out;
  }
}

/// The floats stored values stand for (exact): stored_as's inverse on its values.
template <typename T>
std::vector<float> widened_from(const std::vector<T>& v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, uint16_t>, "float or bf16 bits");
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = from_bf16(v[i]);
    return out;
  }
}
}  // namespace perflab
