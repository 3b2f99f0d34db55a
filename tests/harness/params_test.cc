// Parameter resolution: defaults, presets, overrides and the errors users see.
#include "harness/params.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab {
namespace {

std::vector<ParamSpec> specs() {
  return {
      {"batch_size", ParamType::kInt, "256", "batch", 1, 1024},
      {"lr", ParamType::kFloat, "0.5", "learning rate", 0, 10},
      {"mode", ParamType::kString, "train", "mode", std::nullopt, std::nullopt, {"train", "eval"}},
  };
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no UsageError";
}

TEST(ResolveParams, DefaultsThenPresetThenOverrides) {
  Preset preset{"p", "", {{"batch_size", "512"}, {"lr", "0.25"}}};
  ParamValues v = resolve_params("w", specs(), &preset, {{"lr", "2"}});
  EXPECT_EQ(v.get_int("batch_size"), 512);
  EXPECT_DOUBLE_EQ(v.get_float("lr"), 2.0);
  EXPECT_EQ(v.get_string("mode"), "train");
}

TEST(ResolveParams, UnknownParameterNamesTheValidOnes) {
  std::string m = message_of([] { resolve_params("w", specs(), nullptr, {{"bach_size", "1"}}); });
  EXPECT_EQ(m, "w: unknown parameter 'bach_size'; valid parameters: batch_size, lr, mode");
}

TEST(ResolveParams, BadValuesSayWhatIsExpected) {
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"batch_size", "12x"}}); }),
            "w: parameter batch_size=12x: not an integer; expected int in [1, 1024]");
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"batch_size", "2048"}}); }),
            "w: parameter batch_size=2048: out of range; expected int in [1, 1024]");
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"lr", "nan"}}); }),
            "w: parameter lr=nan: not a finite number; expected float in [0, 10]");
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"mode", "fast"}}); }),
            "w: parameter mode=fast: not a valid choice; expected one of train, eval");
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"lr", ""}}); }),
            "w: parameter lr=: empty value; expected float in [0, 10]");
  // The number is the whole text: blanks and a '+' on either end are refused
  // alike (strtoll took ' 5' and '+5' and refused only '5 ').
  for (const char* text : {" 5", "5 ", "+5", "\t5"}) {
    EXPECT_EQ(message_of([&] { resolve_params("w", specs(), nullptr, {{"batch_size", text}}); }),
              fmt::format("w: parameter batch_size={}: not an integer; expected int in [1, 1024]", text));
  }
  EXPECT_EQ(message_of([] { resolve_params("w", specs(), nullptr, {{"lr", "+0.5"}}); }),
            "w: parameter lr=+0.5: not a finite number; expected float in [0, 10]");
}

// An integer keeps its exact value: it went through double, which rounds
// above 2^53 and, for a parameter without bounds, cast 2^63 back to int64
// (undefined behaviour).
TEST(ResolveParams, IntegersAreExactToInt64) {
  const ParamSpec seed{"seed", ParamType::kInt, "0", "seed", std::nullopt, std::nullopt};
  EXPECT_EQ(parse_param("w", seed, "9223372036854775807").get<int64_t>(), INT64_MAX);
  EXPECT_EQ(parse_param("w", seed, "-9223372036854775808").get<int64_t>(), INT64_MIN);
  EXPECT_EQ(parse_param("w", seed, "9007199254740993").get<int64_t>(), 9007199254740993);  // 2^53 + 1
  EXPECT_EQ(message_of([&] { parse_param("w", seed, "9223372036854775808"); }),
            "w: parameter seed=9223372036854775808: not an integer; expected int in [-inf, inf]");
}

TEST(ResolveParams, RangesReadAsTheUserMustTypeThem) {
  const ParamSpec big{"train_samples", ParamType::kInt, "1", "samples", 1, 4194304};
  EXPECT_EQ(message_of([&] { resolve_params("w", {big}, nullptr, {{"train_samples", "0"}}); }),
            "w: parameter train_samples=0: out of range; expected int in [1, 4194304]");
  EXPECT_EQ(bound_text(big, 9.2e18), "9200000000000000000");
  const ParamSpec fraction{"f", ParamType::kFloat, "0.5", "fraction", 1e-9, 0.123456789};
  EXPECT_EQ(bound_text(fraction, *fraction.min), "1e-09");
  EXPECT_EQ(bound_text(fraction, *fraction.max), "0.123456789");
}

}  // namespace
}  // namespace perflab
