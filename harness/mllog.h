// The MLLOG writer: one `:::MLLOG {json}` line per event, fields in the order
// the MLPerf reference logger writes them (namespace, time_ms, event_type,
// key, value, metadata), each line flushed as it is written so a crashed run
// still leaves a readable log. The caller's file and line go into metadata;
// log through PERFLAB_MLLOG so they are filled in.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "harness/mllog_keys.h"

namespace perflab {

/// Milliseconds since the Unix epoch: the system clock read once, at the
/// process's first call, plus the steady clock's time since then. Every
/// event of a run is stamped from one monotonic clock, so a duration read
/// from the log (run_stop - run_start, MLPerf's time to train) is never
/// moved by a step of the system clock during the run.
int64_t unix_time_ms();

/// A clock returning Unix epoch milliseconds; tests inject a fixed one.
using MllogClock = std::function<int64_t()>;

/// Where an event was logged from; PERFLAB_MLLOG fills it in.
struct MllogSource {
  const char* file = "";
  int line = 0;
};

/// `file` relative to the perflab source tree when it lies inside it
/// ("/src/perflab/harness/runner.cc" -> "harness/runner.cc"), else unchanged.
std::string repo_relative_path(std::string_view file);

/// One MLLOG line, without the trailing newline:
/// `:::MLLOG {"namespace": "", "time_ms": T, "event_type": E, "key": K,
/// "value": V, "metadata": M}`, with E given by mllog::event_type_for(key) and
/// M written as given, null meaning {} (the writer puts "file" and "lineno"
/// first). Separators are those of Python's json.dumps; non-ASCII text is
/// \u-escaped. Throws perflab::Error if metadata is neither object nor null.
std::string format_mllog_line(int64_t time_ms, std::string_view key,
                              const nlohmann::ordered_json& value,
                              const nlohmann::ordered_json& metadata);

/// Writes one run's MLLOG file. Thread-safe; not copyable.
class MllogWriter {
 public:
  /// Creates (truncates) `path`. Throws perflab::Error naming the path and
  /// the system's reason when it cannot be opened. An empty path writes
  /// nothing (ranks other than 0: only rank 0 logs).
  explicit MllogWriter(std::string path, MllogClock clock = unix_time_ms);
  ~MllogWriter();
  MllogWriter(const MllogWriter&) = delete;
  MllogWriter& operator=(const MllogWriter&) = delete;

  /// Appends one event and flushes it. Metadata holds "file" (repo-relative)
  /// and "lineno" of `source`, then the caller's entries in their order
  /// (caller entries named "file" or "lineno" are ignored). `metadata` must
  /// be an object or null. Returns the event's time_ms, read from the
  /// clock whether or not this writer has a file, so a rank that logs
  /// nothing measures a duration the way rank 0's log states it. Throws
  /// perflab::Error on a write failure.
  int64_t log(MllogSource source, std::string_view key, const nlohmann::ordered_json& value,
           const nlohmann::ordered_json& metadata = nlohmann::ordered_json::object());

  /// The file being written.
  const std::string& path() const { return path_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const;
  };

  std::string path_;
  MllogClock clock_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::mutex mutex_;
};

}  // namespace perflab

/// Logs one event with the caller's file and line:
/// `PERFLAB_MLLOG(writer, key, value)` or
/// `PERFLAB_MLLOG(writer, key, value, {{"epoch_num", 1}, {"samples_count", 512}})`.
#define PERFLAB_MLLOG(writer, ...) \
  (writer).log(::perflab::MllogSource{__FILE__, __LINE__}, __VA_ARGS__)
