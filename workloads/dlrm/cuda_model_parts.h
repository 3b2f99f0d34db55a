// Private to CudaModel's source files (cuda_model.cc, cuda_model_arguments.cc,
// cuda_model_readback.cc): the Layer it builds its MLPs from and two small
// helpers they share. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/linear.h"
#include "workloads/dlrm/cuda_model.h"

namespace perflab::dlrm {

/// One Linear layer with its planned GEMMs and its own activations.
struct CudaModel::Layer {
  kernels::cuda::LinearArguments args;  ///< Shape, modes and every pointer fixed at construction.
  std::unique_ptr<kernels::cuda::Linear> linear;  ///< Null for the fused head (CudaModel::fused_head_).
  kernels::cuda::DeviceBuffer<uint8_t> y, dy, aux;  // [B, out] of the layer's element type; ReLU bitmask
  kernels::cuda::DeviceBuffer<uint8_t> dy_t;        // wgrad_reads_dy_t: [out, B], dz transposed
  /// Its weight and bias in the flat dense buffers (DenseLayout::layer).
  DenseRange params;
};

namespace model_parts {

inline size_t count(int64_t n) { return static_cast<size_t>(n); }

/// A bf16 buffer (held as uint16_t) as the kernels' element type.
template <typename T>
T* as(kernels::cuda::DeviceBuffer<uint16_t>& buffer) {
  return reinterpret_cast<T*>(buffer.data());
}

}  // namespace model_parts
}  // namespace perflab::dlrm
