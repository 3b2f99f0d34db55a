// Aligned vector access to tensors stored in fp32 or bf16: kVec elements of
// T in one access (kVec * sizeof(T) bytes: 16 on the vector paths, one
// element otherwise), widened to fp32 as they are loaded and rounded to
// nearest even as they are stored; and the host-side choice of the 16-byte
// width (vector_width). Shared by the bias/activation passes (bias_act.cu),
// the 3D convolution's plane copies (conv3d_planes.cu) and the CUDA-core
// interaction backward's stores (interaction.cu: four elements, 16 bytes in
// fp32 and 8 in bf16). Included by .cu files only.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <initializer_list>

#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {

/// kVec elements of T in one aligned access (16 bytes for the vector paths).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Group {
  T e[kVec];
};

template <typename T, int kVec>
__device__ __forceinline__ void load_group(const T* p, float (&v)[kVec]) {
  const Group<T, kVec> g = *reinterpret_cast<const Group<T, kVec>*>(p);
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = widen(g.e[k]);
}

template <typename T, int kVec>
__device__ __forceinline__ void store_group(T* p, const float (&v)[kVec]) {
  Group<T, kVec> g;
#pragma unroll
  for (int k = 0; k < kVec; ++k) put(g.e, k, v[k]);
  *reinterpret_cast<Group<T, kVec>*>(p) = g;
}

/// Elements per 16-byte access for T, or 1 when `count` (the elements each
/// vector row spans: columns, or a plane's pixels and its strides) is not a
/// multiple of them or a non-null pointer is not 16-byte aligned.
template <typename T>
int vector_width(int64_t count, std::initializer_list<const void*> pointers) {
  constexpr int kWide = static_cast<int>(16 / sizeof(T));
  if (count % kWide != 0) return 1;
  for (const void* p : pointers) {
    if (p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 != 0) return 1;
  }
  return kWide;
}

}  // namespace perflab::kernels::cuda
