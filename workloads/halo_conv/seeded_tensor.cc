#include "workloads/halo_conv/seeded_tensor.h"

namespace perflab::halo_conv {
namespace {

/// SplitMix64's finaliser: a bijection on 64 bits that mixes every input bit.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

float seeded_value(uint64_t seed, TensorTag tag, uint64_t index, float scale) {
  const uint64_t stream = mix(seed ^ mix(static_cast<uint64_t>(tag) * 0x9e3779b97f4a7c15ULL));
  const uint64_t bits = mix(stream + index * 0x9e3779b97f4a7c15ULL);
  // The top 24 bits as a float in [0, 1): exact, every value equally likely.
  const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
  return (2.0f * unit - 1.0f) * scale;
}

void fill_planes(kernels::cpu::PlaneView view, const VolumeShape& shape, int64_t first, uint64_t seed,
                 TensorTag tag, float scale) {
  const int64_t plane = shape.height * shape.width;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < shape.batch; ++n) {
    for (int64_t c = 0; c < shape.channels; ++c) {
      for (int64_t p = 0; p < view.planes; ++p) {
        float* out = view.data + n * view.batch_stride + c * view.channel_stride + p * plane;
        const int64_t global = first + p;
        if (global < 0 || global >= shape.depth) {
          for (int64_t i = 0; i < plane; ++i) out[i] = 0.0f;
          continue;
        }
        const auto base = static_cast<uint64_t>(((n * shape.channels + c) * shape.depth + global) * plane);
        for (int64_t i = 0; i < plane; ++i) out[i] = seeded_value(seed, tag, base + static_cast<uint64_t>(i), scale);
      }
    }
  }
}

void fill_dense(float* out, int64_t count, uint64_t seed, TensorTag tag, float scale) {
  for (int64_t i = 0; i < count; ++i) out[i] = seeded_value(seed, tag, static_cast<uint64_t>(i), scale);
}

}  // namespace perflab::halo_conv
