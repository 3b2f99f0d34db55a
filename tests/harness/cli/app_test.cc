// The end of the one error path (harness/cli/app.cc): whatever a command
// throws becomes exactly one line on stderr and the documented exit code,
// even when the error's text holds a newline (a quoted file line or flag).
#include "harness/cli/app.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/command_registry.h"
#include "base/error.h"

namespace perflab::cli {
namespace {

/// `perflab throw KIND`: throws what a failing command may throw.
Command add_throw(CLI::App& app) {
  auto* sub = app.add_subcommand("throw", "test only: throws KIND");
  auto kind = std::make_shared<std::string>();
  sub->add_option("kind", *kind)->required();
  return {sub, [kind]() -> int {
            if (*kind == "usage") throw UsageError("sweep.yaml:3: unknown key 'a\nb'");
            if (*kind == "error") throw Error("cannot write result.json: No space left on device");
            if (*kind == "bad_alloc") throw std::bad_alloc();
            throw std::runtime_error("vector::_M_range_check");
          }};
}
PERFLAB_REGISTER_COMMAND("throw", add_throw);

struct Outcome {
  int code = -1;
  std::string err;
};

Outcome run(std::vector<std::string> args) {
  args.insert(args.begin(), "perflab");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  Outcome out;
  out.code = main(static_cast<int>(argv.size()), argv.data());
  out.err = testing::internal::GetCapturedStderr();
  return out;
}

TEST(App, WhatACommandThrowsIsOneLineWithItsExitCode) {
  struct Case {
    const char* kind;
    int code;
    const char* err;
  };
  const Case cases[] = {
      {"bad_alloc", 1, "perflab: error: out of host memory (an allocation failed); reduce the problem size\n"},
      // A newline inside an error's text (a quoted line of a file) is escaped.
      {"usage", 2, "perflab: error: sweep.yaml:3: unknown key 'a\\nb'\n"},
      {"error", 1, "perflab: error: cannot write result.json: No space left on device\n"},
      {"other", 1, "perflab: internal error: vector::_M_range_check\n"},
  };
  for (const Case& c : cases) {
    const Outcome o = run({"throw", c.kind});
    EXPECT_EQ(o.code, c.code) << c.kind;
    EXPECT_EQ(o.err, c.err) << c.kind;
  }
}

TEST(App, BadFlagsExitTwoOnOneLine) {
  const Outcome o = run({"run", "dlrm", "--seeds", "many"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.err.rfind("perflab: error: ", 0), 0u) << o.err;
}

// Arguments end up in JSON (results, logs, reports), which holds UTF-8
// only: a stray byte was an internal error after the run (found by
// fuzzing sweep files, tests/fuzz/sweep_file_fuzz.cc).
TEST(App, AnArgumentThatIsNotUtf8IsRefusedBeforeAnythingRuns) {
  const Outcome o = run({"throw", "usage", "--set", "bottom_mlp=64,\xc9"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "perflab: error: argument 4 is not valid UTF-8 (byte 0xc9 at offset 14); perflab reads and "
                   "writes UTF-8 text only\n");
}

}  // namespace
}  // namespace perflab::cli
