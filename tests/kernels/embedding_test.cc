// Tests for the CPU multi-table embedding (kernels/cpu/embedding.h): lookup
// by hand, the sparse SGD update against central finite differences of the
// lookup, repeated ids, and independence from the thread count.
#include "kernels/cpu/embedding.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

/// Tables, ids and a gradient for one problem, all seeded.
struct Problem {
  EmbeddingShape shape;
  std::vector<std::vector<float>> tables;
  std::vector<int32_t> ids;
  std::vector<float> grad;  // [B, T, D]

  Problem(EmbeddingShape s, const std::vector<int32_t>& rows, uint32_t seed) : shape(s) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (int32_t r : rows) {
      tables.emplace_back(static_cast<size_t>(r * s.dim));
      for (float& v : tables.back()) v = value(gen);
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int32_t r : rows) ids.push_back(std::uniform_int_distribution<int32_t>(0, r - 1)(gen));
    }
    grad.resize(static_cast<size_t>(s.batch * s.num_tables * s.dim));
    for (float& g : grad) g = value(gen);
  }
  std::vector<const float*> const_pointers() const {
    std::vector<const float*> p;
    for (const auto& t : tables) p.push_back(t.data());
    return p;
  }
  std::vector<float*> pointers() {
    std::vector<float*> p;
    for (auto& t : tables) p.push_back(t.data());
    return p;
  }
  std::string describe() const {
    return "batch=" + std::to_string(shape.batch) + " tables=" + std::to_string(shape.num_tables) +
           " dim=" + std::to_string(shape.dim);
  }
};

TEST(EmbeddingTest, HandWorkedLookup) {
  // Table 0: 3 rows of dim 2; table 1: 2 rows.
  const std::vector<float> t0 = {0, 1, 10, 11, 20, 21};
  const std::vector<float> t1 = {-1, -2, -3, -4};
  const float* tables[] = {t0.data(), t1.data()};
  const std::vector<int32_t> ids = {2, 0, 1, 1};  // sample 0: (2, 0); sample 1: (1, 1)
  std::vector<float> out(8);
  embedding_forward({2, 2, 2}, tables, ids.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{20, 21, -1, -2, 10, 11, -3, -4}));
}

TEST(EmbeddingTest, RepeatedIdsReceiveEveryContribution) {
  std::vector<float> table = {1, 1, 1, 1, 1, 1};  // 3 rows, dim 2
  float* tables[] = {table.data()};
  const std::vector<int32_t> ids = {1, 1, 2, 1};  // row 1 three times, row 0 never
  const std::vector<float> grad = {0.5f, 1, 0.25f, 2, 0.5f, 0.5f, 0.125f, 4};
  embedding_sgd_update({4, 1, 2}, tables, ids.data(), grad.data(), 0.5f);
  // Row 1: 1 - 0.5*(0.5+0.25+0.125), 1 - 0.5*(1+2+4); row 2: 1 - 0.5*0.5 twice.
  EXPECT_EQ(table, (std::vector<float>{1, 1, 0.5625f, -2.5f, 0.75f, 0.75f}));
}

// A hot row at a large batch: each sample's step (1e-8) is below half an ulp
// of the row's value (1.0), so applying them one by one would leave the row
// unchanged. The summed update moves it by lr·Σg, as the GPU's does.
TEST(EmbeddingTest, ManySmallContributionsToAHotRowAreNotRoundedAway) {
  constexpr int64_t kBatch = 4099;
  std::vector<float> table = {1.0f, 1.0f, 1.0f, 1.0f};  // 2 rows, dim 2
  float* tables[] = {table.data()};
  const std::vector<int32_t> ids(kBatch, 1);
  const std::vector<float> grad(2 * kBatch, 1e-8f);
  embedding_sgd_update({kBatch, 1, 2}, tables, ids.data(), grad.data(), 1.0f);
  EXPECT_EQ(table[0], 1.0f);  // row 0: never looked up
  EXPECT_NEAR(1.0 - table[2], kBatch * 1e-8, 1e-7);
  EXPECT_EQ(table[2], table[3]);
}

// The update must move each row by -lr times the gradient of Σ out·grad; the
// lookup is linear in every table entry, so central differences are exact up
// to the rounding of the outputs the entry feeds.
TEST(EmbeddingTest, UpdateMatchesFiniteDifferences) {
  constexpr float kStep = 0.0625f;
  constexpr float kLearningRate = 0.5f;
  const std::vector<std::vector<int32_t>> row_sets = {{1}, {3, 1, 7}, {2, 17, 5, 1}};
  for (const auto& rows : row_sets) {
    for (int64_t batch : {1, 3, 17}) {
      for (int64_t dim : {1, 3, 7}) {
        Problem p({batch, static_cast<int>(rows.size()), dim}, rows, 3);
        std::vector<float> out(p.grad.size());
        const auto loss = [&] {
          embedding_forward(p.shape, p.const_pointers().data(), p.ids.data(), out.data());
          double sum = 0;
          for (size_t i = 0; i < out.size(); ++i) sum += static_cast<double>(out[i]) * p.grad[i];
          return sum;
        };
        const std::vector<std::vector<float>> before = p.tables;
        std::vector<std::vector<float>> expected = p.tables;
        for (size_t t = 0; t < p.tables.size(); ++t) {
          for (size_t i = 0; i < p.tables[t].size(); ++i) {
            float& entry = p.tables[t][i];
            const float saved = entry;
            entry = saved + kStep;
            const double plus = loss();
            const double up = entry;
            entry = saved - kStep;
            const double minus = loss();
            const double down = entry;
            entry = saved;
            const double gradient = (plus - minus) / (up - down);
            expected[t][i] = static_cast<float>(saved - kLearningRate * gradient);
          }
        }
        embedding_sgd_update(p.shape, p.pointers().data(), p.ids.data(), p.grad.data(),
                             kLearningRate);
        for (size_t t = 0; t < p.tables.size(); ++t) {
          for (size_t i = 0; i < p.tables[t].size(); ++i) {
            ASSERT_NEAR(p.tables[t][i], expected[t][i], 1e-5)
                << "table " << t << " row " << i / dim << " col " << i % dim << " (before "
                << before[t][i] << ") " << p.describe();
          }
        }
      }
    }
  }
}

TEST(EmbeddingTest, UpdateIsIndependentOfThreadCount) {
  const std::vector<int32_t> rows = {5, 3, 11, 2, 7};  // small tables: many repeated ids
  Problem one({1001, 5, 9}, rows, 13);
  Problem three({1001, 5, 9}, rows, 13);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  embedding_sgd_update(one.shape, one.pointers().data(), one.ids.data(), one.grad.data(), 0.1f);
  omp_set_num_threads(3);
  embedding_sgd_update(three.shape, three.pointers().data(), three.ids.data(), three.grad.data(),
                       0.1f);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.tables, three.tables);
}

TEST(EmbeddingTest, LookupOfManySamples) {
  const std::vector<int32_t> rows = {1, 3, 7, 17, 1000};
  Problem p({2049, 5, 3}, rows, 17);
  std::vector<float> out(p.grad.size());
  embedding_forward(p.shape, p.const_pointers().data(), p.ids.data(), out.data());
  for (int64_t b = 0; b < p.shape.batch; ++b) {
    for (int t = 0; t < p.shape.num_tables; ++t) {
      const int64_t slot = b * p.shape.num_tables + t;
      for (int64_t d = 0; d < p.shape.dim; ++d) {
        ASSERT_EQ(out[slot * p.shape.dim + d], p.tables[t][p.ids[slot] * p.shape.dim + d])
            << "sample " << b << " table " << t << " col " << d << " " << p.describe();
      }
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
