// The harness's device iteration mechanics on a fake device: eager warm-up,
// every variant captured once then replayed, host syncs counted per
// iteration against what the step declares, no capture of a step that
// synchronises, and a capture left cleanly when the step throws inside it.
#include "harness/step_driver.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perflab {
namespace {

/// Records every call; a "host sync" is counted when the step makes one.
class FakeOps : public DeviceOps {
 public:
  int64_t host_sync_count() override { return syncs; }
  void begin_capture(void*) override {
    capturing = true;
    calls.push_back("begin");
  }
  void end_capture(void*, int v) override {
    capturing = false;
    calls.push_back("end " + std::to_string(v));
  }
  void abort_capture(void*) override {
    capturing = false;
    calls.push_back("abort");
  }
  void launch(void*, int v) override { calls.push_back("launch " + std::to_string(v)); }
  void synchronize(void*) override { calls.push_back("sync"); }
  std::unique_ptr<DeviceIterationTimer> make_timer(void*) override { return nullptr; }
  int64_t syncs = 0;
  bool capturing = false;
  std::vector<std::string> calls;
};

/// Three variants; iteration i uses variant i % 3; each eager step makes
/// `syncs_made` host syncs.
class FakeStep : public DeviceStep {
 public:
  FakeStep(FakeOps& ops, int declared, int syncs_made) : ops_(ops), declared_(declared), made_(syncs_made) {}
  void* stream() override { return nullptr; }
  int begin(int64_t iteration) override {
    ops_.syncs += made_;
    return static_cast<int>(iteration % 3);
  }
  void enqueue(int v) override {
    if (throw_in_capture && ops_.capturing) throw std::runtime_error("kernel launch failed");
    ops_.calls.push_back((ops_.capturing ? "record " : "run ") + std::to_string(v));
  }
  void end(int64_t, int v) override { ops_.calls.push_back("end-of " + std::to_string(v)); }
  int variants() const override { return 3; }
  int expected_host_syncs() const override { return declared_; }
  bool throw_in_capture = false;

 private:
  FakeOps& ops_;
  int declared_, made_;
};

std::vector<std::string> drop_ends(const std::vector<std::string>& calls) {
  std::vector<std::string> out;
  for (const auto& c : calls) {
    if (c.rfind("end-of", 0) != 0) out.push_back(c);
  }
  return out;
}

TEST(StepDriver, EagerThenEveryVariantCapturedOnceThenReplayed) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  StepDriver driver(step, ops, /*graphs=*/true);
  for (int64_t i = 0; i < 5; ++i) driver.iterate(i);
  EXPECT_EQ(drop_ends(ops.calls),
            (std::vector<std::string>{"run 0", "run 1", "begin", "record 0", "end 0", "begin", "record 1",
                                      "end 1", "begin", "record 2", "end 2", "launch 2", "launch 0",
                                      "launch 1"}));
  const ExecutionRecord& r = driver.record();
  EXPECT_TRUE(r.graphs_used);
  EXPECT_EQ(r.graphs_captured, 3);
  EXPECT_EQ(r.graph_replays, 3);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_TRUE(r.syncs_as_expected());
  EXPECT_NE(r.describe().find("host syncs per iteration: 0 (0 in 5 iterations; expected 0)"), std::string::npos)
      << r.describe();
}

TEST(StepDriver, WithoutGraphsEveryIterationRunsEagerly) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  StepDriver driver(step, ops, /*graphs=*/false);
  for (int64_t i = 0; i < 4; ++i) driver.iterate(i);
  EXPECT_EQ(drop_ends(ops.calls), (std::vector<std::string>{"run 0", "run 1", "run 2", "run 0"}));
  EXPECT_FALSE(driver.record().graphs_used);
  EXPECT_EQ(driver.record().graphs_note, "off");
}

TEST(StepDriver, AStepThatSynchronisesIsNeverCapturedAndSaysWhy) {
  FakeOps ops;
  FakeStep step(ops, 1, 1);
  StepDriver driver(step, ops, /*graphs=*/true);
  for (int64_t i = 0; i < 4; ++i) driver.iterate(i);
  EXPECT_EQ(drop_ends(ops.calls), (std::vector<std::string>{"run 0", "run 1", "run 2", "run 0"}));
  const ExecutionRecord& r = driver.record();
  EXPECT_FALSE(r.graphs_used);
  EXPECT_NE(r.graphs_note.find("synchronises the host (1 per iteration)"), std::string::npos) << r.graphs_note;
  EXPECT_TRUE(r.syncs_as_expected());
  EXPECT_EQ(r.syncs_total, 4);
}

TEST(StepDriver, SyncsOtherThanDeclaredAreAViolation) {
  FakeOps ops;
  FakeStep step(ops, 0, 1);  // claims sync-free, synchronises every iteration
  StepDriver driver(step, ops, /*graphs=*/false);
  for (int64_t i = 0; i < 3; ++i) driver.iterate(i);
  const ExecutionRecord& r = driver.record();
  EXPECT_FALSE(r.syncs_as_expected());
  EXPECT_EQ(r.syncs_min, 1);
  EXPECT_EQ(r.syncs_max, 1);
  EXPECT_NE(r.describe().find("VIOLATED"), std::string::npos) << r.describe();
}

TEST(StepDriver, AFailedCaptureIsLeftBeforeTheErrorPropagates) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  step.throw_in_capture = true;
  StepDriver driver(step, ops, /*graphs=*/true);
  driver.iterate(0);
  driver.iterate(1);
  EXPECT_THROW(driver.iterate(2), std::runtime_error);
  EXPECT_FALSE(ops.capturing);
  EXPECT_EQ(ops.calls.back(), "abort");
}

}  // namespace
}  // namespace perflab
