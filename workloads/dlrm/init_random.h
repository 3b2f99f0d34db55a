// The DLRM model's seeded initial values, one definition for the host
// (CpuModel, model.cc) and the device (CudaModel draws its embedding tables
// where they live: cuda_convert.cu's fill_embedding_table). Every parameter
// element is a pure function of (seed, its tensor's stream, its index), so
// the initial model depends on neither thread count nor fill order, nor on
// the standard library's distributions (whose output is
// implementation-defined).
//
// The tables' uniform values are the same bits on both sides: the hash is
// integer arithmetic; the double steps are each one IEEE operation rounded
// to nearest (a 53-bit integer to double is exact; + 0.5 and the scaling by
// 2^-53 round the same everywhere; 2u is exact, so 2u - 1 is one rounding
// whether or not the compiler fuses it into an FMA); then one product and
// the rounding to float.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace perflab::dlrm::init_random {

inline constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

/// Streams: one per tensor, so adding a layer does not shift the others.
inline constexpr uint64_t kBottomStream = 1ULL << 32;
inline constexpr uint64_t kTopStream = 2ULL << 32;
inline constexpr uint64_t kTableStream = 3ULL << 32;
inline constexpr uint64_t kRoundingStream = 4ULL << 32;  // bf16's stochastic rounding

/// The splitmix64 finaliser: a bijective, well-mixing 64-bit hash.
PERFLAB_HOST_DEVICE constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Uniform in (0, 1], from 53 random bits (1 only for the largest draw,
/// whose + 0.5 rounds up to 2^53).
PERFLAB_HOST_DEVICE inline double uniform01(uint64_t key, uint64_t index) {
  const uint64_t bits = mix64(key + (index + 1) * kGolden) >> 11;
  return (static_cast<double>(bits) + 0.5) * 0x1.0p-53;
}

PERFLAB_HOST_DEVICE constexpr uint64_t stream_key(uint64_t seed, uint64_t stream) { return mix64(seed ^ mix64(stream)); }

/// Embedding table `table`'s key under `seed`.
inline uint64_t table_key(uint64_t seed, int table) { return stream_key(seed, kTableStream + static_cast<uint64_t>(table)); }

/// A table of `rows` rows holds U(-bound, bound): bound = sqrt(1 / rows).
inline double table_bound(int64_t rows) { return std::sqrt(1.0 / static_cast<double>(rows)); }

/// Value `index` (row-major, row * dim + column) of a table with this key and bound.
PERFLAB_HOST_DEVICE inline float table_value(uint64_t key, double bound, uint64_t index) {
  return static_cast<float>(bound * (2.0 * uniform01(key, index) - 1.0));
}

}  // namespace perflab::dlrm::init_random
