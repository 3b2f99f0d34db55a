// Work folders of dead processes are removed, but only this host's: a
// sweep's jobs on several nodes share one folder, where another node's pid
// means nothing.
#include "harness/interrupt.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace perflab {
namespace {

namespace fs = std::filesystem;

/// The pid of a process that has ended.
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

TEST(StalePartials, OnlyThisHostsDeadProcessesFoldersAreRemoved) {
  char pattern[] = "/tmp/perflab-partials-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const pid_t dead = dead_pid();
  const std::string names[] = {
      ".a.partial-" + std::to_string(dead),                          // older perflab: this host's
      ".b.partial-" + std::to_string(dead) + "@another-node",       // another node's: kept
      ".c.partial-" + std::to_string(dead) + "@" + host(),          // ours, dead: removed
      ".d.partial-" + std::to_string(getpid()) + "@" + host(),      // ours, alive: kept
      "e",                                                          // a finished run: kept
  };
  for (const std::string& n : names) fs::create_directories(dir / n);
  remove_stale_partials(dir);
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.insert(entry.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{names[1], names[3], names[4]}));
  fs::remove_all(dir);
}

TEST(StalePartials, TheWorkFolderNamesPidAndHost) {
  const fs::path work = partial_dir("/x/runs/abc");
  EXPECT_EQ(work, fs::path("/x/runs") / (".abc.partial-" + std::to_string(getpid()) + "@" + host()));
}

}  // namespace
}  // namespace perflab
