// One seed of an external program (see program_run.h).
#include "harness/program_run.h"

#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/atomic_file.h"
#include "harness/interrupt.h"
#include "harness/mllog_reader.h"
#include "harness/program_log.h"

namespace perflab {
namespace fs = std::filesystem;
namespace {

/// The compliance checker reads one log; it gets this long.
constexpr double kComplianceTimeoutS = 600;

/// The ":::MLLOG " lines of a file, read a line at a time (a program's
/// output may be far larger than its log).
std::string mllog_lines(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find(kMllogToken) != std::string::npos) out += line + "\n";
  }
  return out;
}

/// The checker's first finding: its first WARNING or ERROR line other than
/// the verdict ("ERROR - FAILED"), with the line after it when it ends in
/// ':' (the checker prints the failed check there); else its last
/// non-empty line.
std::string finding(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t from = line.find_first_not_of(" \t\r");
    const size_t to = line.find_last_not_of(" \t\r");
    if (from != std::string::npos) lines.push_back(line.substr(from, to - from + 1));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const bool flagged = line.find("WARNING") != std::string::npos || line.find("ERROR") != std::string::npos;
    const bool verdict = line.find("FAILED") != std::string::npos && line.size() < 24;
    if (!flagged || verdict) continue;
    if (line.back() == ':' && i + 1 < lines.size()) return line + " " + lines[i + 1];
    return line;
  }
  return lines.empty() ? "" : lines.back();
}

std::string read_small(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr size_t kKeep = 1 << 20;
  return text.size() > kKeep ? text.substr(text.size() - kKeep) : text;
}

ComplianceOutcome check_compliance(const ProgramLaunch& launch, const ProgramVerdict& before,
                                   const fs::path& report) {
  if (launch.compliance.empty()) return {"not checked", launch.compliance_off};
  if (!before.success) return {"not checked", "the run failed before it"};
  ProcessOptions options;
  options.stdout_file = report;
  options.stderr_file = report;
  options.timeout_s = kComplianceTimeoutS;
  options.stop = [] { return interrupted(); };
  ProcessOutcome checked;
  try {
    checked = run_process(launch.compliance, options);
  } catch (const UsageError& e) {  // the checker is not installed here
    return {"not checked", e.what()};
  }
  const std::string output = read_small(report);
  if (checked.ok()) return {"passed", report.filename().string()};
  if (output.find("No module named") != std::string::npos || checked.exit_status == 127) {
    return {"not checked", fmt::format("the checker could not run: {}", finding(output))};
  }
  // mlperf_logging's checker looks for the rules of the log's
  // submission_benchmark and fails to open them when it is not one of
  // MLPerf's: unless it found something before, the log cannot be checked
  // by the official rules, which says nothing against it.
  const bool findings = output.find("WARNING") != std::string::npos || output.find("ERROR -") != std::string::npos;
  if (!findings && output.find("FileNotFoundError") != std::string::npos && output.find(".yaml") != std::string::npos) {
    return {"not checked", "the official rules have no file for this log's submission_benchmark (not an MLPerf "
                           "benchmark?): give the workload file compliance: {config: YOUR-RULES.yaml}, or "
                           "compliance: off"};
  }
  const std::string first = finding(output);
  return {"failed", fmt::format("{} ({}; {})", first.empty() ? "no output" : first, checked.describe(),
                                report.filename().string())};
}

}  // namespace

TrainingPlan program_training_plan(const Program& program) {
  const ProgramQuality quality = program.quality();
  TrainingPlan plan;
  plan.quality_metric = quality.key;
  plan.quality_target = quality.target.value_or(std::numeric_limits<double>::quiet_NaN());
  return plan;
}

RunRecord run_program_seed(const Program& program, uint64_t seed, const fs::path& log_path,
                           const std::function<void(const RunRecord&)>& on_eval) {
  const fs::path work = log_path.parent_path();
  const std::string stem = log_path.stem().string();
  const ProgramPaths paths{work / stem, log_path};
  fs::create_directories(paths.out);
  const ProgramLaunch launch = program.launch(seed, paths);

  ProcessOptions options;
  options.env = launch.env;
  options.stdout_file = work / (stem + ".out");
  options.stderr_file = work / (stem + ".err");
  options.timeout_s = program.timeout_s();
  options.stop = [] { return interrupted(); };
  const ProgramQuality quality = program.quality();
  // Progress: the log's MLLOG lines so far, read as the program writes them
  // (once a second), and the quality curve made of them as at the end.
  FileTail tail(launch.writes_log_file ? log_path : options.stdout_file);
  std::string log_so_far;
  RunRecord live;
  live.seed = seed;
  auto last_look = std::chrono::steady_clock::now();
  if (on_eval) {
    options.on_poll = [&] {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_look < std::chrono::seconds(1)) return;
      last_look = now;
      for (const std::string& line : tail.new_lines()) {
        if (line.find(kMllogToken) != std::string::npos) log_so_far += line + "\n";
      }
      std::vector<ResultQualityPoint> curve = program_log_facts(parse_mllog(log_so_far), quality.key).curve;
      if (curve.size() == live.quality_curve.size()) return;
      live.quality_curve = std::move(curve);
      on_eval(live);
    };
  }
  const ProcessOutcome process = run_process(launch.argv, options);

  // The log: the file the program was to write, or the MLLOG lines of its
  // output, kept as run_<i>.log like a built-in workload's.
  ProgramLogFacts facts;
  if (launch.writes_log_file) {
    if (fs::is_regular_file(log_path)) {
      facts = program_log_facts(parse_mllog(mllog_lines(log_path)), quality.key);
    } else {
      facts.file_missing = true;
    }
  } else {
    const std::string text = mllog_lines(options.stdout_file) + mllog_lines(options.stderr_file);
    write_file_atomically(log_path, text);
    facts = program_log_facts(parse_mllog(text), quality.key);
  }
  ProgramVerdict verdict = judge_program_run(facts, process, quality, {});
  const ComplianceOutcome compliance = check_compliance(launch, verdict, work / (stem + ".compliance.txt"));
  if (compliance.status == "failed") verdict = judge_program_run(facts, process, quality, compliance);

  RunRecord rec;
  rec.seed = seed;
  rec.success = verdict.success;
  rec.status = verdict.status;
  rec.reason = verdict.reason;
  if (process.stopped) rec.reason = fmt::format("interrupted by {}; {}", signal_name(interrupt_signal()), rec.reason);
  rec.init_s = verdict.init_s;
  rec.time_to_train_s = verdict.time_to_train_s;
  // train_s, eval_s and measured_s stay 0: perflab does not time inside the
  // program (its wall time is program.wall_s).
  rec.samples = verdict.samples;
  rec.epochs = verdict.epochs;
  rec.throughput = verdict.throughput;
  rec.quality_curve = facts.curve;
  rec.log_file = log_path.filename().string();
  // What the log says of the plan, for the result's plan (fill_program_plan).
  if (facts.global_batch_size) rec.facts["global_batch_size"] = *facts.global_batch_size;
  if (facts.train_samples) rec.facts["train_samples"] = *facts.train_samples;
  if (facts.eval_samples) rec.facts["eval_samples"] = *facts.eval_samples;
  if (!facts.precision.empty()) rec.facts["lowest_numerical_precision_in_linear"] = facts.precision;

  ResultProgram p;
  p.command = launch.argv;
  p.env = launch.env;
  if (process.signal == 0) p.exit_status = process.exit_status;
  if (process.signal != 0) p.signal = signal_name(process.signal);
  p.timed_out = process.timed_out;
  p.wall_s = process.wall_s;
  p.stdout_file = options.stdout_file.filename().string();
  p.stderr_file = options.stderr_file.filename().string();
  p.log_source = launch.writes_log_file ? "file" : "output";
  p.compliance = compliance.status;
  p.compliance_detail = compliance.detail;
  p.throughput_source = verdict.throughput_source;
  p.submission = facts.submission;
  rec.program = std::move(p);
  return rec;
}

void fill_program_plan(InvocationRecord& record) {
  auto first = [&](const char* key) -> const nlohmann::json* {
    for (const RunRecord& r : record.runs) {
      if (auto it = r.facts.find(key); it != r.facts.end()) return &*it;
    }
    return nullptr;
  };
  if (const nlohmann::json* b = first("global_batch_size")) record.step.batch_size = b->get<int64_t>();
  if (record.training) {
    if (const nlohmann::json* t = first("train_samples")) record.training->train_samples = t->get<int64_t>();
    if (const nlohmann::json* e = first("eval_samples")) record.training->eval_samples = e->get<int64_t>();
  }
  if (const nlohmann::json* p = first("lowest_numerical_precision_in_linear")) {
    record.step.precision = p->get<std::string>();
  }
}

}  // namespace perflab
