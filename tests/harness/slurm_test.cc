// SLURM as a sweep launcher, the pure parts: job states from squeue and
// sacct output, a run's state from what is known of it, sbatch's output and
// time format, and the job script (run by sh here, with a fake perflab).
#include "harness/slurm.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace perflab::slurm {
namespace {

namespace fs = std::filesystem;

TEST(SlurmJobPhase, EveryStateWordHasItsPhase) {
  EXPECT_EQ(job_phase("PENDING"), JobPhase::kQueued);
  EXPECT_EQ(job_phase("CONFIGURING"), JobPhase::kQueued);
  EXPECT_EQ(job_phase("REQUEUED"), JobPhase::kQueued);
  EXPECT_EQ(job_phase("RUNNING"), JobPhase::kRunning);
  EXPECT_EQ(job_phase("COMPLETING"), JobPhase::kRunning);
  EXPECT_EQ(job_phase("SUSPENDED"), JobPhase::kRunning);
  EXPECT_EQ(job_phase("COMPLETED"), JobPhase::kFinished);
  EXPECT_EQ(job_phase("FAILED"), JobPhase::kFailed);
  EXPECT_EQ(job_phase("TIMEOUT"), JobPhase::kFailed);
  EXPECT_EQ(job_phase("OUT_OF_MEMORY"), JobPhase::kFailed);
  EXPECT_EQ(job_phase("NODE_FAIL"), JobPhase::kFailed);
  // sacct writes who cancelled it after the word.
  EXPECT_EQ(job_phase("CANCELLED by 0"), JobPhase::kFailed);
  EXPECT_EQ(job_phase("SOMETHING_NEW"), JobPhase::kUnknown);
  EXPECT_EQ(job_phase(""), JobPhase::kUnknown);
}

TEST(SlurmParse, SqueueLinesGiveEachJobsState) {
  // squeue --noheader --states=all --format=%i|%T, as SLURM 22.05 prints it.
  const auto states = parse_job_states("17|PENDING\n18|RUNNING\n\n19|COMPLETED\n20_3|FAILED\n");
  ASSERT_EQ(states.size(), 4u);
  EXPECT_EQ(states.at("17"), "PENDING");
  EXPECT_EQ(states.at("18"), "RUNNING");
  EXPECT_EQ(states.at("19"), "COMPLETED");
  EXPECT_EQ(states.at("20_3"), "FAILED");
}

TEST(SlurmParse, SacctStepsAreNotTheirJob) {
  // sacct --parsable2 without --allocations lists steps too; a step's
  // state is not its job's.
  const auto states = parse_job_states("31|CANCELLED by 0\r\n31.batch|CANCELLED\n31.0|COMPLETED\n32|TIMEOUT|x\n");
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states.at("31"), "CANCELLED by 0");
  EXPECT_EQ(states.at("32"), "TIMEOUT");
}

TEST(SlurmParse, ALineThatIsNotIdAndStateIsAnError) {
  EXPECT_THROW(parse_job_states("17 PENDING\n"), Error);
  EXPECT_THROW(parse_job_states("|PENDING\n"), Error);
  EXPECT_TRUE(parse_job_states("").empty());
}

TEST(SlurmParse, SbatchParsableOutput) {
  EXPECT_EQ(parse_sbatch_id("123\n"), "123");
  EXPECT_EQ(parse_sbatch_id("4567;cluster-a\n"), "4567");
  EXPECT_THROW(parse_sbatch_id(""), Error);
  EXPECT_THROW(parse_sbatch_id("Submitted batch job 12\n"), Error);
  EXPECT_THROW(parse_sbatch_id("12\n13\n"), Error);
}

TEST(SlurmTime, SbatchFormatsOnly) {
  for (const char* ok : {"30", "10:00", "1:00:00", "2-0", "2-12:30", "2-12:30:15", "UNLIMITED", "INFINITE"}) {
    EXPECT_NO_THROW(check_time_limit(ok)) << ok;
  }
  for (const char* bad : {"", "1h", "-5", "1:2:3:4", "1-", "one", "10 ", "1-2-3"}) {
    EXPECT_THROW(check_time_limit(bad), UsageError) << "'" << bad << "'";
  }
}

TEST(SlurmRunStatus, AResultIsDoneWhateverSlurmSays) {
  EXPECT_EQ(run_status({true, std::string("5"), std::string("FAILED"), 1}).state, RunState::kDone);
  EXPECT_EQ(run_status({true, std::nullopt, std::nullopt, std::nullopt}).state, RunState::kDone);
}

TEST(SlurmRunStatus, WithoutResultSlurmAndTheJobsRecordDecide) {
  EXPECT_EQ(run_status({}).state, RunState::kNotSubmitted);
  EXPECT_EQ(run_status({false, std::string("5"), std::string("PENDING"), std::nullopt}).state, RunState::kQueued);
  EXPECT_EQ(run_status({false, std::string("5"), std::string("RUNNING"), std::nullopt}).state, RunState::kRunning);
  // Completed, yet no result: the run failed (e.g. perflab refused it).
  RunStatus s = run_status({false, std::string("5"), std::string("COMPLETED"), 0});
  EXPECT_EQ(s.state, RunState::kFailed);
  EXPECT_EQ(s.detail, "job 5 completed without a result");
  s = run_status({false, std::string("6"), std::string("CANCELLED by 0"), std::nullopt});
  EXPECT_EQ(s.state, RunState::kFailed);
  EXPECT_EQ(s.detail, "job 6 CANCELLED by 0");
  // SLURM forgot the job (no accounting): its exit record decides.
  s = run_status({false, std::string("7"), std::nullopt, 2});
  EXPECT_EQ(s.state, RunState::kFailed);
  EXPECT_EQ(s.detail, "job 7 exited with status 2 without a result");
  s = run_status({false, std::string("8"), std::nullopt, std::nullopt});
  EXPECT_EQ(s.state, RunState::kFailed);
  EXPECT_EQ(s.detail, "job 8 is no longer known to SLURM and left no result");
  // A state word this table does not know, with no exit record.
  s = run_status({false, std::string("9"), std::string("NEW_STATE"), std::nullopt});
  EXPECT_EQ(s.state, RunState::kFailed);
  EXPECT_EQ(s.detail, "job 9 is NEW_STATE");
}

TEST(SlurmScript, ShellQuoting) {
  EXPECT_EQ(shell_quote("plain"), "'plain'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

JobScript example(const fs::path& dir) {
  JobScript job;
  job.job_name = "perflab-s";
  job.comment = "perflab sweep s, run abc: triad stream seed 1\nsecond line";
  job.workdir = dir.string();
  job.output = (dir / "abc.out").string();
  job.perflab = (dir / "fake perflab").string();
  job.run_file = (dir / "it's run.json").string();
  job.exit_file = (dir / "abc.exit").string();
  return job;
}

/// A fresh folder with example(folder)'s job and, at its perflab path, a
/// shell script `body` standing in for perflab.
JobScript fake_job(fs::path& dir, const std::string& body) {
  char pattern[] = "/tmp/perflab-slurm-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir = pattern;
  JobScript job = example(dir);
  std::ofstream(job.perflab) << "#!/bin/sh\n" << body;
  fs::permissions(job.perflab, fs::perms::owner_all);
  return job;
}

TEST(SlurmScript, SbatchArgumentsCarryEveryOption) {
  JobScript job = example("/w");
  std::vector<std::string> args = sbatch_arguments(job, "/w/abc.sh");
  EXPECT_EQ(args, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=perflab-s", "--output=/w/abc.out",
                                            "--chdir=/w", "--ntasks=1", "/w/abc.sh"}));
  job.ntasks = 4;
  job.partition = "gpu";
  job.time_limit = "1:00:00";
  args = sbatch_arguments(job, "/w/abc.sh");
  EXPECT_EQ(args, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=perflab-s", "--output=/w/abc.out",
                                            "--chdir=/w", "--ntasks=4", "--partition=gpu", "--time=1:00:00",
                                            "/w/abc.sh"}));
}

TEST(SlurmScript, ScriptUsesTheLauncherOnlyForSeveralTasks) {
  JobScript job = example("/w");
  job.launcher = "srun --mpi=pmix";
  const std::string one = job_script(job);
  EXPECT_EQ(one.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_EQ(one.find("srun"), std::string::npos) << one;
  // The comment stays one line whatever the label holds.
  EXPECT_NE(one.find("# perflab sweep s, run abc: triad stream seed 1\\nsecond line\n"), std::string::npos) << one;
  job.ntasks = 2;
  EXPECT_NE(job_script(job).find("\nsrun --mpi=pmix '/w/fake perflab' sweep --run-job '/w/it'\\''s run.json'\n"),
            std::string::npos)
      << job_script(job);
}

// The script run by sh with a fake perflab that records its arguments and
// exits 3: the script passes the run file intact, records 3, exits 3.
TEST(SlurmScript, ScriptRunsPerflabAndRecordsItsExitStatus) {
  fs::path dir;
  JobScript job = fake_job(dir, "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\nexit 3\n");
  const fs::path script = dir / "abc.sh";
  std::ofstream(script) << job_script(job);
  const std::string command = "sh '" + script.string() + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  std::ifstream args(dir / "args");
  std::stringstream got;
  got << args.rdbuf();
  EXPECT_EQ(got.str(), "sweep\n--run-job\n" + job.run_file + "\n");
  std::ifstream exit_file(job.exit_file);
  int recorded = -1;
  exit_file >> recorded;
  EXPECT_EQ(recorded, 3);
  EXPECT_FALSE(fs::exists(job.exit_file + ".tmp"));
  fs::remove_all(dir);
}

TEST(SlurmScript, AnArrayJobAsksForItsTasks) {
  JobScript job = example("/w");
  job.run_list = "/w/array.list";
  job.array_size = 5;
  EXPECT_EQ(sbatch_arguments(job, "/w/a.sh").back(), "/w/a.sh");
  EXPECT_EQ(sbatch_arguments(job, "/w/a.sh").end()[-2], "--array=0-4");
  job.array_limit = 2;
  EXPECT_EQ(sbatch_arguments(job, "/w/a.sh").end()[-2], "--array=0-4%2");
}

// Task 1 of an array runs line 2 of the list: the fake perflab gets that
// run file, its output lands in <key>.out and its exit status in <key>.exit;
// a task beyond the list fails with one line and runs nothing.
TEST(SlurmScript, AnArrayTaskRunsItsLineOfTheList) {
  fs::path dir;
  JobScript job = fake_job(dir, "echo \"ran $3\"\nexit 4\n");
  const std::string first = (dir / "aaaa.json").string(), second = (dir / "it's b.json").string();
  job.run_list = (dir / "runs.list").string();
  job.array_size = 2;
  std::ofstream(job.run_list) << first << "\n" << second << "\n";
  const fs::path script = dir / "array.sh";
  std::ofstream(script) << job_script(job);
  const auto task = [&](int id) {
    const std::string command = fmt::format("SLURM_ARRAY_TASK_ID={} sh '{}' 2>'{}'", id, script.string(),
                                            (dir / "stderr").string());
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(task(1), 4);
  std::ifstream out(dir / "it's b.out");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "ran " + second);
  std::ifstream exit_file(dir / "it's b.exit");
  int recorded = -1;
  exit_file >> recorded;
  EXPECT_EQ(recorded, 4);
  EXPECT_FALSE(fs::exists(dir / "aaaa.out"));
  EXPECT_EQ(task(2), 1);
  std::ifstream err(dir / "stderr");
  std::getline(err, line);
  EXPECT_EQ(line, "perflab: array task 2 has no run in " + job.run_list);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perflab::slurm
