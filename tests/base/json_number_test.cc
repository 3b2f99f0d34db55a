// json_number: a JSON number becomes a C++ number only when the type holds
// it exactly; the edges of each range are checked on both sides.
#include "base/json_number.h"

#include <gtest/gtest.h>

namespace perflab {
namespace {

using nlohmann::json;

TEST(JsonNumber, IntegersWithinTheTypeOnly) {
  EXPECT_EQ(json_number<int>(json(2147483647)), 2147483647);
  EXPECT_EQ(json_number<int>(json(-2147483648LL)), -2147483647 - 1);
  EXPECT_FALSE(json_number<int>(json(2147483648LL)));
  EXPECT_FALSE(json_number<int>(json(4294967298ULL)));  // would wrap to 2
  EXPECT_FALSE(json_number<int>(json(-2147483649LL)));
  EXPECT_EQ(json_number<uint64_t>(json(18446744073709551615ULL)), 18446744073709551615ULL);
  EXPECT_FALSE(json_number<uint64_t>(json(-1)));
  EXPECT_FALSE(json_number<size_t>(json(-1)));
  EXPECT_FALSE(json_number<int64_t>(json(9223372036854775808ULL)));
}

TEST(JsonNumber, FloatsOnlyWhenIntegralAndInRange) {
  EXPECT_EQ(json_number<int>(json(3.0)), 3);
  EXPECT_FALSE(json_number<int>(json(2.5)));
  EXPECT_FALSE(json_number<int>(json(1e300)));
  EXPECT_FALSE(json_number<int64_t>(json(-1e300)));
  EXPECT_EQ(json_number<int64_t>(json(-9223372036854775808.0)), INT64_MIN);  // -2^63 is exact
  EXPECT_FALSE(json_number<int64_t>(json(9223372036854775808.0)));           // 2^63 is not an int64
  EXPECT_FALSE(json_number<uint64_t>(json(18446744073709551616.0)));         // 2^64
  EXPECT_FALSE(json_number<uint64_t>(json(-1.0)));
  EXPECT_EQ(json_number<double>(json(1e300)), 1e300);
  EXPECT_EQ(json_number<double>(json(7)), 7.0);
}

TEST(JsonNumber, NotANumberIsEmpty) {
  EXPECT_FALSE(json_number<int>(json("3")));
  EXPECT_FALSE(json_number<int>(json(true)));
  EXPECT_FALSE(json_number<double>(json(nullptr)));
  EXPECT_FALSE(json_number<double>(json::array({1})));
}

}  // namespace
}  // namespace perflab
