// Toggle matrix rows, intervals and speedups against hand-worked numbers.
#include "reports/toggle_matrix.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

using testing::FakeSpec;
using testing::make_result;
using testing::runs_with_times;

ResultSet set_of(const std::vector<nlohmann::json>& docs) {
  ResultSet set;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::filesystem::path path = "/r/" + std::to_string(i) + "/result.json";
    set.results.push_back({path, parse_result(docs[i], path)});
  }
  return set;
}

FakeSpec with_toggles(std::vector<std::string> on, std::vector<std::string> in_effect = {}) {
  FakeSpec s;
  s.toggles_on = std::move(on);
  s.in_effect = std::move(in_effect);
  return s;
}

TEST(ToggleMatrix, RowsSpeedupsAndIntervals) {
  auto graphs_runs = runs_with_times({8, 100, 9});
  graphs_runs[1].success = false;  // Counts as slowest: olympic mean 9.
  std::vector<Point> points = group_points(set_of({
      make_result(with_toggles({"cuda_graphs"}, {"cuda_graphs"}), graphs_runs),
      make_result(with_toggles({}), runs_with_times({10, 12, 14})),
      make_result(with_toggles({"cuda_graphs", "fused"}, {"cuda_graphs"}),
                  runs_with_times({6, 7, 8})),
  }));
  std::vector<ToggleMatrix> matrices = toggle_matrices(points);
  ASSERT_EQ(matrices.size(), 1u);
  const ToggleMatrix& m = matrices[0];
  EXPECT_TRUE(m.time_to_train);
  EXPECT_TRUE(m.has_baseline);
  EXPECT_EQ(m.title, "dlrm preset=tiny");
  ASSERT_EQ(m.rows.size(), 3u);

  const ToggleMatrixRow& base = m.rows[0];
  EXPECT_EQ(base.combination, "all off");
  EXPECT_TRUE(base.baseline);
  ASSERT_TRUE(base.value);
  EXPECT_DOUBLE_EQ(*base.value, 12);
  // Mean 12, s = 2, t(0.975, 2) = 4.302653, half width 4.302653 * 2 / sqrt(3) = 4.968275.
  EXPECT_EQ(base.ci.n, 3u);
  EXPECT_NEAR(base.ci.mean, 12, 1e-12);
  EXPECT_NEAR(base.ci.low, 7.031725, 1e-5);
  EXPECT_NEAR(base.ci.high, 16.968275, 1e-5);
  EXPECT_DOUBLE_EQ(*base.speedup, 1);

  const ToggleMatrixRow& graphs = m.rows[1];
  EXPECT_EQ(graphs.combination, "cuda_graphs");
  EXPECT_EQ(graphs.runs, 3u);
  EXPECT_EQ(graphs.succeeded, 2u);
  EXPECT_DOUBLE_EQ(*graphs.value, 9);
  EXPECT_EQ(graphs.ci.n, 2u);  // Successful runs only.
  EXPECT_NEAR(*graphs.speedup, 12.0 / 9.0, 1e-12);
  EXPECT_EQ(toggles_in_effect(graphs.toggles), "cuda_graphs");
  EXPECT_EQ(toggles_not_in_effect(graphs.toggles), "");

  const ToggleMatrixRow& both = m.rows[2];
  EXPECT_EQ(both.combination, "cuda_graphs+fused");
  EXPECT_DOUBLE_EQ(*both.value, 7);
  EXPECT_NEAR(*both.speedup, 12.0 / 7.0, 1e-12);
  EXPECT_EQ(toggles_in_effect(both.toggles), "cuda_graphs");
  EXPECT_EQ(toggles_not_in_effect(both.toggles), "fused (no fused on cpu)");
}

TEST(ToggleMatrix, NoBaselineGivesNoSpeedup) {
  std::vector<Point> points = group_points(set_of({
      make_result(with_toggles({"sharp"}), runs_with_times({10, 11, 12})),
      make_result(with_toggles({"fused"}), runs_with_times({5, 6, 7})),
  }));
  std::vector<ToggleMatrix> matrices = toggle_matrices(points);
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_FALSE(matrices[0].has_baseline);
  for (const ToggleMatrixRow& r : matrices[0].rows) {
    EXPECT_FALSE(r.speedup);
    EXPECT_TRUE(r.value);
    EXPECT_EQ(toggles_in_effect(r.toggles), "none");
  }
}

TEST(ToggleMatrix, NoScoreGivesNoSpeedup) {
  auto failing = runs_with_times({5, 6, 7});
  failing[0].success = failing[1].success = false;
  std::vector<Point> points = group_points(set_of({
      make_result(with_toggles({}), runs_with_times({10, 11, 12})),
      make_result(with_toggles({"fused"}), failing),
  }));
  const ToggleMatrix m = toggle_matrices(points).at(0);
  EXPECT_FALSE(m.rows[1].value);
  EXPECT_FALSE(m.rows[1].speedup);
  EXPECT_FALSE(m.rows[1].no_value_reason.empty());
  EXPECT_EQ(m.rows[1].ci.n, 1u);
}

TEST(ToggleMatrix, WithoutTargetUsesMedianThroughput) {
  FakeSpec off = with_toggles({}), on = with_toggles({"sync_free"});
  off.target = on.target = std::nullopt;
  auto slow = runs_with_times({1, 1, 1}), fast = runs_with_times({1, 1, 1});
  slow[0].throughput = 100, slow[1].throughput = 300, slow[2].throughput = 200;
  fast[0].throughput = 500, fast[1].throughput = 400, fast[2].throughput = 450;
  const ToggleMatrix m =
      toggle_matrices(group_points(set_of({make_result(off, slow), make_result(on, fast)}))).at(0);
  EXPECT_FALSE(m.time_to_train);
  EXPECT_EQ(m.value_name(), "throughput (samples/s)");
  EXPECT_DOUBLE_EQ(*m.rows[0].value, 200);
  EXPECT_DOUBLE_EQ(*m.rows[1].value, 450);
  EXPECT_DOUBLE_EQ(*m.rows[1].speedup, 450.0 / 200.0);
  EXPECT_NEAR(m.rows[1].ci.mean, 450, 1e-12);
}

TEST(ToggleMatrix, AThroughputPointWithAFailedGateHasNoValue) {
  // The median of a throughput point counts only when every run passed its
  // correctness gate (harness/scoring.h): no value, and the failed seed says why.
  FakeSpec off = with_toggles({}), on = with_toggles({"sync_free"});
  off.target = on.target = std::nullopt;
  off.throughput = on.throughput = true;
  auto good = runs_with_times({1, 1, 1}), failed = runs_with_times({1, 1, 1});
  failed[1].success = false;
  failed[1].throughput = 1e9;  // a failed gate's rate must not count
  const ToggleMatrix m =
      toggle_matrices(group_points(set_of({make_result(off, good), make_result(on, failed)}))).at(0);
  EXPECT_FALSE(m.time_to_train);
  ASSERT_TRUE(m.rows[0].value);
  EXPECT_DOUBLE_EQ(*m.rows[0].value, 1000);
  EXPECT_FALSE(m.rows[1].value);
  EXPECT_NE(m.rows[1].no_value_reason.find("seed 2:"), std::string::npos) << m.rows[1].no_value_reason;
  EXPECT_FALSE(m.rows[1].speedup);
}

TEST(ToggleMatrix, OnlyPointsThatDifferInTogglesAlone) {
  FakeSpec a = with_toggles({}), b = with_toggles({"fused"}), c = with_toggles({});
  c.params = {{"batch_size", 512}, {"learning_rate", 2.0}};
  std::vector<ToggleMatrix> matrices = toggle_matrices(group_points(set_of({
      make_result(a, runs_with_times({1})),
      make_result(b, runs_with_times({1})),
      make_result(c, runs_with_times({1})),
  })));
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_EQ(matrices[0].rows.size(), 2u);
  EXPECT_EQ(matrices[0].title, "dlrm preset=tiny batch_size=256 learning_rate=1.0");
}

}  // namespace
}  // namespace perflab::reports
