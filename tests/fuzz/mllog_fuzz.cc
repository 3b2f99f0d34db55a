// Fuzzes the MLLOG reader (harness/mllog_reader.h) and the run it scores
// (reports/mlperf_results.h), as compare and history read MLPerf result
// folders. Properties: parsing never throws; every event has a key, a
// finite-or-not time and an object metadata, and lies on a line that
// exists; a run is ok only with run_start, run_stop "success" and no bad
// line, and its minutes are what run_start and run_stop say.
#include <cstdint>
#include <string>

#include "harness/scoring.h"
#include "reports/mlperf_results.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab::fuzz;
  using namespace perflab;
  using namespace perflab::reports;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const MllogFile log = parse_mllog(text);
  size_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  size_t previous = 0;
  for (const MllogEvent& e : log.events) {
    require(e.metadata.is_object(), "metadata is an object");
    require(e.line >= 1 && e.line <= lines, "an event's line exists");
    require(e.line > previous, "events are in line order, one per line");
    previous = e.line;
  }
  require((log.bad_lines == 0) == log.first_problem.empty(), "a bad line has its problem stated");

  const MlperfRun run = mlperf_run(log, "result_0.txt", "fuzz");
  const MllogEvent* start = log.first("run_start");
  const MllogEvent* stop = log.first("run_stop");
  if (run.ok) {
    require(log.bad_lines == 0 && start != nullptr && stop != nullptr, "an ok run has run_start and run_stop");
    require(stop->metadata.value("status", std::string()) == "success", "an ok run succeeded");
    require(run.minutes == (stop->time_ms - start->time_ms) / 60000.0, "minutes are run_stop - run_start");
    require(run.minutes >= 0, "an ok run does not stop before it starts");
  } else {
    require(!run.problem.empty(), "a failed run says why");
  }
  (void)perflab::mlperf_olympic_average({run.minutes, run.minutes}, run.ok ? 0 : 1, 1);
  return 0;
}
