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
/// "SIGINT", "SIGTERM" (or "signal N").
std::string signal_name(int sig);
/// Asks to stop as `sig` would (tests; a handler calls the same).
void request_interrupt(int sig);
/// Forgets a request (tests, and each new guard).
void clear_interrupt();

/// The name of the work folder for `dir`, built while it runs and renamed
/// to `dir` when complete: ".<name>.partial-<pid>@<host>".
std::filesystem::path partial_dir(const std::filesystem::path& dir);
/// Removes ".*.partial-<pid>@<host>" folders in `parent` left by processes
/// of this host that no longer run (killed before they could clean up);
/// another host's are kept (its pids mean nothing here), and names without
/// a host (older perflab) count as this host's. Never throws.
void remove_stale_partials(const std::filesystem::path& parent);

}  // namespace perflab
