// Atomic writes never write through a symlink (issue 24): not one at the
// destination (it is replaced; the file it pointed to is untouched), nor one
// planted under the temp name the writer used to choose (NAME.tmp.PID);
// the temp file is created exclusively under an unpredictable name, and
// nothing is left beside the destination.
#include "harness/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/error.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("perflab_atomic_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "victim") << "precious";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AtomicFileTest, ASymlinkAtTheDestinationIsReplacedNotFollowed) {
  fs::create_symlink(dir_ / "victim", dir_ / "report.md");
  write_file_atomically(dir_ / "report.md", "new");
  EXPECT_EQ(read(dir_ / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ / "report.md"));
  EXPECT_EQ(read(dir_ / "report.md"), "new");
}

TEST_F(AtomicFileTest, APlantedTempNameIsNotWrittenThrough) {
  // The names the writer used to open with O_CREAT | O_TRUNC.
  fs::create_symlink(dir_ / "victim", dir_ / ("out.prom.tmp." + std::to_string(getpid())));
  write_file_atomically(dir_ / "out.prom", "metrics\n");
  EXPECT_EQ(read(dir_ / "victim"), "precious");
  EXPECT_EQ(read(dir_ / "out.prom"), "metrics\n");
}

// Only the destination is left, with 0644 less the user's umask (a umask of
// 077 keeps results private, as for any file the user creates).
TEST_F(AtomicFileTest, LeavesOnlyTheDestinationWithTheUmasksMode) {
  const mode_t old = ::umask(022);
  write_file_atomically(dir_ / "result.json", "{}\n");
  ::umask(077);
  write_file_atomically(dir_ / "private.json", "{}\n");
  ::umask(old);
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename() != "victim" ? 1 : 0;
  EXPECT_EQ(entries, 2u);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "result.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_EQ(::stat((dir_ / "private.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AtomicFileTest, AnUnwritableFolderIsOneErrorNamingThePath) {
  try {
    write_file_atomically(dir_ / "no-such-folder" / "x.json", "{}");
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + (dir_ / "no-such-folder" / "x.json").string()),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace perflab
