// See fuzz_check.h.
#include "tests/fuzz/fuzz_check.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace perflab::fuzz {
namespace {

std::vector<std::string>& temp_files() {
  static std::vector<std::string> files;
  return files;
}

void remove_temp_files() {
  std::error_code ec;
  for (const auto& f : temp_files()) std::filesystem::remove(f, ec);
}

}  // namespace

std::string private_temp_file(const std::string& name) {
  if (temp_files().empty()) std::atexit(remove_temp_files);  // libFuzzer ends with exit()
  const std::string path =
      (std::filesystem::temp_directory_path() / ("perflab_fuzz_" + std::to_string(getpid()) + "_" + name)).string();
  temp_files().push_back(path);
  return path;
}

}  // namespace perflab::fuzz
