// Shared by the CUDA interaction's tests (interaction_cuda_test.cc: the
// arithmetic against the CPU; interaction_lookup_cuda_test.cc: the lookup
// fused in): problem sizes, how the tensors are stored, and their device
// copies in those types.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/interaction.h"
#include "kernels/half_precision.h"
#include "tests/support/stored_values.h"

namespace perflab::kernels::cuda::interaction_test {

struct Problem {
  int64_t batch;
  int num_tables;
  int64_t dim;
  std::string describe() const {
    std::ostringstream s;
    s << "B=" << batch << " T=" << num_tables << " D=" << dim;
    return s.str();
  }
};

/// How the tensors are stored.
struct Storage {
  InteractionType activations = InteractionType::kFloat32;
  InteractionType embeddings = InteractionType::kFloat32;
  /// The backward's embedding gradient (demb, or demb_bf16).
  InteractionType gradients = InteractionType::kFloat32;
};
constexpr Storage kFp32{};
constexpr Storage kBf16Activations{InteractionType::kBFloat16, InteractionType::kFloat32};
constexpr Storage kBf16{InteractionType::kBFloat16, InteractionType::kBFloat16};
/// A bf16 model on one GPU: the embedding gradient bf16 too.
constexpr Storage kBf16Gradients{InteractionType::kBFloat16, InteractionType::kBFloat16,
                                 InteractionType::kBFloat16};

inline bool is_bf16(InteractionType t) { return t == InteractionType::kBFloat16; }

/// `v` as the device holds it in `type` (rounded to nearest even in bf16).
inline std::vector<float> stored(std::vector<float> v, InteractionType type) {
  if (is_bf16(type)) {
    for (float& x : v) x = from_bf16(to_bf16(x));
  }
  return v;
}

/// A device copy of `v` in `type` (bf16 bits, or floats).
inline DeviceBuffer<uint8_t> upload(std::vector<float> v, InteractionType type) {
  return test_support::upload_stored(v, is_bf16(type));
}

/// `n` values of `type` from the device, widened.
inline std::vector<float> download(const DeviceBuffer<uint8_t>& buffer, size_t n, InteractionType type) {
  return test_support::download_stored(buffer, n, is_bf16(type));
}

/// Arguments every check accepts, every pointer `anything` (can_implement reads none).
inline InteractionArguments valid_arguments(float* anything) {
  InteractionArguments a;
  a.batch = 8;
  a.num_tables = 26;
  a.dim = 128;
  a.x = anything;
  a.emb = anything;
  a.out = anything;
  a.dout = anything;
  a.dx = anything;
  a.demb = anything;
  return a;
}

}  // namespace perflab::kernels::cuda::interaction_test
