// SIGINT/SIGTERM handling and stale work folders (see interrupt.h).
#include "harness/interrupt.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <regex>

#include <fmt/format.h>

namespace perflab {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_signal{0};
struct sigaction g_old_int {}, g_old_term {};

extern "C" void on_signal(int sig) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // The second signal: stop now, as the signal would have without us.
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

}  // namespace

InterruptGuard::InterruptGuard() {
  clear_interrupt();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR, loops see the flag
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int interrupt_signal() { return g_signal.load(); }

void request_interrupt(int sig) { on_signal(sig); }

void clear_interrupt() { g_signal.store(0); }

std::string signal_name(int sig) {
  const char* name = sigabbrev_np(sig);  // "INT", "SEGV", ...; null for a number glibc does not name
  return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", sig);
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

fs::path partial_dir(const fs::path& dir) {
  return dir.parent_path() / fmt::format(".{}.partial-{}@{}", dir.filename().string(), getpid(), this_host());
}

fs::path make_partial_dir(const fs::path& dir) {
  const fs::path work = partial_dir(dir);
  std::error_code ec;
  fs::remove_all(work, ec);  // this process's own, from an earlier attempt
  fs::create_directories(work);
  mark_partial(work);
  return work;
}

void mark_partial(const fs::path& folder) {
  std::ofstream(folder / kPartialMarker) << "a perflab work folder: removed once its process is gone\n";
}

void remove_stale_partials(const fs::path& parent) {
  static const std::regex kPartial(R"(^\..+\.partial-([0-9]+)@(.+)$)");
  const std::string host = this_host();
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kPartial)) continue;
    // Another machine's process (a sweep's jobs on several nodes sharing
    // the folder): its pid means nothing here.
    if (m[2].str() != host) continue;
    std::error_code marker_ec;
    if (!fs::is_regular_file(it->path() / kPartialMarker, marker_ec)) continue;  // not perflab's
    const auto pid = static_cast<pid_t>(std::strtol(m[1].str().c_str(), nullptr, 10));
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

}  // namespace perflab
