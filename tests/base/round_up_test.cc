// round_up: multiples stay, everything else goes to the next multiple, in
// the caller's integer type (a literal `to` converts).
#include "base/round_up.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace perflab {
namespace {

TEST(RoundUp, MultiplesStayAndTheRestGoToTheNext) {
  EXPECT_EQ(round_up(int64_t{0}, 8), 0);
  EXPECT_EQ(round_up(int64_t{1}, 8), 8);
  EXPECT_EQ(round_up(int64_t{8}, 8), 8);
  EXPECT_EQ(round_up(int64_t{9}, 8), 16);
  EXPECT_EQ(round_up(int64_t{13}, 1), 13);
  EXPECT_EQ(round_up(size_t{257}, 256), size_t{512});
  EXPECT_EQ(round_up(size_t{255}, size_t{256}), size_t{256});
  // Past 32 bits: the packed DLRM blocks and the workspaces are size_t / int64_t.
  EXPECT_EQ(round_up(int64_t{1} << 40 | 1, 256), (int64_t{1} << 40) + 256);
}

TEST(RoundUp, KeepsTheTypeOfN) {
  static_assert(std::is_same_v<decltype(round_up(size_t{1}, 8)), size_t>);
  static_assert(std::is_same_v<decltype(round_up(int64_t{1}, 8)), int64_t>);
  static_assert(round_up(5, 4) == 8, "usable in constant expressions");
}

}  // namespace
}  // namespace perflab
