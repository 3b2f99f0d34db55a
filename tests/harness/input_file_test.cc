// Reading user-named files (harness/input_file.h): folders, FIFOs and
// devices are one line each, never a library error or a hang; the size
// bound refuses before reading.
#include "harness/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

std::string message(const fs::path& path, std::uintmax_t max_bytes = kMaxDocumentBytes) {
  try {
    (void)read_document(path, max_bytes);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(InputFile, OnlyRegularFilesAreRead) {
  const fs::path dir = fs::temp_directory_path() / ("perflab_input_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "folder");
  std::ofstream(dir / "doc.json") << "{\"a\": 1}\n";
  EXPECT_EQ(read_document(dir / "doc.json"), "{\"a\": 1}\n");
  fs::create_symlink(dir / "doc.json", dir / "link.json");
  EXPECT_EQ(read_document(dir / "link.json"), "{\"a\": 1}\n");
  EXPECT_EQ(message(dir / "folder"), (dir / "folder").string() + ": is a folder, not a file");
  EXPECT_EQ(message(dir / "absent"), (dir / "absent").string() + ": no such file");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(message(dir / "fifo"), (dir / "fifo").string() + ": is not a regular file (a FIFO, socket or device)");
  EXPECT_EQ(message("/dev/zero"), "/dev/zero: is not a regular file (a FIFO, socket or device)");
  fs::create_symlink(dir / "loop_a", dir / "loop_b");
  fs::create_symlink(dir / "loop_b", dir / "loop_a");
  EXPECT_NE(message(dir / "loop_a").find("cannot read: Too many levels of symbolic links"), std::string::npos)
      << message(dir / "loop_a");
  EXPECT_EQ(message(dir / "doc.json", 4), (dir / "doc.json").string() + ": 9 bytes, more than the 0 MiB perflab reads from one file");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perflab
