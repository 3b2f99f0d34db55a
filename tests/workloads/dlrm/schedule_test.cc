// DLRM's learning-rate schedule against hand-worked values.
#include "workloads/dlrm/schedule.h"

#include <gtest/gtest.h>

namespace perflab::dlrm {
namespace {

TEST(LrSchedule, WarmupConstantPolyDecay) {
  LrSchedule s{2.0, 4, 10, 4, 0.0};
  EXPECT_DOUBLE_EQ(s.at(0), 0.5);   // (0+1)/4 * 2
  EXPECT_DOUBLE_EQ(s.at(3), 2.0);   // end of warm-up
  EXPECT_DOUBLE_EQ(s.at(9), 2.0);   // constant
  EXPECT_DOUBLE_EQ(s.at(10), 2.0);  // decay starts: (1 - 0)^2
  EXPECT_DOUBLE_EQ(s.at(12), 0.5);  // (1 - 2/4)^2 * 2
  EXPECT_DOUBLE_EQ(s.at(14), 0.0);  // end of decay
  EXPECT_DOUBLE_EQ(s.at(100), 0.0);
}

TEST(LrSchedule, FloorAndNoDecay) {
  LrSchedule floor{1.0, 0, 0, 2, 0.1};
  EXPECT_DOUBLE_EQ(floor.at(1), 0.1 + 0.9 * 0.25);
  EXPECT_DOUBLE_EQ(floor.at(5), 0.1);
  LrSchedule flat{0.3, 0, 0, 0, 0.0};
  EXPECT_DOUBLE_EQ(flat.at(123456), 0.3);
}

}  // namespace
}  // namespace perflab::dlrm
