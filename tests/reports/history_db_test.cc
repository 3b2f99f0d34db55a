// The history database: record and read back, schema migration from
// version 1, files that are not ours refused with one line, the rolling
// baseline check, the change-point cache, and the OpenMetrics text.
#include "reports/history_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "reports/history_report.h"

namespace perflab::reports {
namespace {
namespace fs = std::filesystem;

class HistoryDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perflab_history_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

MetricSamples metric(const std::string& metric, std::vector<double> v, bool lower = true) {
  return {"{\"workload\":\"triad\"}", "triad stream", metric, lower ? "ms" : "samples/s", lower, std::move(v), 0};
}

NewHistoryRun run(const std::string& rev, std::vector<MetricSamples> metrics, const std::string& machine = "m1") {
  return {"2026-11-2" + rev.substr(0, 1) + "T00:00:00Z", rev, machine, {{"hostname", "h"}}, {"r"}, std::move(metrics)};
}

TEST_F(HistoryDbTest, RecordsAndReadsBack) {
  const fs::path p = dir_ / "h.sqlite";
  {
    HistoryDb db(p, true);
    EXPECT_EQ(db.schema_version(), kHistorySchemaVersion);
    EXPECT_EQ(db.record(run("1aaa", {metric("iteration_ms_p50", {1, 2, 3}), metric("throughput", {9, 10}, false)})), 1);
    EXPECT_EQ(db.record(run("2bbb", {metric("iteration_ms_p50", {4, 5, 6})}, "m2")), 2);
  }
  HistoryDb db(p, false);
  const auto runs = db.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].git_revision, "1aaa");
  EXPECT_EQ(runs[0].metrics, 2);
  EXPECT_EQ(db.runs("2026-11-22").size(), 1u);
  const auto s = db.series({"iteration_ms_p50", "", "", "", std::nullopt});
  ASSERT_EQ(s.size(), 2u);  // One series per machine.
  EXPECT_EQ(s[0].machine, "m1");
  ASSERT_EQ(s[0].values.size(), 1u);
  EXPECT_EQ(s[0].values[0].samples, (std::vector<double>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(s[0].values[0].median, 2);
  EXPECT_EQ(db.series({"", "", "m2", "", std::nullopt}).size(), 1u);
  EXPECT_EQ(db.series({"", "nothing like it", "", "", std::nullopt}).size(), 0u);
}

TEST_F(HistoryDbTest, MigratesVersionOne) {
  const fs::path p = dir_ / "v1.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
  // A version-1 file as perflab wrote it: runs and metrics, no change-point cache.
  const char* v1 =
      "CREATE TABLE runs(id INTEGER PRIMARY KEY, timestamp TEXT NOT NULL, recorded_at TEXT NOT NULL,"
      " git_revision TEXT NOT NULL, machine TEXT NOT NULL, environment TEXT NOT NULL, sources TEXT NOT NULL);"
      "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, point TEXT NOT NULL,"
      " label TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL, lower_is_better INTEGER NOT NULL,"
      " median REAL NOT NULL, samples TEXT NOT NULL, failed INTEGER NOT NULL, PRIMARY KEY(run_id, point, metric));"
      "CREATE INDEX metrics_by_series ON metrics(metric, point, run_id);"
      "INSERT INTO runs VALUES(1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', 'abc', 'm1', '{}', '[]');"
      "INSERT INTO metrics VALUES(1, 'p', 'triad stream', 'throughput', 'samples/s', 0, 5.0, '[4,5,6]', 0);"
      "PRAGMA application_id=1885760616; PRAGMA user_version=1;";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  HistoryDb db(p, false);
  EXPECT_EQ(db.schema_version(), 2);
  const auto s = db.series({"throughput", "", "", "", std::nullopt});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].values[0].samples, (std::vector<double>{4, 5, 6}));
  db.store_state(s[0], "k", {{"x", 1}});  // The table version 2 added.
  EXPECT_EQ((*db.cached_state(s[0], "k"))["x"], 1);
}

TEST_F(HistoryDbTest, RefusesFilesThatAreNotOurs) {
  auto message = [](const fs::path& p, bool create) -> std::string {
    try {
      HistoryDb db(p, create);
    } catch (const UsageError& e) {
      return e.what();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(dir_ / "absent.sqlite", false).find("no such history database"), std::string::npos);
  std::ofstream(dir_ / "text.sqlite") << "this is a text file, long enough to be read as a database header.......\n"
                                      << std::string(4096, 'x');
  EXPECT_NE(message(dir_ / "text.sqlite", true).find("not a perflab history database"), std::string::npos);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "foreign.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t(x);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_NE(message(dir_ / "foreign.sqlite", false).find("another application"), std::string::npos);
  ASSERT_EQ(sqlite3_open((dir_ / "newer.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA application_id=1885760616; PRAGMA user_version=99; CREATE TABLE t(x);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_NE(message(dir_ / "newer.sqlite", false).find("newer than this perflab"), std::string::npos);
  EXPECT_NE(message(dir_, true).find("is a folder"), std::string::npos);
}

/// The bytes of a file.
std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A current database whose version was damaged: negative versions used to
// index before the migrations array (a crash, or garbage run as SQL), and
// versions 0 and 1 re-ran migrations whose tables exist. Each is one Error
// naming the file and the version (exit 1), and the file is not written.
TEST_F(HistoryDbTest, RefusesDamagedVersionsAndLeavesTheFileAsItIs) {
  struct Case {
    const char* version;
    const char* says;
  };
  const Case cases[] = {{"-16777214", "damaged history database (schema version -16777214: not a version"},
                        {"-1", "damaged history database (schema version -1: not a version"},
                        {"0", "damaged history database (schema version 0: version 0 on a file perflab marked"},
                        {"1", "damaged history database (schema version 1: table change_point_cache of a later"},
                        {"3", "history schema version 3 is newer than this perflab's (2)"}};
  for (const Case& c : cases) {
    const fs::path p = dir_ / (std::string("damaged") + c.version + ".sqlite");
    {
      HistoryDb db(p, true);
      db.record(run("abc", {metric("throughput", {1, 2, 3})}));
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
    const std::string pragma = std::string("PRAGMA user_version=") + c.version;
    ASSERT_EQ(sqlite3_exec(raw, pragma.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const std::string before = file_bytes(p);
    for (bool create : {false, true}) {
      try {
        HistoryDb db(p, create);
        ADD_FAILURE() << "version " << c.version << " was accepted";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(p.string()), std::string::npos) << what;
        EXPECT_NE(what.find(c.says), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
    }
    EXPECT_EQ(file_bytes(p), before) << "version " << c.version << ": the file was written";
  }
}

// A version-1 file missing a table version 1 has is damaged, not migrated.
TEST_F(HistoryDbTest, RefusesAVersionWhoseTablesAreMissing) {
  const fs::path p = dir_ / "missing.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA application_id=1885760616;"
                              " PRAGMA user_version=1;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  try {
    HistoryDb db(p, false);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("table metrics is missing"), std::string::npos) << e.what();
  }
}

TEST_F(HistoryDbTest, ANewParameterAtItsDefaultContinuesTheSeries) {
  HistoryDb db(dir_ / "h.sqlite", true);
  MetricSamples before = metric("throughput", {100, 101}, false);
  before.point = R"({"params":{"batch":512},"workload":"dlrm"})";
  before.label = "dlrm batch=512";
  db.record(run("1aaa", {before}));
  // The next nightly's build added `epilogues` (at its default in this run).
  MetricSamples after = before;
  after.point = R"({"params":{"batch":512,"epilogues":"auto"},"workload":"dlrm"})";
  after.values = {150, 151};
  std::vector<std::string> continued;
  db.record(run("2bbb", {after}), &continued);
  ASSERT_EQ(continued.size(), 1u);
  EXPECT_EQ(continued[0],
            "dlrm batch=512: paired across versions: epilogues=auto only in the new result (not set with --set: "
            "the default or its preset's)");
  auto s = db.series({"throughput", "", "", "", std::nullopt});
  ASSERT_EQ(s.size(), 1u) << "one series, continued: the new default's change shows in it";
  EXPECT_EQ(s[0].point, before.point);
  ASSERT_EQ(s[0].values.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].values[1].median, 150.5);
  // The same parameter set with --set is another point: a series of its own.
  MetricSamples chosen = after;
  chosen.set_params = {"epilogues"};
  continued.clear();
  db.record(run("3ccc", {chosen}), &continued);
  EXPECT_TRUE(continued.empty());
  s = db.series({"throughput", "", "", "", std::nullopt});
  ASSERT_EQ(s.size(), 2u);
  // Both versions' points in one run (a fresh database): two series.
  HistoryDb both(dir_ / "both.sqlite", true);
  both.record(run("1aaa", {before, after}), &continued);
  EXPECT_TRUE(continued.empty());
  EXPECT_EQ(both.series({"throughput", "", "", "", std::nullopt}).size(), 2u);
  // Two of a run's points that could each continue one recorded series
  // (results of two newer builds recorded together): neither takes it, and
  // the run is recorded (one row per run, point and metric).
  HistoryDb claimed(dir_ / "claimed.sqlite", true);
  claimed.record(run("1aaa", {before}));
  MetricSamples other = after;
  other.point = R"({"params":{"batch":512,"interaction":"auto"},"workload":"dlrm"})";
  continued.clear();
  EXPECT_NO_THROW(claimed.record(run("2bbb", {after, other}), &continued));
  EXPECT_TRUE(continued.empty());
  EXPECT_EQ(claimed.series({"throughput", "", "", "", std::nullopt}).size(), 3u);
  // Another machine's series is its own: m2 has no recorded point, so the
  // new point starts a series there; on m1 it continues `before`'s.
  HistoryDb machines(dir_ / "machines.sqlite", true);
  machines.record(run("1aaa", {before}, "m1"));
  machines.record(run("2bbb", {after}, "m2"), &continued);
  continued.clear();
  machines.record(run("3ccc", {after}, "m1"), &continued);
  EXPECT_EQ(continued.size(), 1u) << "m2's exact point must not stop m1's series from continuing";
  const auto m1 = machines.series({"throughput", "", "m1", "", std::nullopt});
  ASSERT_EQ(m1.size(), 1u);
  EXPECT_EQ(m1[0].values.size(), 2u);
}

TEST_F(HistoryDbTest, CheckUsesTheRollingBaselineOfTheSameSeries) {
  HistoryDb db(dir_ / "h.sqlite", true);
  for (int i = 0; i < 12; ++i) {
    const double base = i < 11 ? 10 : 12;  // The last run is 20% slower.
    db.record(run(std::to_string(i % 10) + "rev", {metric("iteration_ms_p50", {base, base * 1.01, base * 0.99, base * 1.005, base * 0.995})}));
  }
  const auto latest = db.latest_run();
  ASSERT_TRUE(latest);
  const auto c = check_history(db.series({"", "", "m1", "", latest->id}), latest->id, 5, {});
  ASSERT_TRUE(c.comparison);
  EXPECT_EQ(c.baseline_runs, (std::vector<int64_t>{7, 8, 9, 10, 11}));
  ASSERT_EQ(c.comparison->rows.size(), 1u);
  EXPECT_EQ(c.comparison->rows[0].verdict, Verdict::kSlower);
  EXPECT_EQ(c.comparison->rows[0].base_n, 25u);
  // Run 11 against 6..10: nothing changed.
  const auto earlier = check_history(db.series({"", "", "m1", "", 11}), 11, 5, {});
  ASSERT_TRUE(earlier.comparison);
  EXPECT_FALSE(earlier.comparison->regressed());
  // The first run has no baseline.
  EXPECT_FALSE(check_history(db.series({"", "", "m1", "", 1}), 1, 5, {}).comparison);
}

TEST_F(HistoryDbTest, ChangePointsAreCachedPerSeries) {
  HistoryDb db(dir_ / "h.sqlite", true);
  for (int i = 0; i < 40; ++i) {
    const double v = (i < 20 ? 100 : 110) * (1 + 0.001 * (i % 5));
    db.record(run(std::to_string(i % 10) + "r" + std::to_string(i), {metric("iteration_ms_p50", {v})}));
  }
  const ChangePointOptions options;
  auto changes = series_changes(db, db.series({"iteration_ms_p50", "", "", "", std::nullopt}), options);
  ASSERT_EQ(changes.size(), 1u);
  ASSERT_EQ(changes[0].changes.size(), 1u);
  EXPECT_EQ(changes[0].changes[0].index, 20u);
  const auto cached = db.cached_state(changes[0].series, options.key());
  ASSERT_TRUE(cached);
  EXPECT_EQ((*cached)["analyzed"], 40);
  const std::string trend = render_trend(changes, "");
  EXPECT_NE(trend.find("<- change +10.0% at 0r20"), std::string::npos) << trend;
}

TEST(OpenMetrics, BaseUnitsAndQuantilesWithEscapedLabels) {
  HistorySeries a{"p1", "dlrm \"tiny\"", "throughput", "samples/s", "m1", false, {{1, "t", "rev1", 100.5, {100.5}, 0}}};
  HistorySeries b{"p2", "dlrm small", "throughput", "sequences/s", "m1", false, {{1, "t", "rev1", 7, {7}, 0}}};
  HistorySeries c{"p1", "dlrm \"tiny\"", "iteration_ms_p50", "ms", "m1", true, {{1, "t", "rev1", 2, {2}, 0}}};
  HistorySeries d{"p1", "dlrm \"tiny\"", "iteration_ms_p99", "ms", "m1", true, {{1, "t", "rev1", 3, {3}, 0}}};
  HistorySeries e{"p3", "mlperf", "time_to_train_min", "min", "m1", true, {{1, "t", "rev1", 1.5, {1.5}, 0}}};
  const std::string text = render_openmetrics({a, c, b, d, e});
  EXPECT_NE(text.find("# TYPE perflab_throughput_per_second gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perflab_throughput_per_second{point=\"dlrm \\\"tiny\\\"\""), std::string::npos) << text;
  EXPECT_NE(text.find(",unit=\"sequences\"} 7\n"), std::string::npos) << text;
  // Percentiles are one summary in seconds, told apart by their quantile.
  EXPECT_NE(text.find("# TYPE perflab_iteration_seconds summary\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",quantile=\"0.5\"} 0.002\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",quantile=\"0.99\"} 0.003\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perflab_time_to_train_seconds{point=\"mlperf\""), std::string::npos) << text;
  EXPECT_NE(text.find("} 90\n"), std::string::npos) << "1.5 min is 90 s: " << text;
  EXPECT_EQ(text.find("_ms"), std::string::npos) << "no abbreviated units: " << text;
  // Families are contiguous: both throughput samples follow their TYPE line.
  const auto type = text.find("# TYPE perflab_throughput_per_second");
  EXPECT_LT(type, text.find("point=\"dlrm small\""));
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST(OpenMetrics, OneLabelSetsQuantilesStayTogetherAcrossMachines) {
  std::vector<HistorySeries> series;
  // As the database returns them: by label, metric, machine.
  for (const char* metric : {"iteration_ms_p50", "iteration_ms_p90"}) {
    for (const char* machine : {"m1", "m2"}) {
      series.push_back({"p", "dlrm", metric, "ms", machine, true, {{1, "t", "rev1", 2, {2}, 0}}});
    }
  }
  const std::string text = render_openmetrics(series);
  const auto m1_p50 = text.find("machine=\"m1\",revision=\"rev1\",quantile=\"0.5\"");
  const auto m1_p90 = text.find("machine=\"m1\",revision=\"rev1\",quantile=\"0.9\"");
  const auto m2_p50 = text.find("machine=\"m2\",revision=\"rev1\",quantile=\"0.5\"");
  ASSERT_NE(m1_p50, std::string::npos) << text;
  EXPECT_LT(m1_p50, m1_p90) << text;
  EXPECT_LT(m1_p90, m2_p50) << "m1's quantiles before m2's: " << text;
}

TEST(OpenMetrics, NamesFollowTheNamingGuide) {
  EXPECT_EQ(openmetrics_name("time_to_train_s", "s").family, "perflab_time_to_train_seconds");
  EXPECT_EQ(openmetrics_name("score_min", "min").family, "perflab_mlperf_score_seconds");
  EXPECT_DOUBLE_EQ(openmetrics_name("score_min", "min").scale, 60);
  EXPECT_EQ(openmetrics_name("normalized_score_min", "min").family, "perflab_mlperf_normalized_score_seconds");
  EXPECT_EQ(openmetrics_name("iteration_ms_p90", "ms").quantile, "0.9");
  EXPECT_EQ(openmetrics_name("iteration_ms_p90", "ms").type, "summary");
  EXPECT_EQ(openmetrics_name("iteration_ms_px", "ms").family, "perflab_iteration_ms_px") << "not a percentile";
  EXPECT_EQ(openmetrics_name("odd metric/name", "x").family, "perflab_odd_metric_name");
}

}  // namespace
}  // namespace perflab::reports
