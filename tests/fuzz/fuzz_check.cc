// See fuzz_check.h.
#include "tests/fuzz/fuzz_check.h"

#include <unistd.h>

#include <filesystem>

namespace perflab::fuzz {

std::string private_temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("perflab_fuzz_" + std::to_string(getpid()) + "_" + name))
      .string();
}

}  // namespace perflab::fuzz
