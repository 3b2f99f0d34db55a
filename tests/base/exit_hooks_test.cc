// Hooks run when main returns: newest first, once each.
#include "base/exit_hooks.h"

#include <string>

#include <gtest/gtest.h>

namespace perflab {
namespace {

TEST(ExitHooks, RunNewestFirstAndOnlyOnce) {
  std::string order;
  at_main_exit([&] { order += "a"; });
  at_main_exit([&] { order += "b"; });
  run_main_exit_hooks();
  EXPECT_EQ(order, "ba");
  run_main_exit_hooks();  // forgotten after running
  EXPECT_EQ(order, "ba");
  at_main_exit([&] { order += "c"; });  // a resource made again registers again
  run_main_exit_hooks();
  EXPECT_EQ(order, "bac");
}

}  // namespace
}  // namespace perflab
