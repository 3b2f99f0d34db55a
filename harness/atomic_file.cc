// Atomic file writes: temp file + fsync + rename.
#include "harness/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/error.h"

namespace perflab {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& contents) {
  // A fresh, unpredictable name created exclusively (mkstemp: O_CREAT |
  // O_EXCL) beside `path`: a file or symlink planted under a guessable temp
  // name is never opened or written through. The rename then replaces
  // `path` itself, a symlink there included, never the file it points to.
  std::string name = path.string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(name.data());
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  const fs::path tmp = name;
  if (::fchmod(fd, 0644) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
}

FileLock::FileLock(const fs::path& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot open the lock file: {}", path.string(), std::strerror(errno)));
  int rc = 0;
  while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error(fmt::format("{}: cannot lock: {}", path.string(), std::strerror(err)));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

void ensure_writable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot create output directory {}: {}", dir.string(), ec.message()));
  if (!fs::is_directory(dir)) throw Error(fmt::format("output path {} is not a directory", dir.string()));
  fs::path probe = dir / fmt::format(".perflab-write-test.{}", ::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("output directory {} is not writable: {}", dir.string(),
                            std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace perflab
