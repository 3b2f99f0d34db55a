// Progress display for long runs: a live status line on a terminal, one
// plain line per finished run otherwise.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "harness/runner.h"

namespace perflab::cli {

class Progress {
 public:
  Progress(std::ostream& out, bool tty) : out_(out), tty_(tty) {}
  /// A line that is always shown (e.g. a toggle not in effect).
  void note(const std::string& line);
  void update(const ProgressEvent& event);

 private:
  void clear_line();
  std::ostream& out_;
  bool tty_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace perflab::cli
