// Sweep execution for the CLI.
#include "harness/cli/sweep_command.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "harness/cli/reporting.h"
#include "reports/workload_sections.h"
#include "reports/result_set.h"
#include "harness/interrupt.h"


namespace perflab::cli {
namespace {

/// The workloads' own terminal sections for the sweep's results
/// (nccl-tests' table for collectives).
void print_workload_sections(const std::filesystem::path& runs) {
  std::vector<Result> views;
  for (auto& loaded : reports::load_result_set({runs}).results) views.push_back(std::move(loaded.view));
  std::cout << reports::render_workload_terminal(views);
}

}  // namespace

int execute_sweep(const SweepPlan& plan, bool dry_run) {
  if (dry_run) {
    for (const auto& p : plan.points) {
      std::string line = p.workload + " " + (p.preset.empty() ? "(default preset)" : p.preset);
      for (const auto& [k, v] : p.overrides) line += " " + k + "=" + v;
      for (const auto& [t, on] : p.toggles) line += fmt::format(" --{} {}", toggle_flag(t), on ? "on" : "off");
      std::cout << fmt::format("{} x {} seed(s)\n", line, p.seeds);
    }
    std::cout << fmt::format("{} point(s); results would go to {}\n", plan.points.size(),
                             (plan.out_dir / plan.name).string());
    return 0;
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
  size_t ran = 0;
  Session session;
  InterruptGuard guard;
  // Only rank 0 speaks and writes reports; the other ranks run silently.
  const bool writer = session.comm().rank() == 0;
  SweepOutcome outcome = run_sweep(session, plan, [&](const SweepEvent& e) {
    if (!writer) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    switch (e.kind) {
      case SweepEvent::Kind::kRunSkipped:
        if (!tty) std::cerr << fmt::format("[{}/{}] {}: already done\n", e.done, e.total, e.label);
        break;
      case SweepEvent::Kind::kRunStarted:
        if (tty) {
          std::string eta = ran > 0 ? fmt::format("{:.0f}s", elapsed / static_cast<double>(ran) *
                                                                 static_cast<double>(e.total - e.done))
                                    : "?";
          std::cerr << fmt::format("\r\033[K[{}/{} done, {} left] {:.0f}s elapsed, eta {}: {}", e.done,
                                   e.total, e.total - e.done, elapsed, eta, e.label);
        }
        break;
      case SweepEvent::Kind::kRunFinished:
        ++ran;
        if (tty) std::cerr << "\r\033[K";
        std::cerr << fmt::format("[{}/{}] {}: {} in {:.2f}s\n", e.done, e.total, e.label,
                                 e.run->status, e.run->time_to_train_s > 0 ? e.run->time_to_train_s : e.run->measured_s);
        break;
    }
    std::cerr.flush();
  });
  if (!writer) {
    if (!outcome.interrupted.empty()) return 128 + interrupt_signal();
    return outcome.aborted == 0 ? 0 : 1;
  }
  std::cout << fmt::format("sweep {}: {} run(s), {} run now, {} reused from earlier, {} missed the target\n",
                           plan.name, outcome.total, outcome.ran, outcome.reused, outcome.aborted);
  write_reports({outcome.dir / "runs"}, outcome.dir, "perflab sweep " + plan.name);
  print_workload_sections(outcome.dir / "runs");
  std::cout << fmt::format("results: {}/runs/*/result.json\nreport:  {}/report.html (also .md, .csv, .json)\n",
                           outcome.dir.string(), outcome.dir.string());
  if (!outcome.interrupted.empty()) {
    std::cerr << fmt::format("perflab: sweep interrupted by {}: the run in flight ended as aborted; run the "
                             "same sweep again to resume\n",
                             outcome.interrupted);
    return 128 + interrupt_signal();
  }
  return outcome.aborted == 0 ? 0 : 1;
}

}  // namespace perflab::cli
