// Progress display.
#include "harness/cli/progress.h"

#include <cmath>

#include <fmt/format.h>

namespace perflab::cli {

Progress::Progress(std::ostream& out, bool tty, std::vector<std::string> header)
    : out_(out), tty_(tty), header_(std::move(header)) {
  if (tty_) {
    out_ << "preparing data...";
    out_.flush();
    line_open_ = true;
  }
}

void Progress::clear_line() {
  if (line_open_) out_ << "\r\033[K";
  line_open_ = false;
}

void Progress::note(const std::string& line) {
  clear_line();
  out_ << "perflab: " << line << "\n";
  out_.flush();
}

void Progress::update(const ProgressEvent& e) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string run = fmt::format("run {}/{}", e.run_index + 1, e.run_count);
  switch (e.kind) {
    case ProgressEvent::Kind::kPrepared:
      for (const auto& line : header_) note(line);
      if (tty_) note(fmt::format("data prepared in {:.1f}s", elapsed));
      return;
    case ProgressEvent::Kind::kRunStarted:
      if (!tty_) return;
      clear_line();
      out_ << fmt::format("{} seed {}: initialising", run, e.run->seed);
      line_open_ = true;
      break;
    case ProgressEvent::Kind::kEvaluated: {
      if (!tty_ || e.run->quality_curve.empty()) return;
      const QualityPoint& q = e.run->quality_curve.back();
      clear_line();
      // An external program's log may state no training loss (NaN).
      const std::string loss = std::isnan(q.train_loss) ? "" : fmt::format("  loss {:.4f}", q.train_loss);
      out_ << fmt::format("{} seed {}: epoch {:.2f}  quality {:.4f}{}  {:.1f}s", run, e.run->seed, q.epoch, q.value,
                          loss, q.elapsed_s);
      line_open_ = true;
      break;
    }
    case ProgressEvent::Kind::kRunFinished:
      clear_line();
      // Time to train, or a throughput or inference run's measured time.
      out_ << fmt::format("{} seed {}: {} in {:.2f}s ({}) [{:.0f}s elapsed]\n", run, e.run->seed,
                          e.run->status, e.run->time_to_train_s > 0 ? e.run->time_to_train_s : e.run->measured_s,
                          e.run->reason, elapsed);
      break;
  }
  out_.flush();
}

}  // namespace perflab::cli
