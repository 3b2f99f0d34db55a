// Reading a file a user names: only a regular file, and only up to a size
// bound. A folder given where a file is expected showed the library's
// "basic_filebuf::underflow error reading the file"; /dev/zero was read
// until memory ran out and a FIFO blocked forever.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace perflab {

/// The most bytes read whole from one document (results, logs, sweep and
/// RCP files, .npy arrays, feature specs): 4 GiB.
inline constexpr std::uintmax_t kMaxDocumentBytes = std::uintmax_t{4} << 30;

/// Throws perflab::UsageError with one line naming `path` unless it is (or
/// links to) a regular file: "PATH: no such file", "PATH: is a folder, not
/// a file", "PATH: is not a regular file (a FIFO, socket or device)", or the
/// system's reason (a symlink loop, a permission).
void require_regular_file(const std::filesystem::path& path);

/// The whole of `path` after require_regular_file; a file larger than
/// `max_bytes` is refused with one line. Throws perflab::UsageError.
std::string read_document(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxDocumentBytes);

}  // namespace perflab
