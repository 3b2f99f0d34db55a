// Tests for the CPU DLRM dot interaction (kernels/cpu/interaction.h): output
// width and pair order, hand-worked values, and the backward pass against
// central finite differences at odd sizes.
#include "kernels/cpu/interaction.h"

#include <gtest/gtest.h>

#include "base/random.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

using test_support::random_vector;

std::string describe(const InteractionShape& s) {
  return "batch=" + std::to_string(s.batch) + " tables=" + std::to_string(s.num_tables) +
         " dim=" + std::to_string(s.dim);
}

TEST(InteractionTest, OutputWidth) {
  EXPECT_EQ(interaction_output_width(0, 5), 5);
  EXPECT_EQ(interaction_output_width(1, 5), 6);
  EXPECT_EQ(interaction_output_width(26, 16), 16 + 27 * 26 / 2);  // 367
  EXPECT_EQ(interaction_output_width(26, 128), 479);
}

TEST(InteractionTest, PairOrderIsRowMajorLowerTriangle) {
  EXPECT_EQ(interaction_pair_index(1, 0), 0);
  EXPECT_EQ(interaction_pair_index(2, 0), 1);
  EXPECT_EQ(interaction_pair_index(2, 1), 2);
  EXPECT_EQ(interaction_pair_index(3, 0), 3);
  EXPECT_EQ(interaction_pair_index(3, 2), 5);
  EXPECT_EQ(interaction_pair_index(26, 25), 26 * 27 / 2 - 1);
}

TEST(InteractionTest, HandWorkedTwoVectors) {
  const std::vector<float> x = {1, 2, 3};
  const std::vector<float> e = {4, 5, 6};
  std::vector<float> out(4);
  interaction_forward({1, 1, 3}, x.data(), e.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 32}));

  // d(x·e)/dx = e, d(x·e)/de = x; the copied x columns pass their gradient on.
  const std::vector<float> dout = {0.5f, -1, 2, 3};
  std::vector<float> dx(3), de(3);
  interaction_backward({1, 1, 3}, x.data(), e.data(), dout.data(), dx.data(), de.data());
  EXPECT_EQ(dx, (std::vector<float>{0.5f + 12, -1 + 15, 2 + 18}));
  EXPECT_EQ(de, (std::vector<float>{3, 6, 9}));
}

TEST(InteractionTest, HandWorkedThreeVectorsInPairOrder) {
  // z0 = x = (1, 0), z1 = (2, 3), z2 = (-1, 4)
  const std::vector<float> x = {1, 0};
  const std::vector<float> e = {2, 3, -1, 4};
  std::vector<float> out(5);
  interaction_forward({1, 2, 2}, x.data(), e.data(), out.data());
  // (1,0) = z1·z0 = 2, (2,0) = z2·z0 = -1, (2,1) = z2·z1 = 10
  EXPECT_EQ(out, (std::vector<float>{1, 0, 2, -1, 10}));
}

// Each output is linear in every single input element (no z_i·z_i terms), so
// central differences are exact up to rounding of the outputs touched.
TEST(InteractionTest, BackwardMatchesFiniteDifferences) {
  constexpr float kStep = 0.0625f;
  // Dims cover each vector path of the kernels: the 64-float register chunk,
  // single 16-float vectors and the scalar tail (81 = 64 + 16 + 1).
  const std::vector<InteractionShape> shapes = {{1, 0, 1}, {1, 1, 1},  {3, 1, 7},   {1, 3, 17},
                                                {7, 7, 3}, {3, 17, 5}, {17, 2, 16}, {2, 5, 81},
                                                {1, 4, 64}};
  for (const InteractionShape& s : shapes) {
    std::vector<float> x = random_vector(static_cast<size_t>(s.batch * s.dim), 1);
    std::vector<float> e = random_vector(static_cast<size_t>(s.batch * s.num_tables * s.dim), 2);
    const int64_t width = interaction_output_width(s.num_tables, s.dim);
    const std::vector<float> r = random_vector(static_cast<size_t>(s.batch * width), 3);
    std::vector<float> out(r.size()), dx(x.size()), de(e.size());
    interaction_backward(s, x.data(), e.data(), r.data(), dx.data(), de.data());
    const auto loss = [&] {
      interaction_forward(s, x.data(), e.data(), out.data());
      double sum = 0;
      for (size_t i = 0; i < out.size(); ++i) sum += static_cast<double>(out[i]) * r[i];
      return sum;
    };
    const auto check = [&](const char* name, std::vector<float>& input,
                           const std::vector<float>& grad) {
      for (size_t i = 0; i < input.size(); ++i) {
        const float saved = input[i];
        input[i] = saved + kStep;
        const double plus = loss();
        const double up = input[i];
        input[i] = saved - kStep;
        const double minus = loss();
        const double down = input[i];
        input[i] = saved;
        const double expected = (plus - minus) / (up - down);
        ASSERT_NEAR(grad[i], expected, 1e-4 * (1 + std::fabs(expected)))
            << "d" << name << "[" << i << "] " << describe(s);
      }
    };
    check("x", x, dx);
    check("emb", e, de);
  }
}

void check_forward_against_double(const InteractionShape& s);

TEST(InteractionTest, ForwardMatchesDoubleReference) {
  // The tiny preset's shape with an odd batch, and one whose dim takes every
  // vector path (64 + 16 + 1) with enough tables for four dots at a time.
  for (const InteractionShape& s : {InteractionShape{257, 26, 16}, InteractionShape{9, 11, 81}}) {
    check_forward_against_double(s);
  }
}

void check_forward_against_double(const InteractionShape& s) {
  const std::vector<float> x = random_vector(static_cast<size_t>(s.batch * s.dim), 4);
  const std::vector<float> e =
      random_vector(static_cast<size_t>(s.batch * s.num_tables * s.dim), 5);
  const int64_t width = interaction_output_width(s.num_tables, s.dim);
  std::vector<float> out(static_cast<size_t>(s.batch * width));
  interaction_forward(s, x.data(), e.data(), out.data());
  for (int64_t b = 0; b < s.batch; ++b) {
    const auto z = [&](int64_t i) {
      return i == 0 ? &x[b * s.dim] : &e[(b * s.num_tables + i - 1) * s.dim];
    };
    for (int64_t d = 0; d < s.dim; ++d) ASSERT_EQ(out[b * width + d], x[b * s.dim + d]);
    for (int64_t i = 1; i <= s.num_tables; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        double expected = 0;
        for (int64_t d = 0; d < s.dim; ++d) expected += static_cast<double>(z(i)[d]) * z(j)[d];
        const int64_t col = s.dim + interaction_pair_index(i, j);
        // An fp32 sum of dim products of |z| ≤ 1 in any order: error at most
        // dim · 2^-24 · Σ|terms| ≤ dim² · 2^-24.
        ASSERT_NEAR(out[b * width + col], expected,
                    std::ldexp(static_cast<double>(s.dim * s.dim), -24))
            << "sample " << b << " pair (" << i << "," << j << ") " << describe(s);
      }
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
