// Tests for the CPU RNN-T joint (kernels/cpu/transducer_joint.h): forward
// against a direct loop, a hand-worked case, backward against central finite
// differences, masking of padding, packed against padded, and validation.
#include "kernels/cpu/transducer_joint.h"

#include <gtest/gtest.h>

#include "tests/support/single_thread.h"
#include <omp.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/rnnt_loss.h"
#include "base/random.h"

namespace perflab::kernels::cpu {
namespace {

using test_support::random_vector;

std::string describe(const JointShape& s, JointActivation act) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " H=" + std::to_string(s.hidden) +
         (act == JointActivation::kRelu ? " relu" : " identity");
}

using test_support::SingleThread;

size_t count(int64_t n) { return static_cast<size_t>(n); }

int64_t h_index(const JointShape& s, int64_t b, int64_t t, int64_t u, int64_t k) {
  return ((b * s.max_time + t) * (s.max_labels + 1) + u) * s.hidden + k;
}

struct Case {
  JointShape shape;
  std::vector<int32_t> frames, lengths;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{1, 1, 0, 1}, {1}, {0}},
      {{3, 5, 3, 7}, {5, 2, 0}, {3, 0, 2}},
      {{2, 7, 4, 17}, {3, 7}, {4, 1}},
      {{1, 3, 5, 33}, {3}, {5}},
  };
  return all;
}

TEST(TransducerJointTest, HandWorked) {
  // f = [[1, -2], [3, 0.5]] (T=2), g = [[0.5, 1], [-4, 1]] (U+1=2), H=2.
  const std::vector<float> f = {1, -2, 3, 0.5f}, g = {0.5f, 1, -4, 1};
  const int32_t frames = 2, labels = 1;
  std::vector<float> h(8);
  transducer_joint_forward<float>({1, 2, 1, 2}, JointActivation::kRelu, f.data(), g.data(), &frames,
                                  &labels, h.data());
  EXPECT_EQ(h, (std::vector<float>{1.5f, 0, 0, 0, 3.5f, 1.5f, 0, 1.5f}));
  const std::vector<float> dh = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> df(4), dg(4);
  transducer_joint_backward<float>({1, 2, 1, 2}, JointActivation::kRelu, h.data(), dh.data(),
                                   &frames, &labels, df.data(), dg.data());
  EXPECT_EQ(df, (std::vector<float>{1, 0, 5, 6 + 8}));
  EXPECT_EQ(dg, (std::vector<float>{1 + 5, 6, 0, 8}));
}

TEST(TransducerJointTest, ForwardMatchesDirectLoopAndZeroesPadding) {
  for (const Case& c : cases()) {
    const JointShape& s = c.shape;
    for (JointActivation act : {JointActivation::kIdentity, JointActivation::kRelu}) {
      const std::vector<float> f = random_vector(count(s.batch * s.max_time * s.hidden), 1);
      const std::vector<float> g = random_vector(count(s.batch * (s.max_labels + 1) * s.hidden), 2);
      std::vector<float> h(count(s.batch * s.max_time * (s.max_labels + 1) * s.hidden),
                           std::numeric_limits<float>::quiet_NaN());
      transducer_joint_forward<float>(s, act, f.data(), g.data(), c.frames.data(), c.lengths.data(),
                                      h.data());
      for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t t = 0; t < s.max_time; ++t) {
          for (int64_t u = 0; u <= s.max_labels; ++u) {
            const bool valid = t < c.frames[b] && u <= c.lengths[b];
            for (int64_t k = 0; k < s.hidden; ++k) {
              float expected = 0;
              if (valid) {
                expected = f[(b * s.max_time + t) * s.hidden + k] +
                           g[(b * (s.max_labels + 1) + u) * s.hidden + k];
                if (act == JointActivation::kRelu) expected = std::max(expected, 0.0f);
              }
              ASSERT_EQ(h[h_index(s, b, t, u, k)], expected)
                  << "b=" << b << " t=" << t << " u=" << u << " k=" << k << " " << describe(s, act);
            }
          }
        }
      }
    }
  }
}

// loss = Σ_valid h·r in double. Identity is linear, so central differences are
// exact up to rounding; for ReLU, elements whose pre-activations lie within
// the step of the kink are skipped.
TEST(TransducerJointTest, BackwardMatchesFiniteDifferences) {
  const SingleThread one_thread;
  constexpr double kStep = 1e-4;
  for (const Case& c : cases()) {
    const JointShape& s = c.shape;
    for (JointActivation act : {JointActivation::kIdentity, JointActivation::kRelu}) {
      const auto to_double = [](const std::vector<float>& v) {
        return std::vector<double>(v.begin(), v.end());
      };
      std::vector<double> f = to_double(random_vector(count(s.batch * s.max_time * s.hidden), 3));
      std::vector<double> g =
          to_double(random_vector(count(s.batch * (s.max_labels + 1) * s.hidden), 4));
      const size_t h_size = count(s.batch * s.max_time * (s.max_labels + 1) * s.hidden);
      const std::vector<double> r = to_double(random_vector(h_size, 5));
      std::vector<double> h(h_size), df(f.size()), dg(g.size());
      transducer_joint_forward<double>(s, act, f.data(), g.data(), c.frames.data(),
                                       c.lengths.data(), h.data());
      transducer_joint_backward<double>(s, act, h.data(), r.data(), c.frames.data(),
                                        c.lengths.data(), df.data(), dg.data());
      const auto loss = [&] {
        transducer_joint_forward<double>(s, act, f.data(), g.data(), c.frames.data(),
                                         c.lengths.data(), h.data());
        double sum = 0;
        for (size_t i = 0; i < h.size(); ++i) sum += h[i] * r[i];  // padding rows of h are 0
        return sum;
      };
      const auto near_kink = [&](int64_t b, int64_t t, int64_t u, int64_t k) {
        const double pre =
            f[(b * s.max_time + t) * s.hidden + k] + g[(b * (s.max_labels + 1) + u) * s.hidden + k];
        return act == JointActivation::kRelu && std::fabs(pre) < 2 * kStep;
      };
      const auto check = [&](const char* name, std::vector<double>& input,
                             const std::vector<double>& grad, bool is_f) {
        const int64_t rows_per_b = is_f ? s.max_time : s.max_labels + 1;
        for (size_t i = 0; i < input.size(); ++i) {
          const int64_t k = static_cast<int64_t>(i) % s.hidden;
          const int64_t row = static_cast<int64_t>(i) / s.hidden;
          const int64_t b = row / rows_per_b, j = row % rows_per_b;
          bool skip = false;
          for (int64_t other = 0; other < (is_f ? s.max_labels + 1 : s.max_time); ++other) {
            skip = skip || (is_f ? near_kink(b, j, other, k) : near_kink(b, other, j, k));
          }
          if (skip) continue;
          const double saved = input[i];
          input[i] = saved + kStep;
          const double plus = loss();
          input[i] = saved - kStep;
          const double minus = loss();
          input[i] = saved;
          const double expected = (plus - minus) / (2 * kStep);
          ASSERT_NEAR(grad[i], expected, 1e-9)
              << "d" << name << "[" << i << "] " << describe(s, act);
        }
      };
      check("f", f, df, true);
      check("g", g, dg, false);
    }
  }
}

// dh in padding rows (t >= T_b or u > U_b) is never read, and the padding
// rows of df and dg are zero.
TEST(TransducerJointTest, BackwardMasksPadding) {
  const JointShape s{3, 6, 4, 5};
  const std::vector<int32_t> frames = {6, 2, 4}, lengths = {1, 4, 0};
  const size_t h_size = count(s.batch * s.max_time * (s.max_labels + 1) * s.hidden);
  std::vector<float> clean = random_vector(h_size, 6), dirty = clean;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.max_time; ++t) {
      for (int64_t u = 0; u <= s.max_labels; ++u) {
        if (t < frames[b] && u <= lengths[b]) continue;
        for (int64_t k = 0; k < s.hidden; ++k) {
          dirty[h_index(s, b, t, u, k)] = std::numeric_limits<float>::quiet_NaN();
        }
      }
    }
  }
  std::vector<float> df(count(s.batch * s.max_time * s.hidden), 7.0f);
  std::vector<float> dg(count(s.batch * (s.max_labels + 1) * s.hidden), 7.0f);
  std::vector<float> df_clean(df.size()), dg_clean(dg.size());
  transducer_joint_backward<float>(s, JointActivation::kIdentity, nullptr, clean.data(),
                                   frames.data(), lengths.data(), df_clean.data(), dg_clean.data());
  transducer_joint_backward<float>(s, JointActivation::kIdentity, nullptr, dirty.data(),
                                   frames.data(), lengths.data(), df.data(), dg.data());
  EXPECT_EQ(df, df_clean);
  EXPECT_EQ(dg, dg_clean);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = frames[b]; t < s.max_time; ++t) {
      for (int64_t k = 0; k < s.hidden; ++k) {
        ASSERT_EQ(df[(b * s.max_time + t) * s.hidden + k], 0.0f) << "b=" << b << " t=" << t;
      }
    }
    for (int64_t u = lengths[b] + 1; u <= s.max_labels; ++u) {
      for (int64_t k = 0; k < s.hidden; ++k) {
        ASSERT_EQ(dg[(b * (s.max_labels + 1) + u) * s.hidden + k], 0.0f) << "b=" << b << " u=" << u;
      }
    }
  }
}

TEST(TransducerJointTest, PackedEqualsPadded) {
  for (const Case& c : cases()) {
    const JointShape& s = c.shape;
    std::vector<int64_t> offsets(count(s.batch + 1));
    const int64_t rows =
        rnnt_packed_offsets(s.batch, c.frames.data(), c.lengths.data(), offsets.data());
    const std::vector<float> f = random_vector(count(s.batch * s.max_time * s.hidden), 7);
    const std::vector<float> g = random_vector(count(s.batch * (s.max_labels + 1) * s.hidden), 8);
    const std::vector<float> dh =
        random_vector(count(s.batch * s.max_time * (s.max_labels + 1) * s.hidden), 9);
    std::vector<float> dh_packed(count(rows * s.hidden));
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t t = 0; t < c.frames[b]; ++t) {
        for (int64_t u = 0; u <= c.lengths[b]; ++u) {
          const int64_t row = offsets[b] + t * (c.lengths[b] + 1) + u;
          std::copy_n(&dh[h_index(s, b, t, u, 0)], s.hidden, &dh_packed[row * s.hidden]);
        }
      }
    }
    for (JointActivation act : {JointActivation::kIdentity, JointActivation::kRelu}) {
      std::vector<float> h(dh.size()), h_packed(dh_packed.size());
      transducer_joint_forward<float>(s, act, f.data(), g.data(), c.frames.data(), c.lengths.data(),
                                      h.data());
      transducer_joint_forward_packed<float>(s, act, f.data(), g.data(), c.frames.data(),
                                             c.lengths.data(), offsets.data(), h_packed.data());
      for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t t = 0; t < c.frames[b]; ++t) {
          for (int64_t u = 0; u <= c.lengths[b]; ++u) {
            const int64_t row = offsets[b] + t * (c.lengths[b] + 1) + u;
            for (int64_t k = 0; k < s.hidden; ++k) {
              ASSERT_EQ(h_packed[row * s.hidden + k], h[h_index(s, b, t, u, k)])
                  << "b=" << b << " t=" << t << " u=" << u << " k=" << k << " " << describe(s, act);
            }
          }
        }
      }
      std::vector<float> df(f.size()), dg(g.size()), df_packed(f.size()), dg_packed(g.size());
      transducer_joint_backward<float>(s, act, h.data(), dh.data(), c.frames.data(),
                                       c.lengths.data(), df.data(), dg.data());
      transducer_joint_backward_packed<float>(s, act, h_packed.data(), dh_packed.data(),
                                              c.frames.data(), c.lengths.data(), offsets.data(),
                                              df_packed.data(), dg_packed.data());
      EXPECT_EQ(df_packed, df) << describe(s, act);
      EXPECT_EQ(dg_packed, dg) << describe(s, act);
    }
  }
}

TEST(TransducerJointTest, RejectsInvalidLengths) {
  const JointShape s{2, 3, 2, 4};
  std::vector<float> f(24), g(24), h(72);
  const auto forward = [&](std::vector<int32_t> frames, std::vector<int32_t> lengths) {
    transducer_joint_forward<float>(s, JointActivation::kRelu, f.data(), g.data(), frames.data(),
                                    lengths.data(), h.data());
  };
  EXPECT_NO_THROW(forward({0, 3}, {2, 0}));
  const auto expect_error = [&](std::vector<int32_t> frames, std::vector<int32_t> lengths,
                                const std::string& needle) {
    try {
      forward(frames, lengths);
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({3, 4}, {0, 0}, "sequence 1: frame count 4");
  expect_error({-1, 1}, {0, 0}, "sequence 0: frame count -1");
  expect_error({1, 1}, {3, 0}, "sequence 0: label length 3");
  expect_error({1, 1}, {0, -2}, "sequence 1: label length -2");
}

}  // namespace
}  // namespace perflab::kernels::cpu
