// The CUDA dense SGD update and fp32 -> bf16 copy against the host.
//
// Tolerance: none. The update rounds the product and then the difference,
// as the CPU's `w -= lr * g` does (CpuModel::apply_gradients), so fp32
// weights match bit for bit; bf16 copies must equal the host's round to
// nearest even of the updated weight.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/sgd.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

/// Round to nearest even, as __float2bfloat16_rn (inputs here are finite).
uint16_t bf16_bits(float value) {
  uint32_t u = 0;
  std::memcpy(&u, &value, sizeof(u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

uint32_t float_bits(float value) {
  uint32_t u = 0;
  std::memcpy(&u, &value, sizeof(u));
  return u;
}

TEST(SgdCudaCanImplement, RejectsBadProblemsWithAReason) {
  // No device needed.
  float anything = 0.0f;
  SgdArguments good;
  good.count = 3;
  good.weights = &anything;
  good.gradients = &anything;
  good.lr_device = &anything;
  EXPECT_TRUE(SgdUpdate::can_implement(good).ok()) << SgdUpdate::can_implement(good).reason();
  EXPECT_EQ(SgdUpdate::workspace_bytes(good), 0u);
  SgdArguments a = good;
  a.count = 0;
  EXPECT_NE(SgdUpdate::can_implement(a).reason().find("count must be at least 1"),
            std::string::npos);
  a = good;
  a.weights = nullptr;
  EXPECT_NE(SgdUpdate::can_implement(a).reason().find("weights is null"), std::string::npos);
  a = good;
  a.gradients = nullptr;
  EXPECT_NE(SgdUpdate::can_implement(a).reason().find("exactly one of gradients and gradients_bf16"),
            std::string::npos);
  a = good;
  a.gradients_bf16 = reinterpret_cast<const __nv_bfloat16*>(&anything);
  EXPECT_NE(SgdUpdate::can_implement(a).reason().find("exactly one of"), std::string::npos) << "both set";
  a.gradients = nullptr;
  EXPECT_TRUE(SgdUpdate::can_implement(a).ok()) << SgdUpdate::can_implement(a).reason();
  a = good;
  a.lr_device = nullptr;
  EXPECT_NE(SgdUpdate::can_implement(a).reason().find("lr_device is null"), std::string::npos);

  CastArguments cast;
  cast.count = 3;
  cast.src = &anything;
  cast.dst = reinterpret_cast<__nv_bfloat16*>(&anything);
  EXPECT_TRUE(CastFloatToBf16::can_implement(cast).ok())
      << CastFloatToBf16::can_implement(cast).reason();
  CastArguments c = cast;
  c.count = -1;
  EXPECT_NE(CastFloatToBf16::can_implement(c).reason().find("count must be at least 1"),
            std::string::npos);
  c = cast;
  c.src = nullptr;
  EXPECT_NE(CastFloatToBf16::can_implement(c).reason().find("src is null"), std::string::npos);
  c = cast;
  c.dst = nullptr;
  EXPECT_NE(CastFloatToBf16::can_implement(c).reason().find("dst is null"), std::string::npos);
  c = cast;
  c.row = 2;  // 3 elements are not rows of 2
  c.dst_stride = 4;
  EXPECT_NE(CastFloatToBf16::can_implement(c).reason().find("not a multiple of row"), std::string::npos);
  c.row = 3;
  c.dst_stride = 2;  // rows of 3 cannot be 2 apart
  EXPECT_NE(CastFloatToBf16::can_implement(c).reason().find("is below row"), std::string::npos);
  c.dst_stride = 3;
  EXPECT_TRUE(CastFloatToBf16::can_implement(c).ok()) << CastFloatToBf16::can_implement(c).reason();
}

TEST(SgdCuda, UpdateMatchesCpuBitForBitWithAndWithoutTheBf16Copy) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int64_t count : {int64_t{1}, int64_t{3}, int64_t{37}, int64_t{2049}, int64_t{1000003}}) {
    // max_blocks 3: a few threads loop over the values (beside a step's chain).
    for (const auto& [with_bf16, max_blocks] :
         std::vector<std::pair<bool, int64_t>>{{false, 0}, {true, 0}, {false, 3}, {true, 3}}) {
      const auto w = test_support::random_vector(static_cast<size_t>(count), 1);
      const auto g = test_support::random_vector(static_cast<size_t>(count), 2, -10.0f, 10.0f);
      const float lr = 0.0375f;
      std::vector<float> expected = w;
      for (size_t i = 0; i < expected.size(); ++i)
        expected[i] -= lr * g[i];  // CpuModel::apply_gradients

      DeviceBuffer<float> d_w(w), d_g(g), d_lr(std::vector<float>{lr});
      DeviceBuffer<uint16_t> d_bf16(static_cast<size_t>(count));
      SgdArguments a;
      a.count = count;
      a.weights = d_w.data();
      a.gradients = d_g.data();
      a.lr_device = d_lr.data();
      if (with_bf16) a.weights_bf16 = reinterpret_cast<__nv_bfloat16*>(d_bf16.data());
      a.max_blocks = max_blocks;
      ASSERT_TRUE(SgdUpdate::can_implement(a).ok()) << SgdUpdate::can_implement(a).reason();
      SgdUpdate::run(a, nullptr, nullptr);
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
      const auto actual = d_w.download();
      for (size_t i = 0; i < actual.size(); ++i) {
        ASSERT_EQ(float_bits(actual[i]), float_bits(expected[i]))
            << "first mismatch at w[" << i << "] (w0 " << w[i] << ", g " << g[i] << ", lr " << lr
            << "): expected " << expected[i] << ", actual " << actual[i] << "; count=" << count
            << ", max_blocks=" << max_blocks;
      }
      if (with_bf16) {
        const auto copy = d_bf16.download();
        for (size_t i = 0; i < copy.size(); ++i) {
          ASSERT_EQ(copy[i], bf16_bits(expected[i]))
              << "first bf16 mismatch at " << i << " (of " << expected[i] << "); count=" << count;
        }
      }
    }
  }
}

// A range off a 16-byte boundary (weights, gradients or the bf16 copy):
// the update goes one value at a time, matches the CPU bit for bit, and
// touches nothing outside its range.
TEST(SgdCuda, UnalignedRangesUpdateValueByValueAndOnlyTheirOwn) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t count = 2049;
  const size_t total = static_cast<size_t>(count) + 8;
  const float lr = 0.0375f;
  const uint16_t untouched = 0x7fc1;  // a bf16 NaN the update never writes
  // (weights' offset, gradients' offset) in floats; the bf16 copy shares the
  // weights'. {4, 4}: aligned again, the four-wide path at an offset.
  for (const auto& [w_off, g_off] : std::vector<std::pair<size_t, size_t>>{{1, 1}, {2, 2}, {3, 3}, {0, 1}, {4, 2}, {4, 4}}) {
    for (bool with_bf16 : {false, true}) {
      const auto w = test_support::random_vector(total, 3);
      const auto g = test_support::random_vector(total, 4, -10.0f, 10.0f);
      std::vector<float> expected = w;
      for (size_t i = 0; i < static_cast<size_t>(count); ++i) expected[w_off + i] -= lr * g[g_off + i];

      DeviceBuffer<float> d_w(w), d_g(g), d_lr(std::vector<float>{lr});
      DeviceBuffer<uint16_t> d_bf16(std::vector<uint16_t>(total, untouched));
      SgdArguments a;
      a.count = count;
      a.weights = d_w.data() + w_off;
      a.gradients = d_g.data() + g_off;
      a.lr_device = d_lr.data();
      if (with_bf16) a.weights_bf16 = reinterpret_cast<__nv_bfloat16*>(d_bf16.data()) + w_off;
      ASSERT_TRUE(SgdUpdate::can_implement(a).ok()) << SgdUpdate::can_implement(a).reason();
      SgdUpdate::run(a, nullptr, nullptr);
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
      const auto actual = d_w.download();
      const auto copy = d_bf16.download();
      for (size_t i = 0; i < total; ++i) {
        ASSERT_EQ(float_bits(actual[i]), float_bits(expected[i]))
            << "w[" << i << "] with weights at +" << w_off << ", gradients at +" << g_off;
        const bool inside = with_bf16 && i >= w_off && i < w_off + static_cast<size_t>(count);
        ASSERT_EQ(copy[i], inside ? bf16_bits(expected[i]) : untouched)
            << "bf16[" << i << "] with weights at +" << w_off << (with_bf16 ? "" : ", no copy asked for");
      }
    }
  }
}

// bf16 gradients (a bf16 model's GEMMs write them so): widened exactly, so
// the update is the CPU's `w -= lr * g` on the widened values, bit for bit.
TEST(SgdCuda, Bf16GradientsUpdateAsTheirWidenedValues) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  // max_blocks 3: as a bf16 model's layer SGD beside the backward, a few threads looping.
  for (const auto& [count, max_blocks] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 0}, {37, 0}, {1000003, 0}, {37, 3}, {1000003, 3}}) {
    const auto w = test_support::random_vector(static_cast<size_t>(count), 4);
    const auto g32 = test_support::random_vector(static_cast<size_t>(count), 5, -10.0f, 10.0f);
    std::vector<uint16_t> g(g32.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = bf16_bits(g32[i]);
    const float lr = 0.0375f;
    std::vector<float> expected = w;
    for (size_t i = 0; i < expected.size(); ++i) {
      const uint32_t bits = static_cast<uint32_t>(g[i]) << 16;
      float widened = 0;
      std::memcpy(&widened, &bits, sizeof(widened));
      expected[i] -= lr * widened;
    }
    DeviceBuffer<float> d_w(w), d_lr(std::vector<float>{lr});
    DeviceBuffer<uint16_t> d_g(g), d_bf16(static_cast<size_t>(count));
    SgdArguments a;
    a.count = count;
    a.weights = d_w.data();
    a.gradients_bf16 = reinterpret_cast<const __nv_bfloat16*>(d_g.data());
    a.lr_device = d_lr.data();
    a.weights_bf16 = reinterpret_cast<__nv_bfloat16*>(d_bf16.data());
    a.max_blocks = max_blocks;
    ASSERT_TRUE(SgdUpdate::can_implement(a).ok()) << SgdUpdate::can_implement(a).reason();
    SgdUpdate::run(a, nullptr, nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto actual = d_w.download();
    const auto copy = d_bf16.download();
    for (size_t i = 0; i < actual.size(); ++i) {
      ASSERT_EQ(float_bits(actual[i]), float_bits(expected[i]))
          << "w[" << i << "], count=" << count << ", max_blocks=" << max_blocks;
      ASSERT_EQ(copy[i], bf16_bits(expected[i])) << "bf16 copy [" << i << "], count=" << count;
    }
  }
}

// Rows of 13 into rows of 16 (DLRM's dense features, padded for the first
// GEMM): each value rounded in its place, the padding left as it was.
TEST(SgdCuda, CastIntoPaddedRowsLeavesThePadding) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr int64_t kRows = 1001, kRow = 13, kStride = 16;
  const auto src = test_support::random_vector(static_cast<size_t>(kRows * kRow), 11, -100.0f, 100.0f);
  DeviceBuffer<float> d_src(src);
  DeviceBuffer<uint16_t> d_dst(std::vector<uint16_t>(static_cast<size_t>(kRows * kStride), 0xBEEF));
  CastArguments a;
  a.count = kRows * kRow;
  a.src = d_src.data();
  a.dst = reinterpret_cast<__nv_bfloat16*>(d_dst.data());
  a.row = kRow;
  a.dst_stride = kStride;
  ASSERT_TRUE(CastFloatToBf16::can_implement(a).ok()) << CastFloatToBf16::can_implement(a).reason();
  CastFloatToBf16::run(a, nullptr, nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto dst = d_dst.download();
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kStride; ++c) {
      const uint16_t got = dst[static_cast<size_t>(r * kStride + c)];
      if (c < kRow) {
        ASSERT_EQ(got, bf16_bits(src[static_cast<size_t>(r * kRow + c)])) << "row " << r << " column " << c;
      } else {
        ASSERT_EQ(got, 0xBEEF) << "padding written: row " << r << " column " << c;
      }
    }
  }
}

TEST(SgdCuda, CastToBf16RoundsToNearestEven) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (int64_t count : {int64_t{1}, int64_t{3}, int64_t{2049}}) {
    auto src = test_support::random_vector(static_cast<size_t>(count), 9, -1000.0f, 1000.0f);
    // Exact ties round to even: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6.
    src[0] = 1.0f + 1.0f / 256.0f;
    if (count > 1) src[1] = 1.0f + 3.0f / 256.0f;
    DeviceBuffer<float> d_src(src);
    DeviceBuffer<uint16_t> d_dst(static_cast<size_t>(count));
    CastArguments a;
    a.count = count;
    a.src = d_src.data();
    a.dst = reinterpret_cast<__nv_bfloat16*>(d_dst.data());
    ASSERT_TRUE(CastFloatToBf16::can_implement(a).ok())
        << CastFloatToBf16::can_implement(a).reason();
    CastFloatToBf16::run(a, nullptr, nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto dst = d_dst.download();
    EXPECT_EQ(dst[0], 0x3f80u);
    if (count > 1) {
      EXPECT_EQ(dst[1], 0x3f82u);
    }
    for (size_t i = 0; i < dst.size(); ++i) {
      ASSERT_EQ(dst[i], bf16_bits(src[i]))
          << "first mismatch at " << i << " (of " << src[i] << "); count=" << count;
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
