// Tests for the CPU DLRM model (workloads/dlrm/model.h): shape checks and
// counts, seeded initialisation, gradients of the whole model against
// central finite differences (dense parameters and touched embedding rows),
// bit-reproducible training, and learning a separable synthetic problem.
#include "workloads/dlrm/model.h"

#include "kernels/half_precision.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/support/dlrm_batch.h"
#include "workloads/dlrm/init_random.h"

namespace perflab::dlrm {
namespace {

using Batch = test_support::DlrmBatch;

/// Random features; the label is 1 when a linear score of the first two
/// dense features and whether the first table's id is in its lower half is
/// positive, so the problem is separable through both the dense and the
/// sparse path.
Batch make_batch(const ModelShape& shape, int64_t size, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Batch batch;
  for (int64_t b = 0; b < size; ++b) {
    for (int i = 0; i < shape.num_dense; ++i) batch.dense.push_back(normal(gen));
    for (int64_t rows : shape.table_sizes) {
      const auto last = static_cast<int32_t>(rows - 1);
      batch.categorical.push_back(std::uniform_int_distribution<int32_t>(0, last)(gen));
    }
    const float* x = &batch.dense[b * shape.num_dense];
    const int64_t id0 =
        shape.table_sizes.empty() ? 0 : batch.categorical[b * shape.table_sizes.size()];
    const float sparse =
        shape.table_sizes.empty() ? 0.0f : (2 * id0 < shape.table_sizes[0] ? 1.0f : -1.0f);
    const float score = x[0] - (shape.num_dense > 1 ? x[1] : 0.0f) + sparse;
    batch.labels.push_back(score > 0 ? 1.0f : 0.0f);
  }
  return batch;
}

ModelShape small_shape() {
  ModelShape s;
  s.num_dense = 3;
  s.table_sizes = {2, 5, 7};
  s.embed_dim = 4;
  s.bottom_mlp = {8, 4};
  s.top_mlp = {6, 1};
  return s;
}

/// The tiny preset's layer sizes, with small tables.
ModelShape tiny_preset_shape() {
  ModelShape s;
  s.num_dense = 13;
  for (int t = 0; t < 26; ++t) s.table_sizes.push_back(3 + 37 * t);
  s.embed_dim = 16;
  s.bottom_mlp = {64, 32, 16};
  s.top_mlp = {64, 32, 1};
  return s;
}

/// Every parameter value, dense then embedding rows, for exact comparisons.
std::vector<float> all_parameters(CpuModel& model) {
  std::vector<float> values;
  for (const DenseParameter& p : model.dense_parameters()) {
    values.insert(values.end(), p.value, p.value + p.size);
  }
  const ModelShape& s = model.shape();
  for (size_t t = 0; t < s.table_sizes.size(); ++t) {
    const float* first = model.embedding_row(static_cast<int>(t), 0);
    values.insert(values.end(), first, first + s.table_sizes[t] * s.embed_dim);
  }
  return values;
}

TEST(DlrmModelTest, RejectsInvalidShapes) {
  const auto expect_rejected = [](ModelShape s, const char* why) {
    EXPECT_THROW(CpuModel(std::move(s), 1), UsageError) << why;
  };
  ModelShape s = small_shape();
  s.bottom_mlp = {8, 5};
  expect_rejected(s, "bottom MLP does not end at embed_dim");
  s = small_shape();
  s.top_mlp = {6, 2};
  expect_rejected(s, "top MLP does not end at 1");
  s = small_shape();
  s.top_mlp = {};
  expect_rejected(s, "no top MLP");
  s = small_shape();
  s.table_sizes = {3, 0};
  expect_rejected(s, "empty table");
  s = small_shape();
  s.bottom_mlp = {0, 4};
  expect_rejected(s, "zero-width layer");
}

TEST(DlrmModelTest, CountsOfTheTinyPreset) {
  const ModelShape s = tiny_preset_shape();
  const CpuModel model(s, 1);
  // Bottom 13-64-32-16, top (16 + 27*26/2 = 367)-64-32-1, weights and biases.
  const int64_t dense = (13 * 64 + 64) + (64 * 32 + 32) + (32 * 16 + 16) + (367 * 64 + 64) +
                        (64 * 32 + 32) + (32 * 1 + 1);
  int64_t rows = 0;
  for (int64_t r : s.table_sizes) rows += r;
  EXPECT_EQ(model.parameter_count(), dense + rows * 16);
  const double multiply_adds = 13 * 64 + 64 * 32 + 32 * 16 + 367 * 64 + 64 * 32 + 32 * 1 + 351 * 16;
  EXPECT_DOUBLE_EQ(model.flops_per_sample_forward(), 2 * multiply_adds);
}

TEST(DlrmModelTest, InitialisationIsSeededAndThreadIndependent) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  CpuModel one(tiny_preset_shape(), 42);
  omp_set_num_threads(2);
  CpuModel two(tiny_preset_shape(), 42);
  CpuModel other(tiny_preset_shape(), 43);
  omp_set_num_threads(threads);
  EXPECT_EQ(all_parameters(one), all_parameters(two));
  EXPECT_NE(all_parameters(one), all_parameters(other));
}

TEST(DlrmModelTest, InitialisationFollowsTheDlrmReference) {
  ModelShape s = tiny_preset_shape();
  s.table_sizes[0] = 400;
  s.table_sizes[1] = 3;
  CpuModel model(s, 7);
  for (const DenseParameter& p : model.dense_parameters()) {
    if (p.name != "top.0.weight") continue;  // 64 x 367: enough samples for the moments
    double sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < p.size; ++i) {
      sum += p.value[i];
      sum_sq += static_cast<double>(p.value[i]) * p.value[i];
    }
    const double n = static_cast<double>(p.size);
    EXPECT_NEAR(sum / n, 0.0, 0.002);
    EXPECT_NEAR(std::sqrt(sum_sq / n), std::sqrt(2.0 / (367 + 64)), 0.002);
  }
  for (int t = 0; t < 2; ++t) {
    const double bound = std::sqrt(1.0 / static_cast<double>(s.table_sizes[t]));
    const float* row = model.embedding_row(t, 0);
    float lo = 1, hi = -1;
    for (int64_t i = 0; i < s.table_sizes[t] * s.embed_dim; ++i) {
      lo = std::min(lo, row[i]);
      hi = std::max(hi, row[i]);
    }
    EXPECT_GE(lo, -bound) << "table " << t;
    EXPECT_LE(hi, bound) << "table " << t;
    EXPECT_LT(lo, -0.8 * bound) << "table " << t;  // fills the interval
    EXPECT_GT(hi, 0.8 * bound) << "table " << t;
  }
}

// The tables' values are init_random.h's, which the GPU draws too
// (CudaModelOptions::table_seed): every element of tables at odd sizes,
// exactly. Pins the one definition both sides compute, and that a model
// without tables (kExternal) starts from the same dense parameters.
TEST(DlrmModelTest, TablesAreTheSharedInitialValues) {
  ModelShape s = tiny_preset_shape();
  s.table_sizes.resize(4);
  s.table_sizes[0] = 1;
  s.table_sizes[3] = 1001;
  s.embed_dim = 16;
  const uint64_t seed = 12345;
  CpuModel model(s, seed);
  for (int t = 0; t < static_cast<int>(s.table_sizes.size()); ++t) {
    const uint64_t key = init_random::table_key(seed, t);
    const double bound = init_random::table_bound(s.table_sizes[static_cast<size_t>(t)]);
    const float* values = model.embedding_row(t, 0);
    for (int64_t i = 0; i < s.table_sizes[static_cast<size_t>(t)] * s.embed_dim; ++i) {
      ASSERT_EQ(values[i], init_random::table_value(key, bound, static_cast<uint64_t>(i))) << "table " << t << " value " << i;
    }
  }
  CpuModel tableless(s, seed, EmbeddingStorage::kExternal);
  const std::vector<DenseParameter> a = model.dense_parameters(), b = tableless.dense_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size, b[i].size);
    EXPECT_TRUE(std::equal(a[i].value, a[i].value + a[i].size, b[i].value)) << a[i].name;
  }
  // Different tables and seeds draw different values.
  EXPECT_NE(init_random::table_value(init_random::table_key(seed, 0), 1.0, 0),
            init_random::table_value(init_random::table_key(seed, 1), 1.0, 0));
  EXPECT_NE(init_random::table_value(init_random::table_key(seed, 0), 1.0, 0),
            init_random::table_value(init_random::table_key(seed + 1, 0), 1.0, 0));
}

// Central differences of the whole model's loss against forward_backward, on
// a sample of every dense tensor and on every touched embedding row (the
// 2-row table is touched repeatedly in the batch). The model is float, so the
// step is moderate; a parameter whose step moves a ReLU input across zero
// shows up as a disagreement between steps h and h/2 and is skipped (counted).
TEST(DlrmModelTest, GradientsMatchFiniteDifferences) {
  const ModelShape s = small_shape();
  CpuModel model(s, 3);
  const Batch batch = make_batch(s, 5, 11);
  model.forward_backward(batch.view());

  struct Probe {
    std::string where;
    float* value;
    double gradient;
  };
  std::vector<Probe> probes;
  std::mt19937 gen(5);
  for (const DenseParameter& p : model.dense_parameters()) {
    std::set<int64_t> picks = {0, p.size - 1};
    while (static_cast<int64_t>(picks.size()) < std::min<int64_t>(p.size, 8)) {
      picks.insert(std::uniform_int_distribution<int64_t>(0, p.size - 1)(gen));
    }
    for (int64_t i : picks) {
      probes.push_back({p.name + "[" + std::to_string(i) + "]", p.value + i, p.gradient[i]});
    }
  }
  std::vector<float> row_grad(static_cast<size_t>(s.embed_dim));
  for (int t = 0; t < static_cast<int>(s.table_sizes.size()); ++t) {
    for (int64_t row = 0; row < s.table_sizes[t]; ++row) {
      model.embedding_row_gradient(t, row, row_grad.data());
      for (int d = 0; d < s.embed_dim; ++d) {
        probes.push_back({"table" + std::to_string(t) + "[" + std::to_string(row) + "," +
                              std::to_string(d) + "]",
                          model.embedding_row(t, row) + d, row_grad[d]});
      }
    }
  }

  const auto difference = [&](float* value, float step) {
    const float saved = *value;
    *value = saved + step;
    const double up = *value;
    const double plus = model.forward_backward(batch.view());
    *value = saved - step;
    const double down = *value;
    const double minus = model.forward_backward(batch.view());
    *value = saved;
    return (plus - minus) / (up - down);
  };
  constexpr float kStep = 1e-2f;
  int checked = 0, skipped = 0;
  for (const Probe& probe : probes) {
    const double coarse = difference(probe.value, kStep);
    const double fine = difference(probe.value, kStep / 2);
    const double tolerance = 1e-5 + 1e-2 * std::fabs(fine);
    if (std::fabs(coarse - fine) > tolerance) {
      ++skipped;
      continue;
    }
    ++checked;
    EXPECT_NEAR(probe.gradient, fine, tolerance)
        << probe.where << " (batch 5, tables 2/5/7, dim 4, bottom 3-8-4, top 10-6-1)";
  }
  EXPECT_GE(checked, 9 * (checked + skipped) / 10) << skipped << " probes crossed a ReLU kink";
}

TEST(DlrmModelTest, TrainStepIsForwardBackwardThenApply) {
  const ModelShape s = small_shape();
  CpuModel a(s, 9), b(s, 9);
  const Batch batch = make_batch(s, 17, 2);
  const double loss_a = a.train_step(batch.view(), 0.25f);
  const double loss_b = b.forward_backward(batch.view());
  b.apply_gradients(0.25f);
  EXPECT_EQ(loss_a, loss_b);
  EXPECT_EQ(all_parameters(a), all_parameters(b));
  EXPECT_THROW(b.apply_gradients(0.25f), std::logic_error) << "gradients applied twice";
}

TEST(DlrmModelTest, PredictMatchesLossAndKeepsPendingGradients) {
  const ModelShape s = small_shape();
  CpuModel a(s, 4), b(s, 4);
  const Batch train = make_batch(s, 7, 3);
  const Batch eval = make_batch(s, 301, 4);  // larger: the buffers grow in between
  const double loss = a.forward_backward(train.view());
  std::vector<float> p(eval.labels.size());
  a.predict(eval.view(), p.data());
  a.apply_gradients(0.5f);
  b.train_step(train.view(), 0.5f);
  EXPECT_EQ(all_parameters(a), all_parameters(b));

  std::vector<float> q(train.labels.size());
  CpuModel c(s, 4);
  c.predict(train.view(), q.data());
  double bce = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    bce -= train.labels[i] > 0 ? std::log(q[i]) : std::log1p(-static_cast<double>(q[i]));
  }
  EXPECT_NEAR(bce / static_cast<double>(q.size()), loss, 1e-6);
}

TEST(DlrmModelTest, RejectsIdsOutsideTheirTable) {
  const ModelShape s = small_shape();
  CpuModel model(s, 1);
  Batch batch = make_batch(s, 3, 1);
  batch.categorical[1 * 3 + 0] = 2;  // table 0 has 2 rows
  EXPECT_THROW(model.forward_backward(batch.view()), UsageError);
  batch.categorical[1 * 3 + 0] = -1;
  EXPECT_THROW(model.train_step(batch.view(), 0.1f), UsageError);
}

TEST(DlrmModelTest, TrainingIsBitReproducible) {
  const ModelShape s = tiny_preset_shape();
  CpuModel a(s, 17), b(s, 17);
  for (uint32_t step = 0; step < 4; ++step) {
    const Batch batch = make_batch(s, step == 2 ? 511 : 256, 100 + step);
    const double loss_a = a.train_step(batch.view(), 0.1f);
    const double loss_b = b.train_step(batch.view(), 0.1f);
    ASSERT_EQ(loss_a, loss_b) << "step " << step;
  }
  EXPECT_EQ(all_parameters(a), all_parameters(b));
}

/// Trains on the separable problem of make_batch and expects the loss to
/// fall well below where it started.
void expect_learns_separable_problem(CpuPrecision precision) {
  ModelShape s;
  s.num_dense = 4;
  s.table_sizes = {10, 6, 9};
  s.embed_dim = 8;
  s.bottom_mlp = {16, 8};
  s.top_mlp = {16, 1};
  CpuModel model(s, 5, EmbeddingStorage::kTables, precision);
  constexpr int kSteps = 300;
  double first = 0, last = 0;
  for (int step = 0; step < kSteps; ++step) {
    const Batch batch = make_batch(s, 64, static_cast<uint32_t>(1000 + step));
    const double loss = model.train_step(batch.view(), 0.2f);
    if (step < 20) first += loss / 20;
    if (step >= kSteps - 20) last += loss / 20;
  }
  EXPECT_LT(last, 0.5 * first) << "mean loss of the first 20 steps " << first;
  EXPECT_LT(last, 0.3);
}

TEST(DlrmModelTest, SgdLearnsASeparableProblem) { expect_learns_separable_problem(CpuPrecision::kFp32); }

/// True when every value is a bf16 value (rounding it changes nothing).
bool all_bf16(const std::vector<float>& values) {
  for (float v : values) {
    if (from_bf16(to_bf16(v)) != v) return false;
  }
  return true;
}

// Emulated bf16: the tables hold bf16 values from the start and after every
// (stochastically rounded) update; the fp32 master weights move off the bf16
// grid; two models of one seed agree bit for bit (the rounding draws from
// counters, not from the thread schedule).
TEST(DlrmModelBf16, TablesStayBf16AndTrainingIsReproducible) {
  const ModelShape s = tiny_preset_shape();
  CpuModel a(s, 17, EmbeddingStorage::kTables, CpuPrecision::kBf16);
  CpuModel b(s, 17, EmbeddingStorage::kTables, CpuPrecision::kBf16);
  EXPECT_EQ(a.precision(), CpuPrecision::kBf16);
  const auto tables = [&](CpuModel& m) {
    std::vector<float> v;
    for (size_t t = 0; t < s.table_sizes.size(); ++t) {
      const float* first = m.embedding_row(static_cast<int>(t), 0);
      v.insert(v.end(), first, first + s.table_sizes[t] * s.embed_dim);
    }
    return v;
  };
  EXPECT_TRUE(all_bf16(tables(a)));
  for (uint32_t step = 0; step < 4; ++step) {
    const Batch batch = make_batch(s, step == 2 ? 511 : 256, 100 + step);
    ASSERT_EQ(a.train_step(batch.view(), 0.1f), b.train_step(batch.view(), 0.1f)) << "step " << step;
  }
  EXPECT_TRUE(all_bf16(tables(a)));
  EXPECT_EQ(all_parameters(a), all_parameters(b));
  std::vector<float> dense;
  for (const DenseParameter& p : a.dense_parameters()) dense.insert(dense.end(), p.value, p.value + p.size);
  EXPECT_FALSE(all_bf16(dense)) << "the master weights are fp32";
}

// The first step's loss in bf16 against fp32 from the same initial model
// (whose tables are rounded to bf16 in both, by building the fp32 model
// from the bf16 one's values): every stored value is within 2^-9 relative of
// fp32's, and the loss, a mean of smooth functions of the logits, moves by
// far less than 1% through the tiny preset's six layers (measured: 8e-5).
TEST(DlrmModelBf16, LossIsCloseToFp32) {
  const ModelShape s = tiny_preset_shape();
  CpuModel fp32(s, 23);
  CpuModel bf16(s, 23, EmbeddingStorage::kTables, CpuPrecision::kBf16);
  for (size_t t = 0; t < s.table_sizes.size(); ++t) {
    const auto n = static_cast<size_t>(s.table_sizes[t] * s.embed_dim);
    std::copy_n(bf16.embedding_row(static_cast<int>(t), 0), n, fp32.embedding_row(static_cast<int>(t), 0));
  }
  const Batch batch = make_batch(s, 257, 7);
  const double loss32 = fp32.forward_backward(batch.view());
  const double loss16 = bf16.forward_backward(batch.view());
  EXPECT_NEAR(loss16, loss32, 0.01 * loss32);
  EXPECT_NE(loss16, loss32) << "bf16 rounding changed nothing";
}

// bf16 learns what fp32 learns (the separable problem above).
TEST(DlrmModelBf16, SgdLearnsASeparableProblem) { expect_learns_separable_problem(CpuPrecision::kBf16); }

}  // namespace
}  // namespace perflab::dlrm
