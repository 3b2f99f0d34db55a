// Progress display for long runs: a live status line on a terminal, one
// plain line per finished run otherwise.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "harness/runner.h"

namespace perflab::cli {

class Progress {
 public:
  /// `header` lines are shown once the data is prepared (always, TTY or not).
  Progress(std::ostream& out, bool tty, std::vector<std::string> header);
  ~Progress() { clear_line(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// A line that is always shown (e.g. a toggle not in effect).
  void note(const std::string& line);
  void update(const ProgressEvent& event);

 private:
  void clear_line();
  std::ostream& out_;
  bool tty_;
  std::vector<std::string> header_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace perflab::cli
