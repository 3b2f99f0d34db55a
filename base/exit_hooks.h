// Work that must run when perflab's main returns, before static destruction
// and the atexit handlers (CUDA's runtime teardown, MPI_Finalize): a library
// that keeps process-wide resources (NCCL communicators) registers their
// release here, and main runs the hooks, newest first, on every return.
// Header-only, so any folder may register.
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace perflab {

inline std::vector<std::function<void()>>& main_exit_hooks() {
  static std::vector<std::function<void()>> hooks;
  return hooks;
}

/// Runs `hook` when main returns (once; a resource made again registers again).
inline void at_main_exit(std::function<void()> hook) { main_exit_hooks().push_back(std::move(hook)); }

/// Runs the registered hooks, newest first, and forgets them.
inline void run_main_exit_hooks() {
  std::vector<std::function<void()>> hooks = std::move(main_exit_hooks());
  main_exit_hooks().clear();
  for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)();
}

}  // namespace perflab
