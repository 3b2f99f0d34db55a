// bfloat16 on the host for tests: round to nearest even and back, so a test
// can give the CPU reference exactly the values a bf16 kernel reads.
#pragma once

#include <cstdint>
#include <cstring>

namespace perflab::test_support {

/// The bf16 bits of `f`, rounded to nearest even (finite inputs).
inline uint16_t to_bf16(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The float a bf16 value stands for (exact).
inline float from_bf16(uint16_t h) {
  const uint32_t u = uint32_t{h} << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace perflab::test_support
