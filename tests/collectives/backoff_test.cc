// The wait schedule of Backoff, as a pure function of the time waited (no
// clock in the test): yields while the wait is young, then sleeps that
// double from 20 us to a 1 ms cap.
#include "collectives/backoff.h"

#include <chrono>

#include <gtest/gtest.h>

namespace perflab::collectives {
namespace {

using std::chrono::microseconds;

TEST(Backoff, YieldsWhileYoungThenSleepsInDoublingStepsUpToTheCap) {
  Backoff b;
  EXPECT_EQ(b.next_pause(microseconds(0)), microseconds(0));
  EXPECT_EQ(b.next_pause(microseconds(199)), microseconds(0));
  EXPECT_EQ(b.next_pause(microseconds(200)), microseconds(20));
  EXPECT_EQ(b.next_pause(microseconds(300)), microseconds(40));
  EXPECT_EQ(b.next_pause(microseconds(400)), microseconds(80));
  for (int i = 0; i < 10; ++i) b.next_pause(microseconds(10000));
  EXPECT_EQ(b.next_pause(microseconds(20000)), Backoff::kMaxSleep);
}

}  // namespace
}  // namespace perflab::collectives
