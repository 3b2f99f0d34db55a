// Counter-based random numbers: value `index` of stream `stream` under
// `seed` is a pure function of the three, so any host thread, in any order,
// makes the same numbers, and a GPU thread the same to within the device's
// math (below): the arithmetic is plain 64-bit integer and double math, and
// each function is PERFLAB_HOST_DEVICE. Inputs generated in parallel equal inputs generated
// serially, whatever the thread count, and a CPU reference can regenerate
// any element of a device's inputs. On the device the uniform draws are
// bit-identical; the normal values go through the device's double log, sqrt,
// sin and cos (within 2 double ulps of the host's, CUDA's documented
// bounds), so a value rounded to float differs from the host's by at most one
// float ulp, and only where the double lands next to a rounding boundary.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace perflab {

/// SplitMix64's finaliser: a bijection on 64 bits with full avalanche.
PERFLAB_HOST_DEVICE constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// 64 random bits for (seed, stream, index).
PERFLAB_HOST_DEVICE constexpr uint64_t counter_bits(uint64_t seed, uint64_t stream, uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) + index);
}

/// Uniform in [0, 1), 53 random bits.
PERFLAB_HOST_DEVICE inline double counter_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(counter_bits(seed, stream, index) >> 11) * 0x1.0p-53;
}

/// Two independent standard normals, values 2*pair and 2*pair + 1 of the
/// stream: Box-Muller on the draws 2*pair and 2*pair + 1 (u1 in (0, 1], so
/// the logarithm is finite), its cosine and sine halves.
struct NormalPair {
  double first, second;
};
PERFLAB_HOST_DEVICE inline NormalPair counter_normal_pair(uint64_t seed, uint64_t stream, uint64_t pair) {
  const double u1 = static_cast<double>((counter_bits(seed, stream, 2 * pair) >> 11) + 1) * 0x1.0p-53;
  const double u2 = counter_uniform(seed, stream, 2 * pair + 1);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
#if defined(__CUDA_ARCH__)
  const double r = ::sqrt(-2.0 * ::log(u1));
  return {r * ::cos(kTwoPi * u2), r * ::sin(kTwoPi * u2)};
#else
  const double r = std::sqrt(-2.0 * std::log(u1));
  return {r * std::cos(kTwoPi * u2), r * std::sin(kTwoPi * u2)};
#endif
}

/// Standard normal value `index` of the stream (one half of its pair).
PERFLAB_HOST_DEVICE inline double counter_normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const NormalPair p = counter_normal_pair(seed, stream, index / 2);
  return index % 2 == 0 ? p.first : p.second;
}

/// What a seeded tensor holds: N(0, 1), or U(-1, 1) (2u - 1).
enum class CounterDistribution { kNormal, kSymmetricUniform };

/// Value `index` of a tensor of distribution `d` drawn from (seed, stream):
/// the one definition the host's parallel fills and the device's fill
/// (kernels/cuda/counter_fill.h) both compute.
PERFLAB_HOST_DEVICE inline double counter_value(CounterDistribution d, uint64_t seed, uint64_t stream,
                                                uint64_t index) {
  return d == CounterDistribution::kNormal ? counter_normal(seed, stream, index)
                                           : 2.0 * counter_uniform(seed, stream, index) - 1.0;
}

}  // namespace perflab
