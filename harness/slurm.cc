// SLURM job states, its commands' output and the job script of one run.
#include "harness/slurm.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <regex>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace perflab::slurm {

const char* run_state_name(RunState state) {
  switch (state) {
    case RunState::kNotSubmitted: return "not submitted";
    case RunState::kQueued: return "queued";
    case RunState::kRunning: return "running";
    case RunState::kDone: return "done";
    case RunState::kFailed: return "failed";
  }
  return "?";
}

JobPhase job_phase(const std::string& state) {
  const std::string word = state.substr(0, state.find(' '));
  static const std::map<std::string, JobPhase> kPhases = {
      {"PENDING", JobPhase::kQueued},         {"CONFIGURING", JobPhase::kQueued},
      {"REQUEUED", JobPhase::kQueued},        {"REQUEUE_HOLD", JobPhase::kQueued},
      {"REQUEUE_FED", JobPhase::kQueued},     {"RESV_DEL_HOLD", JobPhase::kQueued},
      {"RUNNING", JobPhase::kRunning},        {"COMPLETING", JobPhase::kRunning},
      {"SUSPENDED", JobPhase::kRunning},      {"STAGE_OUT", JobPhase::kRunning},
      {"SIGNALING", JobPhase::kRunning},      {"RESIZING", JobPhase::kRunning},
      {"STOPPED", JobPhase::kRunning},        {"COMPLETED", JobPhase::kFinished},
      {"FAILED", JobPhase::kFailed},          {"CANCELLED", JobPhase::kFailed},
      {"TIMEOUT", JobPhase::kFailed},         {"NODE_FAIL", JobPhase::kFailed},
      {"PREEMPTED", JobPhase::kFailed},       {"BOOT_FAIL", JobPhase::kFailed},
      {"DEADLINE", JobPhase::kFailed},        {"OUT_OF_MEMORY", JobPhase::kFailed},
      {"REVOKED", JobPhase::kFailed},         {"SPECIAL_EXIT", JobPhase::kFailed},
  };
  auto it = kPhases.find(word);
  return it == kPhases.end() ? JobPhase::kUnknown : it->second;
}

std::map<std::string, std::string> parse_job_states(const std::string& text) {
  std::map<std::string, std::string> states;
  for (std::string line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t bar = line.find('|');
    if (bar == std::string::npos || bar == 0) {
      throw Error(fmt::format("unexpected line from SLURM (wanted ID|STATE): '{}'", line));
    }
    const std::string id = line.substr(0, bar);
    if (id.find('.') != std::string::npos) continue;  // a step of a job
    std::string state = line.substr(bar + 1);
    const size_t next = state.find('|');
    if (next != std::string::npos) state.resize(next);
    states[id] = state;
  }
  return states;
}

std::string parse_sbatch_id(const std::string& output) {
  static const std::regex kId(R"(^\s*([0-9]+)(;[^\n]*)?\s*$)");
  std::smatch m;
  if (!std::regex_match(output, m, kId)) {
    throw Error(fmt::format("sbatch printed '{}', not a job id", output));
  }
  return m[1].str();
}

void check_time_limit(const std::string& limit) {
  static const std::regex kTime(
      R"(^([0-9]+|[0-9]+:[0-9]+|[0-9]+:[0-9]+:[0-9]+|[0-9]+-[0-9]+|[0-9]+-[0-9]+:[0-9]+|[0-9]+-[0-9]+:[0-9]+:[0-9]+)$)");
  if (limit == "UNLIMITED" || limit == "INFINITE" || std::regex_match(limit, kTime)) return;
  throw UsageError(fmt::format("--time: '{}' is not a SLURM time limit (minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S)",
                               limit));
}

RunStatus run_status(const RunEvidence& e) {
  if (e.result) return {RunState::kDone, ""};
  if (!e.job_id) return {RunState::kNotSubmitted, ""};
  const std::string job = "job " + *e.job_id;
  if (e.job_state) {
    switch (job_phase(*e.job_state)) {
      case JobPhase::kQueued: return {RunState::kQueued, ""};
      case JobPhase::kRunning: return {RunState::kRunning, ""};
      case JobPhase::kFinished: return {RunState::kFailed, job + " completed without a result"};
      case JobPhase::kFailed: return {RunState::kFailed, job + " " + *e.job_state};
      case JobPhase::kUnknown: break;  // judged by what the job recorded
    }
  }
  if (e.exit_status) {
    return {RunState::kFailed, fmt::format("{} exited with status {} without a result", job, *e.exit_status)};
  }
  if (e.job_state) return {RunState::kFailed, fmt::format("{} is {}", job, *e.job_state)};
  return {RunState::kFailed, job + " is no longer known to SLURM and left no result"};
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_quote_if_needed(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
  });
  return plain ? text : shell_quote(text);
}

namespace {

/// An array job's script: the task's run from its line of the list.
std::string array_job_script(const JobScript& job) {
  std::string run = shell_quote(job.perflab) + " sweep --run-job \"$run_file\"";
  if (job.ntasks > 1 && !job.launcher.empty()) run = job.launcher + " " + run;
  const std::string list = shell_quote(job.run_list);
  return fmt::format(
      "#!/bin/sh\n"
      "# {}\n"
      "# Written by perflab sweep --launcher slurm --array; submitted with its options on\n"
      "# sbatch's command line. Task i runs the run file on line i + 1 of the list; its\n"
      "# output and exit status go beside that file (<key>.out, <key>.exit), so the sweep's\n"
      "# --status knows how each task ended after SLURM has forgotten it.\n"
      "run_file=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {})\n"
      "if [ -z \"$run_file\" ]; then\n"
      "  echo \"perflab: array task $SLURM_ARRAY_TASK_ID has no run in \"{} >&2\n"
      "  exit 1\n"
      "fi\n"
      "base=${{run_file%.json}}\n"
      "exec >\"$base.out\" 2>&1\n"
      "{}\n"
      "status=$?\n"
      "echo \"$status\" > \"$base.exit.tmp\" && mv -f \"$base.exit.tmp\" \"$base.exit\"\n"
      "exit \"$status\"\n",
      one_line(job.comment), list, list, run);
}

}  // namespace

std::string job_script(const JobScript& job) {
  if (!job.run_list.empty()) return array_job_script(job);
  std::string run = shell_quote(job.perflab) + " sweep --run-job " + shell_quote(job.run_file);
  if (job.ntasks > 1 && !job.launcher.empty()) run = job.launcher + " " + run;
  const std::string exit_file = shell_quote(job.exit_file);
  const std::string exit_tmp = shell_quote(job.exit_file + ".tmp");
  return fmt::format(
      "#!/bin/sh\n"
      "# {}\n"
      "# Written by perflab sweep --launcher slurm; submitted with its options on sbatch's\n"
      "# command line. The exit status goes to a file, so the sweep's --status knows how\n"
      "# the job ended after SLURM has forgotten it.\n"
      "{}\n"
      "status=$?\n"
      "echo \"$status\" > {} && mv -f {} {}\n"
      "exit \"$status\"\n",
      one_line(job.comment), run, exit_tmp, exit_tmp, exit_file);
}

std::vector<std::string> sbatch_arguments(const JobScript& job, const std::string& script) {
  std::vector<std::string> args = {"sbatch",
                                   "--parsable",
                                   "--job-name=" + job.job_name,
                                   "--output=" + job.output,
                                   "--chdir=" + job.workdir,
                                   fmt::format("--ntasks={}", job.ntasks)};
  if (!job.partition.empty()) args.push_back("--partition=" + job.partition);
  if (!job.time_limit.empty()) args.push_back("--time=" + job.time_limit);
  if (!job.run_list.empty()) {
    std::string array = fmt::format("--array=0-{}", job.array_size - 1);
    if (job.array_limit > 0) array += fmt::format("%{}", job.array_limit);
    args.push_back(array);
  }
  args.push_back(script);
  return args;
}

}  // namespace perflab::slurm
