// bf16 emulation on the CPU (kernels/cpu/bf16.h): nearest-even rounding
// agrees with half_precision.h, stochastic rounding lands on one of the two
// neighbours and is unbiased, and an embedding update far below half a bf16
// step survives on average with stochastic rounding, where nearest rounding
// loses it every time.
#include "kernels/cpu/bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/embedding.h"
#include "kernels/half_precision.h"
#include "base/random.h"

namespace perflab::kernels::cpu {
namespace {

TEST(Bf16, RoundToNearestMatchesTheHostConversion) {
  std::vector<float> x = test_support::random_vector(1001, 3, -1e3f, 1e3f);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(1.0f + 0x1p-8f);  // a tie: to even (1.0)
  x.push_back(1.0f + 0x1p-8f + 0x1p-20f);
  std::vector<float> y(x.size());
  round_to_bf16(static_cast<int64_t>(x.size()), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], from_bf16(to_bf16(x[i]))) << x[i];
  EXPECT_EQ(y[x.size() - 2], 1.0f);
  EXPECT_EQ(y[x.size() - 1], 1.0f + 0x1p-7f);
  round_to_bf16(static_cast<int64_t>(x.size()), x.data(), x.data());  // in place
  EXPECT_EQ(x, y);
}

// 1 + 0.3 ulp lies between 1 and 1 + ulp (ulp = 2^-7): over 2^16 draws it
// rounds up 30% of the time, so the mean is x to within a few standard
// errors (sd of one draw ≤ ulp/2, of the mean ≤ ulp/2/256).
TEST(Bf16, StochasticRoundingIsUnbiasedBetweenTheNeighbours) {
  constexpr float kUlp = 0x1p-7f;
  for (float x : {1.0f + 0.3f * kUlp, -(1.0f + 0.3f * kUlp), 3.0e-5f, -7.77f}) {
    double sum = 0;
    constexpr int kDraws = 1 << 16;
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int i = 0; i < kDraws; ++i) {
      const float y = stochastic_round_to_bf16(x, counter_random(9, 1, 2, static_cast<uint64_t>(i)));
      ASSERT_EQ(from_bf16(to_bf16(y)), y) << "not a bf16 value";
      lo = std::min(lo, y);
      hi = std::max(hi, y);
      sum += y;
    }
    EXPECT_LE(lo, x);
    EXPECT_GE(hi, x);
    EXPECT_LE(std::nextafter(lo, hi), hi);
    const double spacing = static_cast<double>(hi) - lo;
    EXPECT_NEAR(sum / kDraws, x, 4 * spacing / 2 / 256) << x;
  }
  // bf16 values and non-finite values are left as they are.
  for (float x : {1.0f, -2.5f, 0.0f, std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(stochastic_round_to_bf16(x, 0xFFFFFFFFu), x);
  }
  EXPECT_TRUE(std::isnan(stochastic_round_to_bf16(std::nanf(""), 0x1234u)));
}

// 100 updates of 1e-4 on rows at 1.0, where a bf16 step is 2^-7 ≈ 0.0078:
// nearest rounding never moves; stochastic rounding drifts by 0.01 on
// average. Per element the drift has sd ≈ ulp·sqrt(100·0.0128) ≈ 0.0089;
// over 16 rows × 64 columns the mean's sd is ≈ 0.00028, and the test allows
// five of them.
TEST(Bf16, StochasticRowUpdatesKeepStepsBelowHalfAUlp) {
  constexpr int64_t kRows = 16, kDim = 64;
  std::vector<float> nearest(kRows * kDim, 1.0f), stochastic(kRows * kDim, 1.0f);
  std::vector<int32_t> ids(kRows);
  for (int64_t r = 0; r < kRows; ++r) ids[static_cast<size_t>(r)] = static_cast<int32_t>(r);
  const std::vector<float> grad(kRows * kDim, 1.0f);
  EmbeddingUpdateScratch scratch;
  float* nearest_table = nearest.data();
  float* stochastic_table = stochastic.data();
  for (uint64_t step = 0; step < 100; ++step) {
    embedding_sgd_update({kRows, 1, kDim}, &nearest_table, ids.data(), grad.data(), 1e-4f, scratch);
    round_to_bf16(kRows * kDim, nearest.data(), nearest.data());
    embedding_sgd_update({kRows, 1, kDim}, &stochastic_table, ids.data(), grad.data(), 1e-4f, scratch,
                         {true, 77, step});
  }
  double mean = 0;
  for (float v : stochastic) {
    ASSERT_EQ(from_bf16(to_bf16(v)), v);
    mean += v / static_cast<double>(stochastic.size());
  }
  EXPECT_EQ(nearest, std::vector<float>(nearest.size(), 1.0f)) << "nearest rounding lost every update";
  EXPECT_NEAR(mean, 1.0 - 100 * 1e-4, 5 * 0.00028);
}

}  // namespace
}  // namespace perflab::kernels::cpu
