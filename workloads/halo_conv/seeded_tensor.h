// The run's tensors, drawn from the seed so that any process can produce
// any part of them without the rest: element i of tensor `tag` is a hash of
// (seed, tag, i) mapped to [-scale, scale). Each rank fills only its slabs,
// and the gate refills whatever region of the whole volume it compares with.
#pragma once

#include <cstdint>

#include "kernels/cpu/conv3d.h"

namespace perflab::halo_conv {

/// Which tensor: separate streams of the same seed.
enum class TensorTag : uint64_t { kInput = 1, kWeight = 2, kOutputGrad = 3 };

/// Shape of a whole NCDHW tensor.
struct VolumeShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t depth = 1;
  int64_t height = 1;
  int64_t width = 1;
};

/// Element `index` of tensor `tag` in [-scale, scale).
float seeded_value(uint64_t seed, TensorTag tag, uint64_t index, float scale);

/// Planes [first, first + view.planes) of the whole tensor `shape` into `view`
/// (planes outside [0, depth) are written as zeros).
void fill_planes(kernels::cpu::PlaneView view, const VolumeShape& shape, int64_t first, uint64_t seed,
                 TensorTag tag, float scale);

/// `count` dense values of tensor `tag` (the weights).
void fill_dense(float* out, int64_t count, uint64_t seed, TensorTag tag, float scale);

}  // namespace perflab::halo_conv
