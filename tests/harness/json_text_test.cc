// json_text: nesting is counted outside strings only, and text nested past
// the bound is refused before nlohmann builds a value that copying or
// printing would recurse through (50,000 levels overflowed the stack).
#include "harness/json_text.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "harness/result.h"

namespace perflab {
namespace {

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nested_objects(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "{\"a\":";
  return text + "1" + std::string(depth, '}');
}

TEST(JsonText, DepthCountsBracketsOutsideStrings) {
  EXPECT_EQ(json_nesting_depth("1"), 0);
  EXPECT_EQ(json_nesting_depth("\"[[[{{{\""), 0);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": "]]}}\"[["}]})"), 3);
  EXPECT_EQ(json_nesting_depth(R"(["\\", [2]])"), 2);  // an escaped backslash ends before the quote
  EXPECT_EQ(json_nesting_depth("[][][]"), 1);
  EXPECT_EQ(json_nesting_depth(nested_arrays(kMaxJsonDepth)), kMaxJsonDepth);
}

TEST(JsonText, TheBoundIsTheLastDepthParsed) {
  for (const std::string& text : {nested_arrays(kMaxJsonDepth), nested_objects(kMaxJsonDepth)}) {
    std::string problem;
    EXPECT_FALSE(parse_json_text(text, &problem).is_discarded()) << problem;
  }
  for (const std::string& text : {nested_arrays(kMaxJsonDepth + 1), nested_objects(50000)}) {
    std::string problem;
    EXPECT_TRUE(parse_json_text(text, &problem).is_discarded());
    EXPECT_EQ(problem, "JSON nested more than 100 levels deep");
  }
}

TEST(JsonText, InvalidJsonSaysSo) {
  std::string problem;
  EXPECT_TRUE(parse_json_text("{not json", &problem).is_discarded());
  EXPECT_EQ(problem, "not valid JSON");
  EXPECT_EQ(parse_json_text(R"({"a": [1, 2]})")["a"][1], 2);
}

TEST(JsonText, NulBytesAndRepeatedKeysAreRefused) {
  std::string problem;
  EXPECT_TRUE(parse_json_text(std::string("{\"a\": 1}\0\0garbage", 17), &problem).is_discarded());
  EXPECT_EQ(problem, "not valid JSON (a NUL byte at offset 8)");
  EXPECT_TRUE(parse_json_text(R"({"schema_version": 99, "x": {"b": 1}, "schema_version": 2})", &problem).is_discarded());
  EXPECT_EQ(problem, "not valid JSON (the key \"schema_version\" appears twice in one object)");
  EXPECT_TRUE(parse_json_text(R"([{"a": 1, "b": {"a": 2}, "a": 3}])", &problem).is_discarded());
  // The same key in different objects is fine.
  const nlohmann::json ok = parse_json_text(R"({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]})", &problem);
  ASSERT_FALSE(ok.is_discarded()) << problem;
  EXPECT_EQ(ok["b"][1]["a"], 3);
}

// The result reader goes through the bound too: one UsageError line.
TEST(JsonText, ADeepResultFileIsRefusedWithOneLine) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("perflab_json_text_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << nested_objects(50000);
  try {
    (void)read_result(path);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": JSON nested more than 100 levels deep");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace perflab
