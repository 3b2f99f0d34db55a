// Tests for Criteo TSV parsing, the TSV -> feature-spec binary conversion and
// the validating binary loader.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/interrupt.h"
#include "workloads/dlrm/data/binary_dataset.h"
#include "workloads/dlrm/data/criteo_tsv.h"
#include "workloads/dlrm/data/feature_spec.h"

namespace perflab::dlrm {
namespace {
namespace fs = std::filesystem;

/// Gives each test a fresh, empty folder `dir_`, removed again afterwards.
class CriteoFiles : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) / ("perflab_criteo_test_" + std::to_string(::getpid())) /
           (std::string(info->test_suite_name()) + "." + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_.parent_path());  // this process's folder
  }
  fs::path dir_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// A line of 40 fields: label, ints (as text), categoricals (as text).
std::string make_line(const std::string& label, const std::vector<std::string>& ints,
                      const std::vector<std::string>& cats) {
  std::string line = label;
  for (int j = 0; j < 13; ++j) line += "\t" + (j < static_cast<int>(ints.size()) ? ints[j] : "");
  for (int t = 0; t < 26; ++t) line += "\t" + (t < static_cast<int>(cats.size()) ? cats[t] : "");
  return line;
}

/// A deterministic good line number i.
std::string good_line(int i) {
  std::vector<std::string> ints, cats;
  for (int j = 0; j < 13; ++j) ints.push_back(j % 5 == 4 ? "" : std::to_string((i * 7 + j) % 50));
  for (int t = 0; t < 26; ++t) {
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08x", static_cast<unsigned>((i * 2654435761u) ^ (t * 97u)));
    cats.push_back(t % 7 == 6 ? "" : hex);
  }
  return make_line(i % 4 == 0 ? "1" : "0", ints, cats);
}

std::string good_file(int rows, int first = 0) {
  std::string text;
  for (int i = first; i < first + rows; ++i) text += good_line(i) + "\n";
  return text;
}

/// The message of the UsageError `f` throws ("" when it throws none).
std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool same_data(const Dataset& a, const Dataset& b) {
  return a.num_dense == b.num_dense && a.table_sizes == b.table_sizes && a.dense == b.dense &&
         a.categorical == b.categorical && a.labels == b.labels;
}

TEST(CriteoParse, GoodRow) {
  std::vector<std::string> cats(26, "0000000a");
  cats[1] = "FFFFFFFF";
  cats[2] = "68fd1e64";
  CriteoRow row;
  parse_criteo_line(make_line("1", {"0", "1", "-5", "+3", "1000"}, cats), 7, row);
  EXPECT_EQ(row.label, 1.0f);
  EXPECT_EQ(row.dense[0], 0.0f);
  EXPECT_FLOAT_EQ(row.dense[1], std::log(2.0f));
  EXPECT_EQ(row.dense[2], 0.0f);  // Negative clamps to 0.
  EXPECT_FLOAT_EQ(row.dense[3], std::log(4.0f));
  EXPECT_FLOAT_EQ(row.dense[4], std::log(1001.0f));
  EXPECT_EQ(row.dense[5], 0.0f);  // Missing.
  EXPECT_EQ(row.categorical[0], 10 % 6 + 1);
  EXPECT_EQ(row.categorical[1], static_cast<int32_t>(0xFFFFFFFFu % 6 + 1));
  EXPECT_EQ(row.categorical[2], static_cast<int32_t>(0x68fd1e64u % 6 + 1));
}

TEST(CriteoParse, EmptyFieldsAndCrlf) {
  CriteoRow row;
  parse_criteo_line(make_line("0", {}, {}) + "\r", 1 << 20, row);
  EXPECT_EQ(row.label, 0.0f);
  for (float x : row.dense) EXPECT_EQ(x, 0.0f);
  for (int32_t id : row.categorical) EXPECT_EQ(id, 0);
}

TEST_F(CriteoFiles, ReadsFileWithCrlfAndNoFinalNewline) {
  const fs::path& dir = dir_;
  std::string text = good_line(0) + "\r\n" + good_line(1) + "\r\n" + good_line(2);
  write_text(dir / "day.tsv", text);
  const Dataset data = read_criteo_tsv((dir / "day.tsv").string(), 1000);
  ASSERT_EQ(data.size(), 3);
  EXPECT_EQ(data.num_tables(), 26);
  EXPECT_EQ(data.table_sizes[0], 1000);
  EXPECT_NO_THROW(data.validate());
  CriteoRow row;
  parse_criteo_line(good_line(2), 1000, row);
  EXPECT_EQ(data.labels[2], row.label);
  EXPECT_EQ(std::vector<int32_t>(data.categorical.begin() + 52, data.categorical.end()),
            std::vector<int32_t>(row.categorical.begin(), row.categorical.end()));
}

// Lines spanning any number of reads (a buffer of 1, 7, 64 bytes or the
// default 1 MiB) give the same rows and the same error, with its line.
TEST_F(CriteoFiles, TheBufferSizeChangesNothingRead) {
  const std::string path = (dir_ / "day.tsv").string();
  auto read_with = [&](size_t buffer) {
    std::vector<CriteoRow> rows;
    CriteoTsvReader reader(path, 1000, buffer);
    CriteoRow row;
    while (reader.next(row)) rows.push_back(row);
    return rows;
  };
  write_text(path, good_line(0) + "\r\n" + good_line(1) + "\n\n" + good_line(2));
  EXPECT_EQ(usage_error([&] { read_with(CriteoTsvReader::kDefaultBufferBytes); }),
            path + ":3: expected 40 tab-separated fields, found 1");
  for (size_t buffer : {size_t{1}, size_t{7}, size_t{64}}) {
    EXPECT_EQ(usage_error([&] { read_with(buffer); }), path + ":3: expected 40 tab-separated fields, found 1")
        << "buffer " << buffer;
  }
  write_text(path, good_file(3) + good_line(3));
  const std::vector<CriteoRow> whole = read_with(CriteoTsvReader::kDefaultBufferBytes);
  ASSERT_EQ(whole.size(), 4u);
  for (size_t buffer : {size_t{1}, size_t{7}, size_t{64}}) {
    const std::vector<CriteoRow> rows = read_with(buffer);
    ASSERT_EQ(rows.size(), whole.size()) << "buffer " << buffer;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].dense, whole[i].dense) << "buffer " << buffer << " row " << i;
      EXPECT_EQ(rows[i].categorical, whole[i].categorical) << "buffer " << buffer << " row " << i;
      EXPECT_EQ(rows[i].label, whole[i].label) << "buffer " << buffer << " row " << i;
    }
  }
}

TEST_F(CriteoFiles, MalformedRowsNameFileLineAndReason) {
  const fs::path& dir = dir_;
  const std::string path = (dir / "day_0.tsv").string();
  std::vector<std::string> ints(13, "1"), cats(26, "0000abcd");
  auto with_int = [&](int j, const std::string& v) {
    auto copy = ints;
    copy[j] = v;
    return make_line("0", copy, cats);
  };
  auto with_cat = [&](int t, const std::string& v) {
    auto copy = cats;
    copy[t] = v;
    return make_line("1", ints, copy);
  };
  const std::string base = make_line("0", ints, cats);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base.substr(0, base.rfind('\t')), "expected 40 tab-separated fields, found 39"},
      {base + "\t", "expected 40 tab-separated fields, found 41"},
      {"", "expected 40 tab-separated fields, found 1"},
      {"2" + base.substr(1), "label must be 0 or 1, found '2'"},
      {base.substr(1), "label must be 0 or 1, found ''"},
      {with_int(1, "1.5"), "field 3 (I2): '1.5' is not an integer"},
      {with_int(0, "abc"), "field 2 (I1): 'abc' is not an integer"},
      {with_int(12, "-"), "field 14 (I13): '-' is not an integer"},
      {with_int(4, "99999999999999999999"), "field 6 (I5): '99999999999999999999' is out of range"},
      {with_cat(0, "0000zz00"), "field 15 (C1): '0000zz00' is not a hexadecimal id"},
      {with_cat(25, "123456789"), "field 40 (C26): '123456789' is longer than 8 hex digits"},
  };
  for (const auto& [bad, reason] : cases) {
    write_text(path, good_file(2) + bad + "\n" + good_file(1));
    EXPECT_EQ(usage_error([&] { read_criteo_tsv(path, 1000); }), path + ":3: " + reason);
  }
  EXPECT_EQ(usage_error([&] { read_criteo_tsv((dir / "absent.tsv").string(), 1000); }),
            (dir / "absent.tsv").string() + ": no such file");
  EXPECT_THROW(read_criteo_tsv(path, 1), UsageError);
}

TEST(FeatureSpec, CategoricalDtypeFollowsDeepLearningExamples) {
  EXPECT_EQ(categorical_dtype(126), Dtype::kInt8);
  EXPECT_EQ(categorical_dtype(127), Dtype::kInt16);
  EXPECT_EQ(categorical_dtype(32766), Dtype::kInt16);
  EXPECT_EQ(categorical_dtype(32767), Dtype::kInt32);
  EXPECT_EQ(parse_dtype("float16"), Dtype::kFloat16);
  EXPECT_EQ(usage_error([] { parse_dtype("int12"); }), "unknown dtype 'int12'");
}

/// Converts good_file(train_rows) (+ good_file(test_rows) as the test file).
ConvertSummary convert_good(const fs::path& dir, int train_rows, int test_rows,
                            int64_t table_size) {
  write_text(dir / "train.tsv", good_file(train_rows));
  write_text(dir / "test.tsv", good_file(test_rows, 1000));
  ConvertOptions options;
  options.train_paths = {(dir / "train.tsv").string()};
  options.test_path = (dir / "test.tsv").string();
  options.output_dir = (dir / "out").string();
  options.table_size = table_size;
  return convert_criteo_tsv(options);
}

TEST_F(CriteoFiles, ConvertRoundTripEqualsParsedRows) {
  const fs::path& dir = dir_;
  for (int64_t table_size : {100, 1000, 1 << 20}) {
    fs::remove_all(dir / "out");
    const ConvertSummary summary = convert_good(dir, 150, 40, table_size);
    EXPECT_EQ(summary.train_rows, 150);
    EXPECT_EQ(summary.test_rows, 40);
    EXPECT_EQ(summary.table_sizes, std::vector<int64_t>(26, table_size));
    EXPECT_EQ(summary.categorical_dtype, dtype_name(categorical_dtype(table_size)));
    EXPECT_EQ(fs::file_size(dir / "out/train/cat_0.bin"),
              150u * static_cast<unsigned>(dtype_size(categorical_dtype(table_size))));
    const Dataset train = load_binary_split(summary.spec_path, "train");
    const Dataset test = load_binary_split(summary.spec_path, "test");
    EXPECT_TRUE(same_data(train, read_criteo_tsv((dir / "train.tsv").string(), table_size)));
    EXPECT_TRUE(same_data(test, read_criteo_tsv((dir / "test.tsv").string(), table_size)));
  }
}

TEST_F(CriteoFiles, ConvertEvalFractionTakesRowsFromTheEnd) {
  const fs::path& dir = dir_;
  write_text(dir / "a.tsv", good_file(6));
  write_text(dir / "b.tsv", good_file(4, 6));
  write_text(dir / "all.tsv", good_file(10));
  ConvertOptions options;
  options.train_paths = {(dir / "a.tsv").string(), (dir / "b.tsv").string()};
  options.eval_fraction = 0.35;
  options.output_dir = (dir / "out").string() + "/";
  options.table_size = 5000;
  const ConvertSummary summary = convert_criteo_tsv(options);
  EXPECT_EQ(summary.train_rows, 7);
  EXPECT_EQ(summary.test_rows, 3);
  const Dataset all = read_criteo_tsv((dir / "all.tsv").string(), 5000);
  const Dataset train = load_binary_split(summary.spec_path, "train");
  const Dataset test = load_binary_split(summary.spec_path, "test");
  EXPECT_EQ(train.labels, std::vector<float>(all.labels.begin(), all.labels.begin() + 7));
  EXPECT_EQ(test.labels, std::vector<float>(all.labels.begin() + 7, all.labels.end()));
  EXPECT_EQ(test.dense, std::vector<float>(all.dense.begin() + 7 * 13, all.dense.end()));
  EXPECT_EQ(test.categorical,
            std::vector<int32_t>(all.categorical.begin() + 7 * 26, all.categorical.end()));
}

TEST_F(CriteoFiles, ConvertMalformedRowLeavesNoOutput) {
  const fs::path& dir = dir_;
  write_text(dir / "train.tsv", good_file(100) + "1\tbroken\n" + good_file(10));
  write_text(dir / "test.tsv", good_file(5));
  ConvertOptions options;
  options.train_paths = {(dir / "train.tsv").string()};
  options.test_path = (dir / "test.tsv").string();
  options.output_dir = (dir / "out").string();
  EXPECT_EQ(usage_error([&] { convert_criteo_tsv(options); }),
            options.train_paths[0] + ":101: expected 40 tab-separated fields, found 2");
  EXPECT_FALSE(fs::exists(dir / "out"));
  // Nothing else is left behind either: only the two inputs remain.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST_F(CriteoFiles, ConvertRefusesNonEmptyOutputUnlessOverwriting) {
  const fs::path& dir = dir_;
  convert_good(dir, 20, 5, 100);
  ConvertOptions options;
  options.train_paths = {(dir / "train.tsv").string()};
  options.test_path = (dir / "test.tsv").string();
  options.output_dir = (dir / "out").string();
  options.table_size = 100;
  EXPECT_NE(usage_error([&] { convert_criteo_tsv(options); }).find("is not empty"),
            std::string::npos);
  // A failed overwrite leaves the old output as it was.
  write_text(dir / "bad.tsv", "0\t1\n");
  options.overwrite = true;
  options.test_path = (dir / "bad.tsv").string();
  EXPECT_THROW(convert_criteo_tsv(options), UsageError);
  EXPECT_EQ(load_binary_split((dir / "out/feature_spec.yaml").string(), "test").size(), 5);
  options.test_path = (dir / "test.tsv").string();
  options.train_paths.push_back((dir / "train.tsv").string());
  EXPECT_EQ(convert_criteo_tsv(options).train_rows, 40);
  EXPECT_EQ(load_binary_split((dir / "out/feature_spec.yaml").string(), "train").size(), 40);
}

// --force into the folder that holds the input would delete the input with
// the folder it replaces (issue 24): refused, the input kept.
TEST_F(CriteoFiles, ConvertRefusesAnOutputHoldingItsInput) {
  const fs::path& dir = dir_;
  fs::create_directories(dir / "data");
  write_text(dir / "data" / "train.tsv", good_file(20));
  ConvertOptions options;
  options.train_paths = {(dir / "data" / "train.tsv").string()};
  options.eval_fraction = 0.25;
  options.output_dir = (dir / "data").string();
  options.overwrite = true;
  EXPECT_NE(usage_error([&] { convert_criteo_tsv(options); }).find("holds the input"), std::string::npos);
  EXPECT_TRUE(fs::is_regular_file(dir / "data" / "train.tsv"));
  options.output_dir = (dir / "data2").string();  // a sibling whose name starts the same is fine
  EXPECT_EQ(convert_criteo_tsv(options).train_rows, 15);
}

// A killed conversion's staging folder (perflab's name and marker, a dead
// pid of this host) is removed by the next conversion beside it.
TEST_F(CriteoFiles, ConvertRemovesAKilledConversionsStagingFolder) {
  const fs::path& dir = dir_;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);  // a pid no process has now
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const fs::path stale = dir / (".out.partial-" + std::to_string(child) + "@" + host);
  fs::create_directories(stale / "train");
  mark_partial(stale);
  convert_good(dir, 20, 5, 100);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(dir / "out" / kPartialMarker)) << "the marker went into the result";
}

TEST_F(CriteoFiles, ConvertRejectsBadOptions) {
  const fs::path& dir = dir_;
  write_text(dir / "train.tsv", good_file(3));
  ConvertOptions options;
  options.train_paths = {(dir / "train.tsv").string()};
  options.output_dir = (dir / "out").string();
  EXPECT_THROW(convert_criteo_tsv(options), UsageError);  // Neither test file nor fraction.
  options.eval_fraction = 0.5;
  options.test_path = (dir / "train.tsv").string();
  EXPECT_THROW(convert_criteo_tsv(options), UsageError);  // Both.
  options.test_path.clear();
  options.table_size = 1;
  EXPECT_THROW(convert_criteo_tsv(options), UsageError);
}

/// Replaces the first occurrence of `from` in the text file `path`.
void edit_text(const fs::path& path, const std::string& from, const std::string& to) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::string s = text.str();
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  write_text(path, s.replace(at, from.size(), to));
}

TEST_F(CriteoFiles, LoadCorruptSpecAndFilesGiveOneLineErrors) {
  const fs::path& dir = dir_;
  const std::string spec = convert_good(dir, 30, 10, 1000).spec_path;
  auto load_error = [&](const std::string& split) {
    return usage_error([&] { load_binary_split(spec, split); });
  };
  EXPECT_EQ(load_error("valid"), spec + ": no source_spec for split 'valid'");

  fs::resize_file(dir / "out/train/cat_3.bin", 29 * 2);
  EXPECT_EQ(load_error("train"),
            spec + ": train/cat_3.bin: holds 29 rows, but train/label.bin holds 30");
  fs::resize_file(dir / "out/train/cat_3.bin", 29 * 2 + 1);
  EXPECT_EQ(load_error("train"),
            spec + ": train/cat_3.bin: size 59 bytes is not a multiple of its row size 2");
  fs::remove(dir / "out/train/cat_3.bin");
  EXPECT_EQ(load_error("train"), spec + ": train/cat_3.bin: no such file");
  EXPECT_EQ(load_binary_split(spec, "test").size(), 10);  // The other split is intact.

  std::fstream label(dir / "out/test/label.bin", std::ios::in | std::ios::out | std::ios::binary);
  label.seekp(4);
  label.put(2);
  label.close();
  EXPECT_EQ(load_error("test"), spec + ": test/label.bin: row 4: label 2 is not 0 or 1");

  edit_text(spec, "dtype: int8\n", "dtype: bool\n");  // Bool labels are checked as well.
  EXPECT_EQ(load_error("test"), spec + ": test/label.bin: row 4: label 2 is not 0 or 1");

  edit_text(spec, "cardinality: 1000", "cardinality: 0");
  EXPECT_NE(load_error("test").find("cardinality 0"), std::string::npos);
  edit_text(spec, "cardinality: 0", "cardinality: 1000");
  edit_text(spec, "dtype: float32", "dtype: float12");
  EXPECT_NE(load_error("test").find("unknown dtype 'float12'"), std::string::npos);
  edit_text(spec, "dtype: float12", "dtype: int16");
  EXPECT_NE(load_error("test").find("not supported for its channel"), std::string::npos);
  write_text(spec, "feature_spec: [unclosed\n");
  EXPECT_NE(load_error("test").find(spec + ":"), std::string::npos);
  fs::remove(spec);
  EXPECT_EQ(load_error("test"), spec + ": no such file");
}

TEST_F(CriteoFiles, LoadIdOutsideCardinalityIsAnError) {
  const fs::path& dir = dir_;
  const std::string spec = convert_good(dir, 30, 10, 1000).spec_path;
  const int16_t big = 1000;
  std::fstream cat(dir / "out/test/cat_7.bin", std::ios::in | std::ios::out | std::ios::binary);
  cat.seekp(2 * 9);
  cat.write(reinterpret_cast<const char*>(&big), sizeof(big));
  cat.close();
  EXPECT_EQ(usage_error([&] { load_binary_split(spec, "test"); }),
            spec + ": test/cat_7.bin: row 9: id 1000 outside [0, 1000)");
}

TEST_F(CriteoFiles, LoadAcceptsBoolLabelsAndFloat16Numerical) {
  const fs::path& dir = dir_;
  // As DeepLearningExamples writes it: sorted keys, an anchor for the shared
  // numerical list, ".bin" in categorical feature names, metadata: {}.
  write_text(dir / "feature_spec.yaml", R"(channel_spec:
  categorical:
  - cat_0.bin
  label:
  - label
  numerical: &id001
  - num_0
  - num_1
feature_spec:
  cat_0.bin:
    cardinality: 5
    dtype: int8
  label:
    dtype: bool
  num_0:
    dtype: float16
  num_1:
    dtype: float16
metadata: {}
source_spec:
  test:
  - features: *id001
    files:
    - test/numerical.bin
    type: split_binary
  - features:
    - label
    files:
    - test/label.bin
    type: split_binary
  - features:
    - cat_0.bin
    files:
    - test/cat_0.bin
    type: split_binary
  train:
  - features: *id001
    files:
    - train/numerical.bin
    type: split_binary
  - features:
    - label
    files:
    - train/label.bin
    type: split_binary
  - features:
    - cat_0.bin
    files:
    - train/cat_0.bin
    type: split_binary
)");
  fs::create_directories(dir / "train");
  write_text(dir / "train/label.bin", std::string("\x01\x00\x01", 3));
  // float16: 1.0, 0.5 | 2.5, -2.0 | 2^-24 (smallest subnormal), 65504 (largest).
  const uint16_t halves[] = {0x3c00, 0x3800, 0x4100, 0xc000, 0x0001, 0x7bff};
  write_text(dir / "train/numerical.bin",
             std::string(reinterpret_cast<const char*>(halves), sizeof(halves)));
  write_text(dir / "train/cat_0.bin", std::string("\x04\x00\x02", 3));
  const Dataset data = load_binary_split((dir / "feature_spec.yaml").string(), "train");
  EXPECT_EQ(data.num_dense, 2);
  EXPECT_EQ(data.table_sizes, std::vector<int64_t>{5});
  EXPECT_EQ(data.labels, (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(data.dense, (std::vector<float>{1.0f, 0.5f, 2.5f, -2.0f, 0x1.0p-24f, 65504.0f}));
  EXPECT_EQ(data.categorical, (std::vector<int32_t>{4, 0, 2}));
  // The test split's files were never written.
  EXPECT_NE(usage_error([&] {
              load_binary_split((dir / "feature_spec.yaml").string(), "test");
            }).find("test/numerical.bin: no such file"),
            std::string::npos);
}

}  // namespace
}  // namespace perflab::dlrm
