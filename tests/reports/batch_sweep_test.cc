// Batch-size sweep table values and best-batch marking, hand-worked.
#include "reports/batch_sweep.h"

#include <gtest/gtest.h>

#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

using testing::FakeRun;
using testing::FakeSpec;
using testing::make_result;

FakeSpec batch(int64_t size, double lr, int64_t iterations_per_epoch) {
  FakeSpec s;
  s.params = {{"batch_size", size}, {"learning_rate", lr}, {"embed_dim", 16}};
  s.iterations_per_epoch = iterations_per_epoch;
  return s;
}

std::vector<FakeRun> runs(const std::vector<double>& times, const std::vector<double>& epochs,
                          int64_t iterations_per_epoch, double iteration_ms) {
  std::vector<FakeRun> out;
  for (size_t i = 0; i < times.size(); ++i) {
    FakeRun r;
    r.time_to_train_s = times[i];
    r.epochs = epochs[i];
    r.iterations = static_cast<int64_t>(epochs[i] * static_cast<double>(iterations_per_epoch));
    r.iteration_ms = iteration_ms + static_cast<double>(i);
    out.push_back(r);
  }
  return out;
}

ResultSet set_of(const std::vector<nlohmann::json>& docs) {
  ResultSet set;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::filesystem::path path = "/r/" + std::to_string(i) + "/result.json";
    set.results.push_back({path, parse_result(docs[i], path)});
  }
  return set;
}

TEST(BatchSweep, TableValuesAndBest) {
  auto big = runs({20, 30, 25}, {3, 3.5, 4}, 64, 4);
  big[1].success = false;  // Aborted: not in the epoch statistics, slowest in the score.
  std::vector<BatchSweep> sweeps = batch_sweeps(group_points(set_of({
      make_result(batch(1024, 4.0, 64), big),
      make_result(batch(256, 1.0, 256), runs({10, 12, 14}, {1, 1.5, 2}, 256, 1)),
      make_result(batch(512, 2.0, 128), runs({8, 9, 11}, {2, 2.5, 3}, 128, 2)),
  })));
  ASSERT_EQ(sweeps.size(), 1u);
  const BatchSweep& s = sweeps[0];
  EXPECT_EQ(s.title, "dlrm preset=tiny");
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].batch_size, 256);
  EXPECT_EQ(s.rows[1].batch_size, 512);
  EXPECT_EQ(s.rows[2].batch_size, 1024);

  const BatchSweepRow& r256 = s.rows[0];
  EXPECT_DOUBLE_EQ(*r256.learning_rate, 1.0);
  EXPECT_EQ(r256.iterations_per_epoch, 256);
  EXPECT_EQ(r256.converged, 3u);
  EXPECT_DOUBLE_EQ(*r256.epochs_mean, 1.5);
  EXPECT_NEAR(*r256.epochs_stddev, 0.5, 1e-12);     // Sample stddev of 1, 1.5, 2.
  EXPECT_DOUBLE_EQ(*r256.iterations_mean, 384);     // 256, 384, 512.
  EXPECT_DOUBLE_EQ(*r256.iteration_ms, 2);          // 1, 2, 3.
  EXPECT_DOUBLE_EQ(*r256.time_to_train.value, 12);  // Drop 10 and 14.
  EXPECT_FALSE(r256.best);

  const BatchSweepRow& r512 = s.rows[1];
  EXPECT_DOUBLE_EQ(*r512.epochs_mean, 2.5);
  EXPECT_DOUBLE_EQ(*r512.iterations_mean, 320);  // 256, 320, 384.
  EXPECT_DOUBLE_EQ(*r512.time_to_train.value, 9);
  EXPECT_TRUE(r512.best);
  ASSERT_TRUE(s.best);
  EXPECT_EQ(*s.best, 1u);

  const BatchSweepRow& r1024 = s.rows[2];
  EXPECT_EQ(r1024.runs, 3u);
  EXPECT_EQ(r1024.converged, 2u);
  EXPECT_DOUBLE_EQ(*r1024.epochs_mean, 3.5);  // 3 and 4.
  EXPECT_NEAR(*r1024.epochs_stddev, std::sqrt(0.5), 1e-12);
  EXPECT_DOUBLE_EQ(*r1024.iteration_ms, 5);          // All runs: 4, 5, 6.
  EXPECT_DOUBLE_EQ(*r1024.time_to_train.value, 25);  // 20, 25, aborted: drop 20, aborted.
  EXPECT_FALSE(r1024.best);
}

TEST(BatchSweep, OneConvergedRunHasNoStddev) {
  auto lone = runs({5, 6}, {1, 2}, 128, 1);
  lone[1].success = false;
  std::vector<BatchSweep> sweeps = batch_sweeps(group_points(set_of({
      make_result(batch(256, 1.0, 256), runs({10}, {1}, 256, 1)),
      make_result(batch(512, 1.0, 128), lone),
  })));
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_FALSE(sweeps[0].rows[1].epochs_stddev);
  EXPECT_DOUBLE_EQ(*sweeps[0].rows[1].epochs_mean, 1);
  EXPECT_FALSE(sweeps[0].rows[1].time_to_train.value);  // Two runs, one failed: no score.
  EXPECT_TRUE(sweeps[0].rows[0].best);
}

TEST(BatchSweep, SeparateSweepsForOtherParamsAndNoneForOneBatchSize) {
  FakeSpec wide = batch(512, 2.0, 128);
  wide.params["embed_dim"] = 32;
  FakeSpec wide_small = batch(256, 1.0, 256);
  wide_small.params["embed_dim"] = 32;
  FakeSpec lone = batch(256, 1.0, 256);
  lone.params["embed_dim"] = 64;
  FakeSpec lone_lr = batch(256, 3.0, 256);
  lone_lr.params["embed_dim"] = 64;
  std::vector<BatchSweep> sweeps = batch_sweeps(group_points(set_of({
      make_result(batch(256, 1.0, 256), runs({1}, {1}, 256, 1)),
      make_result(batch(512, 2.0, 128), runs({1}, {1}, 128, 1)),
      make_result(wide, runs({1}, {1}, 128, 1)), make_result(wide_small, runs({1}, {1}, 256, 1)),
      make_result(lone, runs({1}, {1}, 256, 1)),
      make_result(lone_lr, runs({1}, {1}, 256, 1)),  // Same batch size, other lr: no sweep.
  })));
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].title, "dlrm preset=tiny embed_dim=16");
  EXPECT_EQ(sweeps[1].title, "dlrm preset=tiny embed_dim=32");
  EXPECT_EQ(sweeps[1].rows[0].batch_size, 256);
}

}  // namespace
}  // namespace perflab::reports
