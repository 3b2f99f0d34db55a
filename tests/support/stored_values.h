// Test buffers of values stored in fp32 or bf16 on the device: the values
// rounded as the device holds them (so a CPU reference reads the same
// numbers), their bytes uploaded, and a device buffer read back widened.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/half_precision.h"

namespace perflab::test_support {

/// Rounds `values` in place to what the device will hold (bf16: nearest
/// even) and returns a device copy of their bytes.
inline kernels::cuda::DeviceBuffer<uint8_t> upload_stored(std::vector<float>& values, bool bf16) {
  if (!bf16) {
    std::vector<uint8_t> bytes(sizeof(float) * std::max<size_t>(values.size(), 1));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), sizeof(float) * values.size());
    return kernels::cuda::DeviceBuffer<uint8_t>(bytes);
  }
  std::vector<uint16_t> bits(std::max<size_t>(values.size(), 1));
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = to_bf16(values[i]);
    values[i] = from_bf16(bits[i]);
  }
  std::vector<uint8_t> bytes(sizeof(uint16_t) * bits.size());
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  return kernels::cuda::DeviceBuffer<uint8_t>(bytes);
}

/// The first `n` values of a device buffer of fp32 or bf16, widened.
inline std::vector<float> download_stored(const kernels::cuda::DeviceBuffer<uint8_t>& buffer, size_t n, bool bf16) {
  const std::vector<uint8_t> bytes = buffer.download();
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (bf16) {
      uint16_t h = 0;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = from_bf16(h);
    } else {
      std::memcpy(&out[i], bytes.data() + 4 * i, 4);
    }
  }
  return out;
}

}  // namespace perflab::test_support
