// Writing files so that readers never see a half-written one.
#pragma once

#include <filesystem>
#include <string>

namespace perflab {

/// Writes `contents` to a temporary file beside `path` (created exclusively,
/// under an unpredictable name, mode 0644 less the umask), flushes it to
/// disk and renames it over `path`: a symlink at `path` is replaced, never
/// written through. Throws perflab::Error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

/// An exclusive advisory lock (flock) on `path`, created if absent, held
/// until destruction; the constructor waits while another process holds it.
/// For processes sharing a folder, on one host or over NFSv4. It holds no
/// lock when an interrupt arrives while it waits (check interrupted()) or
/// when the file system has no flock. Throws perflab::Error naming the path
/// when the file cannot be opened or the lock fails otherwise.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  int fd_ = -1;
};

/// Creates `dir` (and parents) and checks that a file can be created in it.
/// Throws perflab::Error with a one-line reason otherwise.
void ensure_writable_directory(const std::filesystem::path& dir);

}  // namespace perflab
