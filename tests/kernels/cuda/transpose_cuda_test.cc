// TransposeMatrices on the GPU against the host's transpose. Tolerance:
// none: the kernel moves bits, so every element must equal its source's
// bits (fp32 and bf16), and the bytes between the matrices' destinations
// keep their sentinel.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/transpose.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

/// Transposes `shapes` (packed one after another in a source buffer, with a
/// gap of `gap` elements after each destination) in launches of up to
/// kMaxTransposeMatrices, and compares every destination element and gap.
template <typename T>
void expect_transposed(const std::vector<std::pair<int64_t, int64_t>>& shapes, uint64_t seed) {
  constexpr int64_t gap = 5;
  constexpr T sentinel = static_cast<T>(0xA5A5A5A5u);
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const auto& [rows, cols] : shapes) {
    offsets.push_back(total);
    total += rows * cols + gap;
  }
  std::vector<T> src(static_cast<size_t>(total));
  std::mt19937_64 rng(seed);
  for (T& v : src) v = static_cast<T>(rng());
  std::vector<T> expected(static_cast<size_t>(total), sentinel);
  for (size_t m = 0; m < shapes.size(); ++m) {
    const auto [rows, cols] = shapes[m];
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        expected[static_cast<size_t>(offsets[m] + c * rows + r)] = src[static_cast<size_t>(offsets[m] + r * cols + c)];
      }
    }
  }
  DeviceBuffer<T> d_src(src), d_dst(std::vector<T>(static_cast<size_t>(total), sentinel));
  std::vector<TransposeMatrix> list;
  for (size_t m = 0; m < shapes.size(); ++m) {
    list.push_back({d_src.data() + offsets[m], d_dst.data() + offsets[m], shapes[m].first, shapes[m].second});
  }
  for (const TransposeBatch& b : transpose_batches(list, static_cast<int>(sizeof(T)))) {
    ASSERT_TRUE(TransposeMatrices::can_implement(b).ok()) << TransposeMatrices::can_implement(b).reason();
    TransposeMatrices::run(b, nullptr);
  }
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<T> actual = d_dst.download();
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i], expected[i]) << "element " << i << " of " << total << " (" << sizeof(T) << "-byte elements)";
  }
}

TEST(TransposeCuda, Fp32MatricesInOneLaunchGiveTheSameBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  expect_transposed<uint32_t>({{1, 1}, {33, 65}, {1024, 480}, {7, 129}, {128, 256}}, 1);
}

TEST(TransposeCuda, Bf16MatricesGiveTheSameBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  expect_transposed<uint16_t>({{2, 3}, {64, 33}, {100, 100}, {1, 257}}, 2);
}

TEST(TransposeCuda, MoreMatricesThanALaunchHoldTakeSeveralLaunches) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int m = 0; m < kMaxTransposeMatrices + 4; ++m) shapes.emplace_back(3 + 5 * m, 37 - m);
  expect_transposed<uint32_t>(shapes, 3);
}

}  // namespace
}  // namespace perflab::kernels::cuda
