// One seed of an external program (harness/program_run.h), end to end with a
// shell program: the run judged from its log, and the progress display's
// evaluations seen while it runs. The program waits, after two evaluations,
// for a file the evaluation callback creates: it finishes at once when the
// callback sees them as they are written, and only after 60 s (failing the
// test) when it does not; no verdict depends on timing.
#include "harness/program_run.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perflab {
namespace {

namespace fs = std::filesystem;

class GatedProgram : public Program {
 public:
  explicit GatedProgram(fs::path gate) : gate_(std::move(gate)) {}
  ProgramLaunch launch(uint64_t seed, const ProgramPaths&) const override {
    const std::string line = "printf ':::MLLOG {\"namespace\": \"\", \"time_ms\": %s, \"event_type\": \"POINT_IN_TIME\", "
                             "\"key\": \"%s\", \"value\": %s, \"metadata\": {%s}}\\n' ";
    const std::string script =
        line + "1000 run_start null ''; " + line + "2000 eval_accuracy 0.5 '\"epoch_num\": 1'; " + line +
        "3000 eval_accuracy 0.7 '\"epoch_num\": 2'; "
        "i=0; while [ ! -e \"$0\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; " +
        line + "4000 eval_accuracy 0.9 '\"epoch_num\": 3'; " + line +
        "5000 run_stop null '\"status\": \"success\"'";
    ProgramLaunch l;
    l.argv = {"sh", "-c", script, gate_.string(), std::to_string(seed)};
    l.compliance_off = "not in this test";
    return l;
  }
  ProgramQuality quality() const override {
    ProgramQuality q;
    q.target = 0.85;
    return q;
  }
  double timeout_s() const override { return 300; }
  StepPlan step_plan() const override { return {}; }

 private:
  fs::path gate_;
};

TEST(ProgramRun, EvaluationsAreSeenAsTheProgramWritesThem) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("perflab_program_run_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path gate = dir / "gate";
  std::vector<std::vector<double>> seen;
  const RunRecord rec = run_program_seed(GatedProgram(gate), 7, dir / "run_0.log", [&](const RunRecord& so_far) {
    std::vector<double> values;
    for (const ResultQualityPoint& q : so_far.quality_curve) values.push_back(q.value);
    seen.push_back(values);
    if (values.size() >= 2) std::ofstream(gate) << "go\n";
  });
  // The gate opens only on a look that saw the first two evaluations, and
  // the program writes the third only after it: a look that saw exactly
  // those two is there, or the program was never let through.
  ASSERT_FALSE(seen.empty()) << "no evaluation was seen while the program ran";
  EXPECT_NE(std::find(seen.begin(), seen.end(), std::vector<double>{0.5, 0.7}), seen.end());
  EXPECT_TRUE(rec.success) << rec.reason;
  EXPECT_EQ(rec.reason, "eval_accuracy 0.9 >= target 0.85");
  EXPECT_DOUBLE_EQ(rec.time_to_train_s, 4.0);
  ASSERT_EQ(rec.quality_curve.size(), 3u);
  EXPECT_DOUBLE_EQ(rec.quality_curve[1].elapsed_s, 2.0);
  ASSERT_TRUE(rec.program);
  EXPECT_EQ(rec.program->log_source, "output");
  EXPECT_EQ(rec.program->compliance, "not checked");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perflab
