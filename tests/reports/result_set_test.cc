// Loading result sets (valid and invalid files) and grouping runs into points.
#include "reports/result_set.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;
using testing::FakeSpec;
using testing::make_result;
using testing::runs_with_times;
using testing::write_file;

TEST(ResultSet, GroupsSeedsOfOnePointAcrossFiles) {
  testing::TempDir tmp("group");
  const fs::path& dir = tmp.path();
  FakeSpec a;
  write_file(dir / "a" / "result.json", make_result(a, runs_with_times({10, 11, 12})).dump());
  a.first_seed = 4;
  write_file(dir / "b" / "nested" / "result.json",
             make_result(a, runs_with_times({13, 14})).dump());
  FakeSpec graphs;
  graphs.toggles_on = {"cuda_graphs"};
  write_file(dir / "c" / "result.json", make_result(graphs, runs_with_times({9})).dump());
  write_file(dir / "c" / "other.json", "{}");  // Not named result.json: not picked up.

  ResultSet set = load_result_set({dir});
  ASSERT_EQ(set.results.size(), 3u);
  EXPECT_TRUE(set.skipped.empty());
  std::vector<Point> points = group_points(set);
  ASSERT_EQ(points.size(), 2u);
  // All toggles off sorts first.
  EXPECT_EQ(points[0].label, "cuda_graphs=off");
  EXPECT_EQ(points[1].label, "cuda_graphs=on");
  ASSERT_EQ(points[0].runs.size(), 5u);
  EXPECT_EQ(points[0].runs[3].seed, 4u);
  EXPECT_DOUBLE_EQ(points[0].runs[4].time_to_train_s, 14);
  EXPECT_EQ(points[0].sources.size(), 2u);
  EXPECT_EQ(points[0].runs[3].log, dir / "b" / "nested" / "run_0.log");
  EXPECT_EQ(points[0].metric, "AUC");
  ASSERT_TRUE(points[0].target);
  EXPECT_DOUBLE_EQ(*points[0].target, 0.74);
  // Olympic mean of 10..14: drop 10 and 14.
  ASSERT_TRUE(points[0].score().value);
  EXPECT_DOUBLE_EQ(*points[0].score().value, 12);
  ASSERT_EQ(points[1].toggles.size(), 4u);
  EXPECT_EQ(points[1].toggles[0].name, "cuda_graphs");
  EXPECT_TRUE(points[1].toggles[0].requested);
  EXPECT_FALSE(points[1].toggles[0].in_effect);
  EXPECT_EQ(points[1].toggles[0].reason, "no cuda_graphs on cpu");
}

TEST(ResultSet, SortsByParamsAndLabelsWhatVaries) {
  testing::TempDir tmp("sort");
  const fs::path& dir = tmp.path();
  FakeSpec big, small;
  big.params = {{"batch_size", 1024}, {"learning_rate", 2.0}};
  small.params = {{"batch_size", 512}, {"learning_rate", 2.0}};
  small.toggles_on = {"fused"};
  write_file(dir / "1" / "result.json", make_result(big, runs_with_times({1})).dump());
  write_file(dir / "2" / "result.json", make_result(small, runs_with_times({1})).dump());
  std::vector<Point> points = group_points(load_result_set({dir}));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].label, "batch_size=512 fused=on");
  EXPECT_EQ(points[1].label, "batch_size=1024 fused=off");
  EXPECT_EQ(points[0].title_without({"batch_size", "fused"}), "dlrm preset=tiny");
  ASSERT_TRUE(points[1].param_number("batch_size"));
  EXPECT_DOUBLE_EQ(*points[1].param_number("batch_size"), 1024);
}

TEST(ResultSet, SinglePointIsLabelledByWorkloadAndPreset) {
  testing::TempDir tmp("single");
  const fs::path& dir = tmp.path();
  write_file(dir / "result.json", make_result({}, runs_with_times({1, 2})).dump());
  std::vector<Point> points = group_points(load_result_set({dir / "result.json"}));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].label, "dlrm tiny");
}

TEST(ResultSet, InvalidFilesAreSkippedWithAReason) {
  testing::TempDir tmp("invalid");
  const fs::path& dir = tmp.path();
  write_file(dir / "good" / "result.json", make_result({}, runs_with_times({1})).dump());
  write_file(dir / "badjson" / "result.json", "{ not json");
  nlohmann::json future = make_result({}, runs_with_times({1}));
  future["schema_version"] = 3;  // newer than this perflab reads
  write_file(dir / "future" / "result.json", future.dump());
  nlohmann::json no_runs = make_result({}, runs_with_times({1}));
  no_runs.erase("runs");
  write_file(dir / "noruns" / "result.json", no_runs.dump());
  nlohmann::json empty_runs = make_result({}, runs_with_times({1}));
  empty_runs["runs"] = nlohmann::json::array();
  write_file(dir / "emptyruns" / "result.json", empty_runs.dump());
  write_file(dir / "array" / "result.json", "[1, 2]");

  ResultSet set = load_result_set({dir});
  ASSERT_EQ(set.results.size(), 1u);
  ASSERT_EQ(set.skipped.size(), 5u);
  auto skipped = [&](const std::string& sub) {
    for (const std::string& s : set.skipped) {
      if (s.rfind((dir / sub / "result.json").string() + ": ", 0) == 0) return s;
    }
    return std::string("(none)");
  };
  EXPECT_NE(skipped("badjson").find("not valid JSON"), std::string::npos) << skipped("badjson");
  EXPECT_NE(skipped("future").find("schema_version 3"), std::string::npos) << skipped("future");
  EXPECT_NE(skipped("noruns").find("missing 'runs'"), std::string::npos) << skipped("noruns");
  EXPECT_NE(skipped("emptyruns").find("'runs' is empty"), std::string::npos);
  EXPECT_NE(skipped("array").find("not a JSON object"), std::string::npos);
  EXPECT_EQ(group_points(set).size(), 1u);
}

TEST(ResultSet, MissingPathIsAUsageError) {
  EXPECT_THROW(load_result_set({"/nonexistent/perflab/results"}), UsageError);
}

// A folder scan skips hidden folders: a run still being written
// (.NAME.partial-PID@HOST, about to be renamed into place) is not counted,
// nor counted twice once it is.
TEST(ResultSet, HiddenWorkFoldersAreNotRead) {
  testing::TempDir tmp("hidden");
  const fs::path& dir = tmp.path();
  write_file(dir / "done" / "result.json", make_result({}, runs_with_times({1})).dump());
  write_file(dir / ".run.partial-123@host" / "result.json", make_result({}, runs_with_times({2})).dump());
  write_file(dir / ".hidden" / "deeper" / "result.json", make_result({}, runs_with_times({3})).dump());
  ResultSet set = load_result_set({dir});
  EXPECT_EQ(set.results.size(), 1u);
  EXPECT_TRUE(set.skipped.empty());
}

TEST(ResultSet, SameFileTwiceIsReadOnce) {
  testing::TempDir tmp("twice");
  const fs::path& dir = tmp.path();
  write_file(dir / "result.json", make_result({}, runs_with_times({1})).dump());
  ResultSet set = load_result_set({dir, dir / "result.json", dir / "." / "result.json"});
  EXPECT_EQ(set.results.size(), 1u);
}

TEST(ResultSet, AbortedRunCountsAsSlowest) {
  testing::TempDir tmp("aborted");
  const fs::path& dir = tmp.path();
  auto runs = runs_with_times({8, 100, 9});
  runs[1].success = false;
  write_file(dir / "result.json", make_result({}, runs).dump());
  std::vector<Point> points = group_points(load_result_set({dir}));
  ASSERT_EQ(points.size(), 1u);
  Score s = points[0].score();
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 9);  // 8, 9, aborted: drop 8 and the aborted run.
  EXPECT_FALSE(points[0].runs[1].success);
  EXPECT_EQ(points[0].runs[1].reason, "target not reached in 8 epochs");
}

}  // namespace
}  // namespace perflab::reports
