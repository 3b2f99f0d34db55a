// Work folders of dead processes are removed, but only this host's: a
// sweep's jobs on several nodes share one folder, where another node's pid
// means nothing.
#include "harness/interrupt.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
      ".a.partial-" + std::to_string(dead),                     // no host: not perflab's to judge
      ".b.partial-" + std::to_string(dead) + "@another-node",  // another node's: kept
      ".c.partial-" + std::to_string(dead) + "@" + host(),     // ours, dead: removed
      ".d.partial-" + std::to_string(getpid()) + "@" + host(), // ours, alive: kept
      "e",                                                     // a finished run: kept
      ".thesis-data.partial-2024",                              // a user's (issue 24): kept
      ".notes.partial-" + std::to_string(dead) + "@" + host(), // the name, but no marker: kept
  };
  for (const std::string& n : names) fs::create_directories(dir / n);
  std::ofstream(dir / names[5] / "notes.txt") << "precious";
  for (int i : {0, 1, 2, 3, 5}) mark_partial(dir / names[i]);
  remove_stale_partials(dir);
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.insert(entry.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{names[0], names[1], names[3], names[4], names[5], names[6]}));
  EXPECT_TRUE(fs::exists(dir / names[5] / "notes.txt"));
  fs::remove_all(dir);
}

TEST(StalePartials, AWorkFolderIsMarkedAndFresh) {
  char pattern[] = "/tmp/perflab-partials-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const fs::path work = make_partial_dir(dir / "run");
  std::ofstream(work / "old.log") << "from an earlier attempt";
  EXPECT_EQ(make_partial_dir(dir / "run"), work);
  EXPECT_TRUE(fs::is_regular_file(work / kPartialMarker));
  EXPECT_FALSE(fs::exists(work / "old.log"));
  fs::remove_all(dir);
}

TEST(StalePartials, TheWorkFolderNamesPidAndHost) {
  const fs::path work = partial_dir("/x/runs/abc");
  EXPECT_EQ(work, fs::path("/x/runs") / (".abc.partial-" + std::to_string(getpid()) + "@" + host()));
}

}  // namespace
}  // namespace perflab
