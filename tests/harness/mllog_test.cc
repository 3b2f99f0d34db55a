// Golden-line tests for the MLLOG writer: field order, event type per key,
// value types, escaping, the caller's file and line, and I/O errors.
#include "harness/mllog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/mllog_keys.h"

namespace perflab {
namespace {

using nlohmann::ordered_json;

const ordered_json kMeta = {{"file", "harness/runner.cc"}, {"lineno", 42}};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

ordered_json parse(const std::string& line) {
  const std::string prefix = ":::MLLOG ";
  EXPECT_EQ(line.substr(0, prefix.size()), prefix);
  return ordered_json::parse(line.substr(prefix.size()));
}

// A unique path under the system temp folder, removed at the end of a test.
class TempFile {
 public:
  TempFile() {
    char name[] = "/tmp/perflab_mllog_test_XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(MlperfPrecision, NamesAsTheRulesDoAndNothingForTheRest) {
  EXPECT_EQ(mllog::mlperf_precision("float"), "fp32");
  EXPECT_EQ(mllog::mlperf_precision("fp32"), "fp32");
  EXPECT_EQ(mllog::mlperf_precision("tf32"), "tf32");
  EXPECT_EQ(mllog::mlperf_precision("half"), "fp16");
  EXPECT_EQ(mllog::mlperf_precision("bfloat16"), "bf16");
  EXPECT_EQ(mllog::mlperf_precision("bf16"), "bf16");
  EXPECT_EQ(mllog::mlperf_precision("double"), "fp64");
  EXPECT_EQ(mllog::mlperf_precision("int8"), "int8");
  EXPECT_EQ(mllog::mlperf_precision("int32"), "");
  EXPECT_EQ(mllog::mlperf_precision(""), "");
}

TEST(EventTypeFor, FollowsTheKeySuffix) {
  static_assert(mllog::event_type_for("run_start") == mllog::kIntervalStart);
  EXPECT_EQ(mllog::event_type_for(mllog::kInitStart), "INTERVAL_START");
  EXPECT_EQ(mllog::event_type_for(mllog::kBlockStart), "INTERVAL_START");
  EXPECT_EQ(mllog::event_type_for(mllog::kEvalStart), "INTERVAL_START");
  EXPECT_EQ(mllog::event_type_for(mllog::kRunStop), "INTERVAL_END");
  EXPECT_EQ(mllog::event_type_for(mllog::kEpochStop), "INTERVAL_END");
  EXPECT_EQ(mllog::event_type_for(mllog::kCacheClear), "POINT_IN_TIME");
  EXPECT_EQ(mllog::event_type_for(mllog::kEvalAccuracy), "POINT_IN_TIME");
  EXPECT_EQ(mllog::event_type_for(mllog::kSubmissionStatus), "POINT_IN_TIME");
  EXPECT_EQ(mllog::event_type_for("start"), "POINT_IN_TIME");
  EXPECT_EQ(mllog::event_type_for("stop"), "POINT_IN_TIME");
  EXPECT_EQ(mllog::event_type_for(""), "POINT_IN_TIME");
}

TEST(FormatMllogLine, GoldenIntervalStartWithNullValue) {
  EXPECT_EQ(format_mllog_line(1700000000123, mllog::kRunStart, nullptr, kMeta),
            R"(:::MLLOG {"namespace": "", "time_ms": 1700000000123, "event_type": )"
            R"("INTERVAL_START", "key": "run_start", "value": null, "metadata": )"
            R"({"file": "harness/runner.cc", "lineno": 42}})");
}

TEST(FormatMllogLine, GoldenIntervalEndWithStatus) {
  ordered_json meta = kMeta;
  meta["status"] = "aborted";
  meta["reason"] = "max_epochs reached";
  EXPECT_EQ(format_mllog_line(5, mllog::kRunStop, nullptr, meta),
            R"(:::MLLOG {"namespace": "", "time_ms": 5, "event_type": "INTERVAL_END", )"
            R"("key": "run_stop", "value": null, "metadata": {"file": "harness/runner.cc", )"
            R"("lineno": 42, "status": "aborted", "reason": "max_epochs reached"}})");
}

TEST(FormatMllogLine, ValueTypes) {
  auto value_of = [](const ordered_json& v) {
    const std::string line = format_mllog_line(1, "k", v, ordered_json::object());
    const std::string from = "\"value\": ";
    const auto at = line.find(from) + from.size();
    return line.substr(at, line.find(", \"metadata\"") - at);
  };
  EXPECT_EQ(value_of(nullptr), "null");
  EXPECT_EQ(value_of(true), "true");
  EXPECT_EQ(value_of(65536), "65536");
  EXPECT_EQ(value_of(int64_t{-3}), "-3");
  EXPECT_EQ(value_of(0.7512), "0.7512");
  EXPECT_EQ(value_of(1.0), "1.0");
  EXPECT_EQ(value_of(2.5e-05), "2.5e-05");
  EXPECT_EQ(value_of("fp32"), "\"fp32\"");
  EXPECT_EQ(value_of(ordered_json::array({1, 2.5, "x"})), "[1, 2.5, \"x\"]");
  EXPECT_EQ(value_of(ordered_json{{"b", 1}, {"a", {{"c", nullptr}}}}),
            R"({"b": 1, "a": {"c": null}})");
}

TEST(FormatMllogLine, EscapesStrings) {
  const std::string line =
      format_mllog_line(1, mllog::kSubmissionPlatform, "1x \"Xeon\"\\\n\tcaf\xc3\xa9", {});
  EXPECT_NE(line.find(R"("value": "1x \"Xeon\"\\\n\tcaf\u00e9")"), std::string::npos) << line;
  // Each event stays on one line and reads back as the same value.
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(parse(line)["value"], "1x \"Xeon\"\\\n\tcaf\xc3\xa9");
}

TEST(FormatMllogLine, RejectsNonObjectMetadata) {
  EXPECT_THROW(format_mllog_line(1, "k", 1, ordered_json::array()), Error);
  EXPECT_THROW(format_mllog_line(1, "k", 1, "file"), Error);
  EXPECT_EQ(format_mllog_line(1, "k", 1, nullptr), format_mllog_line(1, "k", 1, {}));
  EXPECT_NE(format_mllog_line(1, "k", 1, {}).find(R"("metadata": {}})"), std::string::npos);
}

TEST(RepoRelativePath, StripsTheSourceRoot) {
  EXPECT_EQ(repo_relative_path(PERFLAB_SOURCE_DIR "/harness/runner.cc"), "harness/runner.cc");
  EXPECT_EQ(repo_relative_path(__FILE__), "tests/harness/mllog_test.cc");
  EXPECT_EQ(repo_relative_path("/elsewhere/x.cc"), "/elsewhere/x.cc");
  EXPECT_EQ(repo_relative_path("x.cc"), "x.cc");
}

TEST(UnixTimeMs, IsEpochMilliseconds) {
  const int64_t t = unix_time_ms();
  EXPECT_GT(t, int64_t{1'600'000'000'000});  // After September 2020.
  EXPECT_LT(t, int64_t{4'100'000'000'000});  // Before 2100.
}

TEST(UnixTimeMs, NeverGoesBackwards) {
  // One monotonic clock after the first reading: a run's logged duration
  // cannot be negative whatever the system clock does meanwhile.
  int64_t last = unix_time_ms();
  for (int i = 0; i < 1000; ++i) {
    const int64_t t = unix_time_ms();
    ASSERT_GE(t, last);
    last = t;
  }
}

TEST(MllogWriter, ReturnsEachEventsStampWithOrWithoutAFile) {
  TempFile tmp;
  int64_t now = 500;
  MllogWriter writer(tmp.path(), [&now] { return now += 7; });
  EXPECT_EQ(PERFLAB_MLLOG(writer, mllog::kRunStart, nullptr), 507);
  EXPECT_EQ(PERFLAB_MLLOG(writer, mllog::kRunStop, nullptr, {{"status", "success"}}), 514);
  const std::vector<std::string> lines = read_lines(tmp.path());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(parse(lines[0])["time_ms"], 507);
  EXPECT_EQ(parse(lines[1])["time_ms"], 514);
  // A rank other than 0 writes nothing and still reads the clock: its own
  // duration is measured as rank 0's log states one.
  int64_t other = 40;
  MllogWriter silent("", [&other] { return other += 3; });
  EXPECT_EQ(PERFLAB_MLLOG(silent, mllog::kRunStart, nullptr), 43);
  EXPECT_EQ(PERFLAB_MLLOG(silent, mllog::kRunStop, nullptr), 46);
}

TEST(MllogWriter, WritesOneFlushedLinePerEventWithTheCallersLocation) {
  TempFile tmp;
  int64_t now = 1000;
  MllogWriter writer(tmp.path(), [&now] { return now++; });
  EXPECT_EQ(writer.path(), tmp.path());

  const int first_line = __LINE__ + 1;
  PERFLAB_MLLOG(writer, mllog::kCacheClear, true);
  // Flushed: readable while the writer is still open.
  ASSERT_EQ(read_lines(tmp.path()).size(), 1u);
  // One line: which line of a multi-line invocation __LINE__ names differs
  // between compilers (gcc: the first, clang: the last).
  const nlohmann::ordered_json metadata = {{"epoch_num", 1.5}, {"samples_count", 3072}, {"lineno", -1}};
  const int second_line = __LINE__ + 1;
  PERFLAB_MLLOG(writer, mllog::kEvalAccuracy, 0.75, metadata);
  PERFLAB_MLLOG(writer, mllog::kRunStop, nullptr, nlohmann::json{{"status", "success"}});

  const std::vector<std::string> lines = read_lines(tmp.path());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], R"(:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": )"
                      R"("POINT_IN_TIME", "key": "cache_clear", "value": true, "metadata": )"
                      R"({"file": "tests/harness/mllog_test.cc", "lineno": )" +
                          std::to_string(first_line) + "}}");

  const ordered_json eval = parse(lines[1]);
  std::vector<std::string> fields;
  for (const auto& item : eval.items()) fields.push_back(item.key());
  EXPECT_EQ(fields, (std::vector<std::string>{"namespace", "time_ms", "event_type", "key", "value",
                                              "metadata"}));
  EXPECT_EQ(eval["time_ms"], 1001);
  EXPECT_EQ(eval["value"], 0.75);
  // file and lineno first and authoritative, then the caller's entries in order.
  EXPECT_EQ(eval["metadata"].dump(), R"({"file":"tests/harness/mllog_test.cc","lineno":)" +
                                         std::to_string(second_line) +
                                         R"(,"epoch_num":1.5,"samples_count":3072})");

  const ordered_json stop = parse(lines[2]);
  EXPECT_EQ(stop["event_type"], "INTERVAL_END");
  EXPECT_EQ(stop["metadata"]["status"], "success");
}

TEST(MllogWriter, RejectsNonObjectMetadata) {
  TempFile tmp;
  MllogWriter writer(tmp.path());
  EXPECT_THROW(PERFLAB_MLLOG(writer, mllog::kSeed, 1, ordered_json::array({1, 2})), Error);
  PERFLAB_MLLOG(writer, mllog::kSeed, 1, nullptr);  // null metadata means none.
  EXPECT_EQ(read_lines(tmp.path()).size(), 1u);
}

TEST(MllogWriter, UnwritablePathThrowsNamingThePath) {
  const std::string path = "/nonexistent-perflab-dir/run_1.log";
  try {
    MllogWriter writer(path);
    FAIL() << "expected perflab::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace perflab
