// Interruption of an invocation by SIGINT or SIGTERM (Ctrl-C, a scheduler's
// pre-kill SIGTERM). The first signal only asks: the runner finishes the
// iteration in flight, ends the run with run_stop "aborted", and the
// pipeline writes the result marked interrupted and completes the folder.
// A second signal ends the process at once (the default action); the
// invocation folder is then left as a ".partial" folder of a dead process,
// which the next invocation in the same place removes.
#pragma once

#include <filesystem>
#include <string>

namespace perflab {

/// Catches SIGINT and SIGTERM while it lives (one per invocation).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

/// The signal that asked the invocation to stop; 0 when none did.
int interrupt_signal();
/// Whether a stop was asked.
inline bool interrupted() { return interrupt_signal() != 0; }
/// "SIGINT", "SIGTERM", "SIGSEGV", ... (or "signal N" for one glibc does not name).
std::string signal_name(int sig);
/// Asks to stop as `sig` would (tests; a handler calls the same).
void request_interrupt(int sig);
/// Forgets a request (tests, and each new guard).
void clear_interrupt();

/// The name of the work folder for `dir`, built while it runs and renamed
/// to `dir` when complete: ".<name>.partial-<pid>@<host>".
std::filesystem::path partial_dir(const std::filesystem::path& dir);
/// Creates the work folder partial_dir(dir) afresh, with the marker file
/// (kPartialMarker) that tells remove_stale_partials perflab made it.
/// Throws std::filesystem::filesystem_error.
std::filesystem::path make_partial_dir(const std::filesystem::path& dir);
/// Marks a folder of perflab's as a work folder remove_stale_partials may
/// remove once its process is gone (make_partial_dir does it). Never throws.
void mark_partial(const std::filesystem::path& folder);
/// The marker file inside every work folder perflab makes.
inline constexpr const char* kPartialMarker = ".perflab-partial";
/// Removes the ".<name>.partial-<pid>@<host>" folders in `parent` that
/// perflab made (they hold kPartialMarker) for processes of this host that
/// no longer run (killed before they could clean up). Another host's are
/// kept (its pids mean nothing here), and so is anything without the host
/// or the marker: a user's ".notes.partial-2024" is not perflab's to
/// delete. Never throws.
void remove_stale_partials(const std::filesystem::path& parent);

}  // namespace perflab
