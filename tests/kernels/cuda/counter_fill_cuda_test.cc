// The device's seeded draws (kernels/cuda/counter_fill.h) against the host's
// counter_value (base/counter_random.h), rounded to the element type.
//
// Tolerance: uniform values bit-identical (integer bits scaled by 2^-53, then
// 2u - 1: exact in double on both sides). Normal values within one ulp of the
// element type: the device's double log, sqrt, sin and cos are within 2
// double ulps of glibc's, so the float rounding differs by at most one float
// ulp, and only where the double lies next to a rounding boundary; bf16 and
// fp16 round that float again (nearest even on both sides), which keeps the
// difference within one of their ulps. The test also reports how many differ
// at all (expected: a handful per million).
#include "kernels/cuda/counter_fill.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/half_precision.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

float widen(const unsigned char* p, RnntDType dtype) {
  if (dtype == RnntDType::kFloat32) {
    float f = 0;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t bits = 0;
  std::memcpy(&bits, p, 2);
  return dtype == RnntDType::kBFloat16 ? from_bf16(bits) : from_fp16(bits);
}

float host_value(CounterDistribution d, uint64_t seed, uint64_t stream, uint64_t index, RnntDType dtype) {
  const auto f = static_cast<float>(counter_value(d, seed, stream, index));
  if (dtype == RnntDType::kFloat32) return f;
  return dtype == RnntDType::kBFloat16 ? from_bf16(to_bf16(f)) : from_fp16(to_fp16(f));
}

double ulp_of(double x, RnntDType dtype) {
  const int bits = dtype == RnntDType::kFloat32 ? 23 : dtype == RnntDType::kBFloat16 ? 7 : 10;
  const int lowest = dtype == RnntDType::kFloat16 ? -14 : -126;
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 1, lowest) - bits);
}

TEST(CounterFillCanImplement, RejectsBadArgumentsWithAReason) {
  float anything = 0;
  CounterFillArguments a;
  a.count = 5;
  a.out = &anything;
  EXPECT_TRUE(CounterFill::can_implement(a).ok()) << CounterFill::can_implement(a).reason();
  CounterFillArguments b = a;
  b.count = 0;
  EXPECT_NE(CounterFill::can_implement(b).reason().find("count must be at least 1"), std::string::npos);
  b = a;
  b.out = nullptr;
  EXPECT_NE(CounterFill::can_implement(b).reason().find("out is null"), std::string::npos);
  b = a;
  b.first = UINT64_MAX - 2;
  EXPECT_NE(CounterFill::can_implement(b).reason().find("overflows"), std::string::npos);
  b = a;
  b.dtype = static_cast<RnntDType>(9);
  EXPECT_NE(CounterFill::can_implement(b).reason().find("unknown element type"), std::string::npos);
  b = a;
  b.out = reinterpret_cast<unsigned char*>(&anything) + 1;
  EXPECT_NE(CounterFill::can_implement(b).reason().find("aligned"), std::string::npos);
}

struct Case {
  CounterDistribution distribution;
  RnntDType dtype;
  uint64_t first;
  int64_t count;
};

TEST(CounterFillCuda, DrawsTheHostsValuesInEveryTypeFromAnyFirstIndex) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const std::vector<Case> cases = {
      {CounterDistribution::kNormal, RnntDType::kFloat32, 0, 1000003},
      {CounterDistribution::kNormal, RnntDType::kFloat32, 12345, 999},  // odd first: a pair split at the start
      {CounterDistribution::kNormal, RnntDType::kBFloat16, 7, 300001},
      {CounterDistribution::kNormal, RnntDType::kFloat16, 1, 300001},
      {CounterDistribution::kNormal, RnntDType::kFloat32, 4, 1},
      {CounterDistribution::kSymmetricUniform, RnntDType::kFloat32, 0, 1000003},
      {CounterDistribution::kSymmetricUniform, RnntDType::kBFloat16, 3, 4097},
      {CounterDistribution::kSymmetricUniform, RnntDType::kFloat16, 0, 513},
  };
  const uint64_t seed = 2024, stream = 3;
  for (const Case& c : cases) {
    const size_t e = rnnt_dtype_bytes(c.dtype);
    constexpr size_t kGuard = 16;  // bytes after the range that must stay untouched
    DeviceBuffer<unsigned char> out(static_cast<size_t>(c.count) * e + kGuard);
    PERFLAB_CUDA_CHECK(cudaMemset(out.data(), 0xAB, out.bytes()));
    CounterFillArguments a;
    a.count = c.count;
    a.first = c.first;
    a.seed = seed;
    a.stream = stream;
    a.distribution = c.distribution;
    a.dtype = c.dtype;
    a.out = out.data();
    ASSERT_TRUE(CounterFill::can_implement(a).ok());
    CounterFill::run(a, nullptr);
    const std::vector<unsigned char> got = out.download();
    // Determinism: a second draw is the same bits.
    CounterFill::run(a, nullptr);
    EXPECT_EQ(out.download(), got) << "a second draw differs";
    for (size_t i = 0; i < kGuard; ++i) ASSERT_EQ(got[static_cast<size_t>(c.count) * e + i], 0xAB) << "wrote past count";
    size_t differ = 0;
    for (int64_t i = 0; i < c.count; ++i) {
      const float want = host_value(c.distribution, seed, stream, c.first + static_cast<uint64_t>(i), c.dtype);
      const float value = widen(got.data() + static_cast<size_t>(i) * e, c.dtype);
      if (value == want) continue;
      ++differ;
      ASSERT_NE(c.distribution, CounterDistribution::kSymmetricUniform)
          << "uniform draws must be bit-identical: index " << i << ": " << value << " vs " << want;
      ASSERT_LE(std::fabs(static_cast<double>(value) - want), ulp_of(std::max(std::fabs(value), std::fabs(want)), c.dtype))
          << rnnt_dtype_name(c.dtype) << " index " << c.first + static_cast<uint64_t>(i) << ": " << value << " vs "
          << want;
    }
    EXPECT_LE(differ, static_cast<size_t>(c.count) / 1000 + 1)
        << "one-ulp differences should be rare: " << differ << " of " << c.count;
    std::printf("  %s %s, first %llu: %zu of %lld differ by one ulp\n",
                c.distribution == CounterDistribution::kNormal ? "normal" : "uniform", rnnt_dtype_name(c.dtype),
                static_cast<unsigned long long>(c.first), differ, static_cast<long long>(c.count));
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
