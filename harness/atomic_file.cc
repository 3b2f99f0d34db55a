// Atomic file writes: temp file + fsync + rename.
#include "harness/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/interrupt.h"

namespace perflab {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& contents) {
  // A fresh, unpredictable name beside `path`, created exclusively (O_EXCL,
  // O_NOFOLLOW): a file or symlink planted under a guessable temp name is
  // never opened or written through; the mode is 0644 less the umask, as
  // for any file the user creates. The rename then replaces `path` itself,
  // a symlink there included, never the file it points to.
  static thread_local std::mt19937_64 names(std::random_device{}() ^ static_cast<uint64_t>(::getpid()));
  fs::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = path;
    tmp += fmt::format(".tmp.{}.{:016x}", ::getpid(), names());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
      throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    }
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
  for (;;) {
    if (::flock(fd_, LOCK_EX) == 0) return;
    const int err = errno;
    // A stop was asked while waiting (the handler does not restart calls):
    // give up the wait; the caller sees interrupted() and stops too.
    if (err == EINTR && !interrupted()) continue;
    ::close(fd_);
    fd_ = -1;
    if (err == EINTR) return;
    // A file system without flock (Lustre -o noflock, NFS -o nolock): go on
    // unlocked, as before locks existed; concurrent sweeps there may run a
    // key twice, each writing a complete result.
    if (err == ENOSYS || err == ENOLCK || err == EOPNOTSUPP) return;
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
