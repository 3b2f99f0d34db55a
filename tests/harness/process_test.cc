// run_process (harness/subprocess.h): a workload's program with its output
// in files, its environment, its exit or signal, a timeout that ends its
// whole process group, and a stop request.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "harness/subprocess.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

class Process : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("perflab_process_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    options_.stdout_file = dir_ / "out.txt";
    options_.stderr_file = dir_ / "err.txt";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  ProcessOptions options_;
};

TEST_F(Process, OutputEnvironmentAndExitStatus) {
  options_.env = {{"PERFLAB_TEST_VALUE", "forty two"}, {"HOME", "/replaced"}};
  const ProcessOutcome p = run_process({"sh", "-c", "echo \"$PERFLAB_TEST_VALUE $HOME\"; echo oops >&2; exit 3"}, options_);
  EXPECT_EQ(p.exit_status, 3);
  EXPECT_EQ(p.signal, 0);
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.describe(), "exited with status 3");
  EXPECT_EQ(read("out.txt"), "forty two /replaced\n");
  EXPECT_EQ(read("err.txt"), "oops\n");
}

TEST_F(Process, OneFileForBothStreams) {
  options_.stderr_file = options_.stdout_file;
  EXPECT_TRUE(run_process({"sh", "-c", "echo a; echo b >&2; echo c"}, options_).ok());
  EXPECT_EQ(read("out.txt"), "a\nb\nc\n");
}

TEST_F(Process, ASignalIsReported) {
  const ProcessOutcome p = run_process({"sh", "-c", "kill -SEGV $$"}, options_);
  EXPECT_EQ(p.signal, 11);
  EXPECT_EQ(p.describe(), "was killed by SIGSEGV");
}

TEST_F(Process, ATimeoutStopsIt) {
  options_.timeout_s = 0.2;
  options_.grace_s = 60;  // SIGTERM ends it; a slow machine must not turn it into SIGKILL
  const ProcessOutcome p = run_process({"sleep", "1000"}, options_);
  EXPECT_TRUE(p.timed_out);
  EXPECT_EQ(p.signal, 15);  // SIGTERM ended it within the grace period
  EXPECT_GE(p.wall_s, 0.2);
  EXPECT_EQ(p.describe().rfind("timed out after", 0), 0u) << p.describe();
}

/// Whether process `pid` is gone (or a zombie, until init reaps it), waiting
/// up to 60 s for a killed process to die: the verdict is not the wait's.
bool ended(const std::string& pid) {
  const fs::path status = fs::path("/proc") / pid / "status";
  for (int i = 0; i < 600; ++i) {
    std::string state;
    std::ifstream in(status);
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("State:", 0) == 0) state = l;
    }
    if (state.empty() || state.find('Z') != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(Process, StoppingItEndsTheWholeGroup) {
  // The shell starts a grandchild that would outlive it and names it; the
  // stop comes once it has (whenever that is), and the whole group ends.
  const fs::path child_file = dir_ / "child";
  options_.grace_s = 60;
  options_.stop = [&] { return fs::exists(child_file) && fs::file_size(child_file) > 0; };
  const ProcessOutcome p = run_process(
      {"sh", "-c", "sleep 1000 & echo $! > " + (dir_ / "child.tmp").string() + " && mv " +
                       (dir_ / "child.tmp").string() + " " + child_file.string() + "; wait"},
      options_);
  EXPECT_TRUE(p.stopped);
  EXPECT_EQ(p.signal, 15);
  const std::string child = read("child");
  ASSERT_FALSE(child.empty());
  EXPECT_TRUE(ended(child.substr(0, child.find('\n')))) << "the grandchild outlived its group";
}

TEST_F(Process, AProgramThatIgnoresSigtermIsKilled) {
  // Stopped once SIGTERM is ignored (the program says so), then killed after the grace.
  const fs::path ready = dir_ / "ready";
  options_.grace_s = 0.2;
  options_.stop = [&] { return fs::exists(ready); };
  const ProcessOutcome p =
      run_process({"sh", "-c", "trap '' TERM; : > " + ready.string() + "; while :; do sleep 0.05; done"}, options_);
  EXPECT_TRUE(p.stopped);
  EXPECT_EQ(p.signal, 9);
}

TEST_F(Process, AStopRequestEndsIt) {
  options_.stop = [] { return true; };
  const ProcessOutcome p = run_process({"sleep", "1000"}, options_);
  EXPECT_TRUE(p.stopped);
  EXPECT_FALSE(p.timed_out);
  EXPECT_EQ(p.describe(), "stopped: perflab was interrupted");
}

TEST_F(Process, ATailReadsWholeLinesAsTheFileGrows) {
  const fs::path file = dir_ / "growing.txt";
  FileTail tail(file);
  EXPECT_TRUE(tail.new_lines().empty());  // not there yet
  std::ofstream out(file);
  out << "first\nsec" << std::flush;
  EXPECT_EQ(tail.new_lines(), std::vector<std::string>{"first"});
  EXPECT_TRUE(tail.new_lines().empty());  // "sec" waits for its end
  out << "ond\nthird\n" << std::flush;
  EXPECT_EQ(tail.new_lines(), (std::vector<std::string>{"second", "third"}));
}

TEST_F(Process, AMissingProgramIsAUsageError) {
  EXPECT_THROW(run_process({"no-such-program-anywhere"}, options_), UsageError);
  options_.stdout_file = dir_ / "missing" / "out.txt";
  EXPECT_THROW(run_process({"true"}, options_), Error);
}

}  // namespace
}  // namespace perflab
