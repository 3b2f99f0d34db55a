// fork/exec. run_program reads both output streams through poll, so a
// program that fills one pipe while we wait on the other cannot deadlock;
// run_process hands the program files instead, so its output lands in them
// as it is written, and nothing of ours has to keep up with it.
#include "harness/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"
#include "harness/interrupt.h"

namespace perflab {
namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

/// A pipe whose ends close themselves.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    close(fd[i]);
    fd[i] = -1;
  }
};

/// `strings` as exec wants them: pointers into the strings (which must
/// outlive them), null-terminated.
std::vector<char*> exec_array(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

/// A file descriptor that closes itself.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

int open_output(const std::filesystem::path& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  return fd;
}

}  // namespace

std::string this_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("perflab") : self.string();
}

std::vector<std::string> FileTail::new_lines() {
  std::vector<std::string> lines;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return lines;
  in.seekg(static_cast<std::streamoff>(offset_));
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    offset_ += n;
    partial_.append(buf, n);
  }
  size_t start = 0;
  for (size_t end = partial_.find('\n'); end != std::string::npos; end = partial_.find('\n', start)) {
    lines.push_back(partial_.substr(start, end - start));
    start = end + 1;
  }
  partial_.erase(0, start);
  return lines;
}

std::string ProcessOutcome::describe() const {
  if (timed_out) return fmt::format("timed out after {:.0f} s and was stopped", wall_s);
  if (stopped) return "stopped: perflab was interrupted";
  if (signal != 0) return "was killed by " + signal_name(signal);
  return fmt::format("exited with status {}", exit_status);
}

namespace {

/// fork() with every signal blocked, so that none lands in the child while
/// it still runs perflab's handlers (a SIGTERM meant for the program, sent
/// between fork and exec, was caught by perflab's interrupt handler in the
/// child and lost: the program ran on until SIGKILL). In the child every
/// handled signal goes back to its default before the mask is restored, so
/// a signal sent that early acts on the child as on the program.
pid_t fork_with_default_signals() {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction current {};
      if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &current) != 0) continue;
      if (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN) sigaction(sig, &dfl, nullptr);
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return 0;
  }
  const int saved = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return pid;
}

}  // namespace

ProcessOutcome run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw Error("run_process: no program");
  const std::optional<std::string> program = find_program(argv[0]);
  if (!program) throw UsageError(fmt::format("{}: not an executable found on PATH", argv[0]));
  std::vector<char*> args = exec_array(argv);
  // The environment is made before fork: the child only calls what is safe
  // between fork and exec in a threaded process.
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : options.env) replaced |= entry.rfind(name + "=", 0) == 0;
    if (!replaced) env_text.push_back(entry);
  }
  for (const auto& [name, value] : options.env) env_text.push_back(name + "=" + value);
  std::vector<char*> envp = exec_array(env_text);

  Fd out(open_output(options.stdout_file));
  Fd err(options.stderr_file == options.stdout_file ? fcntl(out.fd, F_DUPFD_CLOEXEC, 0) : open_output(options.stderr_file));
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork_with_default_signals();
  if (pid < 0) throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout ends everything it started
    const int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out.fd, 1) < 0 || dup2(err.fd, 2) < 0) _exit(127);
    execve(program->c_str(), args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with a signal sent before the child ran
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  ProcessOutcome outcome;
  int status = 0;
  std::optional<double> term_sent;
  auto poll_interval = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw Error(fmt::format("waiting for {}: {}", argv[0], std::strerror(errno)));
    const double now = elapsed();
    if (!term_sent) {
      if (options.timeout_s && now >= *options.timeout_s) outcome.timed_out = true;
      if (!outcome.timed_out && options.stop && options.stop()) outcome.stopped = true;
      if (outcome.timed_out || outcome.stopped) {
        kill(-pid, SIGTERM);
        term_sent = now;
      }
    } else if (now - *term_sent >= options.grace_s) {
      kill(-pid, SIGKILL);
    }
    if (options.on_poll) options.on_poll();
    // Short waits first (most helpers exit at once), then 50 ms: a run
    // takes seconds to hours, and this loop must not take a core from it.
    std::this_thread::sleep_for(poll_interval);
    poll_interval = std::min(poll_interval * 2, std::chrono::milliseconds(50));
  }
  outcome.wall_s = elapsed();
  kill(-pid, SIGKILL);  // whatever it left running in its group ends with it
  if (WIFEXITED(status)) {
    outcome.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

ProgramOutput run_program(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("run_program: no program");
  const std::optional<std::string> program = find_program(argv[0]);
  if (!program) throw Error(fmt::format("{} not found on PATH", argv[0]));
  std::vector<char*> args = exec_array(argv);

  Pipe out, err;
  const pid_t pid = fork_with_default_signals();
  if (pid < 0) throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out.fd[1], 1) < 0 || dup2(err.fd[1], 2) < 0) _exit(127);
    execv(program->c_str(), args.data());
    _exit(127);
  }
  out.close_end(1);
  err.close_end(1);
  ProgramOutput result;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_streams = 2;
  char buf[4096];
  while (open_streams > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // end of stream (the Pipe closes it)
        --open_streams;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace perflab
