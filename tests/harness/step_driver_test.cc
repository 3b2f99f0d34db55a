// The harness's device iteration mechanics on a fake device: eager warm-up,
// every variant captured once then replayed, host syncs counted per
// iteration against what the step declares, no capture of a step that
// synchronises, and a capture left cleanly when the step throws inside it.
#include "harness/step_driver.h"

#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

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
  void launch(void*, int v) override {
    calls.push_back("launch " + std::to_string(v));
    ran(v);  // a replayed graph runs the variant's kernels
  }
  void synchronize(void*) override { calls.push_back("sync"); }
  std::unique_ptr<DeviceIterationTimer> make_timer(void*) override { return nullptr; }
  void start_activity() override {
    if (!can_record) throw Error("CUPTI: cuptiActivityEnable: insufficient privileges");
    recording = true;
    calls.push_back("start activity");
  }
  ActivityLog stop_activity() override {
    recording = false;
    calls.push_back("stop activity");
    return std::exchange(log, {});
  }
  /// Variant v's step runs v + 1 kernels and one memset (recorded while recording).
  void ran(int v) {
    if (!recording) return;
    for (int k = 0; k <= v; ++k) log.records.push_back({ActivityKind::kKernel, "k", 0, 1, 0, 7, 0, 0, 0});
    log.records.push_back({ActivityKind::kMemset, "memset", 1, 2, 0, 7, 4, 0, 0});
  }
  int64_t syncs = 0;
  bool capturing = false;
  bool can_record = true;
  bool recording = false;
  ActivityLog log;
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
    if (!ops_.capturing) ops_.ran(v);
  }
  /// Declares what ran() runs: v + 1 kernels.
  LaunchPlan launch_plan(int v) override {
    return LaunchPlan(static_cast<size_t>(v + 1), DeclaredKernel{"k", "a kernel", "forward", {8, 0, ""}});
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

TEST(StepDriver, CountsTheLaunchesOfOneIterationAgainstTheDeclaredOnes) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  StepDriver driver(step, ops, /*graphs=*/false);
  driver.count_launches_at(1);
  for (int64_t i = 0; i < 3; ++i) driver.iterate(i);
  // Only iteration 1 (variant 1: 2 kernels, a memset) is recorded, after its end.
  EXPECT_EQ(drop_ends(ops.calls),
            (std::vector<std::string>{"run 0", "start activity", "run 1", "stop activity", "run 2"}));
  const ExecutionRecord& r = driver.record();
  EXPECT_EQ(r.kernels_per_iteration, 2);
  EXPECT_EQ(r.memsets_per_iteration, 1);
  EXPECT_EQ(r.copies_per_iteration, 0);
  EXPECT_EQ(r.declared_kernels_per_iteration, 2);
  EXPECT_EQ(r.launches_counted_at, 1);
  EXPECT_EQ(r.describe_launches(), "kernels per iteration: 2 (declared 2), copies 0, memsets 1");
}

TEST(StepDriver, CountsAReplayedGraphsKernels) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  StepDriver driver(step, ops, /*graphs=*/true);
  driver.count_launches_at(5);  // after 2 eager iterations, a replay of variant 2
  for (int64_t i = 0; i < 6; ++i) driver.iterate(i);
  EXPECT_EQ(driver.record().kernels_per_iteration, 3);
  EXPECT_EQ(driver.record().declared_kernels_per_iteration, 3);
}

TEST(StepDriver, LaunchesNotCountedSayWhyAndNeverFailTheRun) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  {
    StepDriver driver(step, ops, /*graphs=*/false);
    driver.count_launches_at(-1, "not counted: no warm-up iteration to count them in (--warmup 0)");
    driver.iterate(0);
    EXPECT_FALSE(driver.record().kernels_per_iteration);
    EXPECT_EQ(driver.record().describe_launches(),
              "kernels per iteration: not counted (not counted: no warm-up iteration to count them in (--warmup 0))");
  }
  ops.can_record = false;
  StepDriver driver(step, ops, /*graphs=*/false);
  driver.count_launches_at(0);
  EXPECT_NO_THROW(driver.iterate(0));
  EXPECT_FALSE(driver.record().kernels_per_iteration);
  EXPECT_EQ(driver.record().launches_note, "CUPTI: cuptiActivityEnable: insufficient privileges");
  // Ops with no activity recording at all (the base class) say so too.
  struct Plain : DeviceOps {
    int64_t host_sync_count() override { return 0; }
    void begin_capture(void*) override {}
    void end_capture(void*, int) override {}
    void abort_capture(void*) override {}
    void launch(void*, int) override {}
    void synchronize(void*) override {}
    std::unique_ptr<DeviceIterationTimer> make_timer(void*) override { return nullptr; }
  } plain;
  StepDriver bare(step, plain, /*graphs=*/false);
  bare.count_launches_at(0);
  bare.iterate(0);
  EXPECT_NE(bare.record().launches_note.find("has no CUPTI"), std::string::npos) << bare.record().launches_note;
}

TEST(StepDriver, DeclaresTheLaunchPlansOfAWindowsIterations) {
  FakeOps ops;
  FakeStep step(ops, 0, 0);
  StepDriver driver(step, ops, /*graphs=*/false);
  driver.iterate(0);
  driver.start_declaring();
  driver.iterate(1);  // variant 1: 2
  driver.iterate(2);  // variant 2: 3
  EXPECT_EQ(driver.stop_declaring().size(), 5u);
  driver.iterate(3);
  driver.start_declaring();
  EXPECT_TRUE(driver.stop_declaring().empty());
}

}  // namespace
}  // namespace perflab
