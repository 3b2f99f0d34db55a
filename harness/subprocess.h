// Running another program: SLURM's commands, read back whole
// (run_program), and a workload's program, its output streamed into files
// under a timeout (run_process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace perflab {

/// What a program did.
struct ProgramOutput {
  int exit_status = 0;  ///< Its exit status; 128 + N when signal N ended it.
  std::string out;      ///< Its standard output.
  std::string err;      ///< Its standard error.
};

/// The path of the running executable (/proc/self/exe), "perflab" when it
/// cannot be read.
std::string this_executable();

/// The full path of `name` found on PATH (a name with '/' is taken as a
/// path), if it names an executable file.
std::optional<std::string> find_program(const std::string& name);

/// Runs argv[0] (searched on PATH) with `argv`, standard input from
/// /dev/null, and waits for it. Throws perflab::Error when it cannot be
/// started.
ProgramOutput run_program(const std::vector<std::string>& argv);

/// How run_process runs a program.
struct ProcessOptions {
  /// Added to (or replacing in) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path stdout_file;  ///< Created (truncated); written as the program writes.
  std::filesystem::path stderr_file;  ///< Likewise; the same path as stdout_file is one file.
  std::optional<double> timeout_s;    ///< Stopped once it has run this long.
  double grace_s = 5;                 ///< SIGTERM, then SIGKILL after this long.
  /// Polled while it runs; true: stop it (perflab was interrupted).
  std::function<bool()> stop;
  /// Called while it runs, about every 50 ms (after the first few
  /// milliseconds): a caller's look at its output so far.
  std::function<void()> on_poll;
};

/// The lines a growing file has gained since the last call: whole lines
/// only (a line still being written waits for its end), read from where
/// the last call stopped. A file not there yet has no lines.
class FileTail {
 public:
  explicit FileTail(std::filesystem::path path) : path_(std::move(path)) {}
  std::vector<std::string> new_lines();

 private:
  std::filesystem::path path_;
  uint64_t offset_ = 0;
  std::string partial_;
};

/// What a program run by run_process did.
struct ProcessOutcome {
  int exit_status = 0;  ///< Its exit status when it exited (0..255).
  int signal = 0;       ///< The signal that ended it, 0 when it exited.
  bool timed_out = false;  ///< Stopped by the timeout.
  bool stopped = false;    ///< Stopped because `stop` said so.
  double wall_s = 0;       ///< Start to end, on the steady clock.

  bool ok() const { return signal == 0 && exit_status == 0 && !timed_out && !stopped; }
  /// "exited with status 3", "was killed by SIGSEGV", "timed out after 30 s and was stopped", ...
  std::string describe() const;
};

/// Runs `argv` (argv[0] searched on PATH) in its own process group, with
/// standard input from /dev/null and its output in the option's files, and
/// waits for it; a timeout or `stop` ends the whole group (SIGTERM, then
/// SIGKILL), and whatever the program started is ended with it when it
/// exits. Throws perflab::Error when the files cannot be made, and
/// UsageError when argv[0] is not an executable found on PATH.
ProcessOutcome run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

}  // namespace perflab
