// Tests for the exact ROC AUC: hand-worked values, ties, degenerate inputs,
// and agreement with an O(n^2) pair count on seeded random inputs.
#include "kernels/cpu/auc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

double auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  return roc_auc(scores.data(), labels.data(), static_cast<int64_t>(scores.size()));
}

/// Counts positive/negative pairs directly: a win counts 1, a tie 1/2.
double brute_force_auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (labels[i] != 1.0f) continue;
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[j] != 0.0f) continue;
      pairs += 1;
      wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

TEST(RocAuc, PerfectRankingIsOne) {
  EXPECT_DOUBLE_EQ(auc({0.1f, 0.2f, 0.8f, 0.9f}, {0, 0, 1, 1}), 1.0);
}

TEST(RocAuc, InvertedRankingIsZero) {
  EXPECT_DOUBLE_EQ(auc({0.9f, 0.8f, 0.2f, 0.1f}, {0, 0, 1, 1}), 0.0);
}

TEST(RocAuc, AllTiedIsOneHalf) {
  EXPECT_DOUBLE_EQ(auc({0.3f, 0.3f, 0.3f, 0.3f, 0.3f}, {1, 0, 0, 1, 0}), 0.5);
}

TEST(RocAuc, SmallCaseWithTiesWorkedByHand) {
  // scores 0.1 0.4 0.4 0.8 0.4, labels 0 1 0 1 0: positives {0.4, 0.8},
  // negatives {0.1, 0.4, 0.4}, 2 x 3 = 6 pairs.
  //   positive 0.4: beats 0.1 (1), ties the two 0.4s (1/2 + 1/2) -> 2
  //   positive 0.8: beats all three                               -> 3
  // AUC = 5/6. By ranks: 0.1 -> 1, the three 0.4s -> (2+3+4)/3 = 3, 0.8 -> 5;
  // positive rank sum R = 3 + 5 = 8, U = R - P(P+1)/2 = 8 - 3 = 5, U/(P N) = 5/6.
  EXPECT_DOUBLE_EQ(auc({0.1f, 0.4f, 0.4f, 0.8f, 0.4f}, {0, 1, 0, 1, 0}), 5.0 / 6.0);
}

TEST(RocAuc, SecondHandWorkedCase) {
  // scores -1 2 2 3, labels 1 0 1 0: positives {-1, 2}, negatives {2, 3}.
  //   -1 loses to both (0); 2 ties 2 (1/2), loses to 3 (0). AUC = 0.5 / 4 = 1/8.
  EXPECT_DOUBLE_EQ(auc({-1.0f, 2.0f, 2.0f, 3.0f}, {1, 0, 1, 0}), 0.125);
}

TEST(RocAuc, NegativeAndPositiveZeroTie) {
  EXPECT_DOUBLE_EQ(auc({-0.0f, 0.0f}, {1, 0}), 0.5);
  EXPECT_DOUBLE_EQ(auc({0.0f, -0.0f}, {1, 0}), 0.5);
}

TEST(RocAuc, UndefinedCasesAreNaN) {
  EXPECT_TRUE(std::isnan(roc_auc(nullptr, nullptr, 0)));
  EXPECT_TRUE(std::isnan(auc({0.1f, 0.2f}, {1, 1})));
  EXPECT_TRUE(std::isnan(auc({0.1f, 0.2f}, {0, 0})));
  EXPECT_TRUE(std::isnan(auc({0.1f, NAN, 0.3f}, {0, 1, 1})));
}

TEST(RocAuc, MatchesPairCountOnOddSizes) {
  std::mt19937_64 rng(42);
  for (int64_t n : {1, 3, 2047, 2049}) {
    std::vector<float> scores(static_cast<size_t>(n)), labels(static_cast<size_t>(n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> level(-20, 20);
    for (int64_t i = 0; i < n; ++i) {
      labels[i] = static_cast<float>(rng() % 2);
      // Half continuous scores, half on a coarse grid so that ties are common.
      scores[i] = i % 2 == 0 ? normal(rng) + labels[i] : static_cast<float>(level(rng)) / 4.0f;
    }
    if (n < 2) labels[0] = 1;  // One sample: a single class, NaN.
    const double got = auc(scores, labels);
    const bool one_class =
        std::all_of(labels.begin(), labels.end(), [&](float l) { return l == labels[0]; });
    if (one_class) {
      EXPECT_TRUE(std::isnan(got)) << "n=" << n;
    } else {
      EXPECT_NEAR(got, brute_force_auc(scores, labels), 1e-12) << "n=" << n;
    }
  }
}

TEST(RocAuc, IndependentOfOrder) {
  std::mt19937_64 rng(7);
  std::vector<float> scores(10001), labels(10001);
  for (size_t i = 0; i < scores.size(); ++i) {
    labels[i] = static_cast<float>(rng() % 2);
    scores[i] = static_cast<float>(rng() % 100) - 50.0f * labels[i];
  }
  const double before = auc(scores, labels);
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> shuffled_scores, shuffled_labels;
  for (size_t i : order) {
    shuffled_scores.push_back(scores[i]);
    shuffled_labels.push_back(labels[i]);
  }
  EXPECT_EQ(before, auc(shuffled_scores, shuffled_labels));
}

}  // namespace
}  // namespace perflab::kernels::cpu
