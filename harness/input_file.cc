// Reading user-named files (see input_file.h).
#include "harness/input_file.h"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab {

namespace fs = std::filesystem;

void require_regular_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows symlinks
  if (ec || status.type() == fs::file_type::not_found) {
    if (!ec || ec == std::errc::no_such_file_or_directory) {
      throw UsageError(fmt::format("{}: no such file", path.string()));
    }
    throw UsageError(fmt::format("{}: cannot read: {}", path.string(), ec.message()));
  }
  if (status.type() == fs::file_type::directory) {
    throw UsageError(fmt::format("{}: is a folder, not a file", path.string()));
  }
  if (status.type() != fs::file_type::regular) {
    throw UsageError(fmt::format("{}: is not a regular file (a FIFO, socket or device)", path.string()));
  }
}

std::string read_document(const fs::path& path, std::uintmax_t max_bytes) {
  require_regular_file(path);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw UsageError(fmt::format("{}: {} bytes, more than the {} MiB perflab reads from one file", path.string(),
                                 size, max_bytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read", path.string()));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError(fmt::format("{}: cannot read", path.string()));
  return text;
}

}  // namespace perflab
