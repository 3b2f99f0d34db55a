// The harness's part timer on one process: host parts on the host clock,
// device parts between the step's timer events (a fake device whose timer
// reports set times), per-iteration samples; the median, the count and
// the clock are what the result records.
#include "harness/part_timer.h"

#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "collectives/communicator.h"
#include "harness/step_driver.h"

namespace perflab {
namespace {

/// Reports the next of `ms` for each start/stop pair, and counts enqueues.
class ScriptedTimer : public DeviceIterationTimer {
 public:
  explicit ScriptedTimer(std::vector<double> ms) : ms_(std::move(ms)) {}
  void start() override { ++started; }
  void stop() override {}
  std::vector<double> collect_ms() override { return {ms_.at(next_++)}; }
  int started = 0;

 private:
  std::vector<double> ms_;
  size_t next_ = 0;
};

class TimerOps : public DeviceOps {
 public:
  int64_t host_sync_count() override { return 0; }
  void begin_capture(void*) override {}
  void end_capture(void*, int) override {}
  void abort_capture(void*) override {}
  void launch(void*, int) override {}
  void synchronize(void*) override {}
  std::unique_ptr<DeviceIterationTimer> make_timer(void* stream) override {
    stream_seen = stream;
    return std::make_unique<ScriptedTimer>(std::vector<double>{3.0, 1.0, 2.0});
  }
  void* stream_seen = nullptr;
};

TEST(PartTimer, HostPartsAreTheMedianOfTheirRepetitionsOnTheHostClock) {
  auto comm = collectives::make_single_communicator();
  PartTimer timer(*comm, nullptr);
  int calls = 0;
  timer.host("compute", [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  ASSERT_EQ(timer.parts().size(), 1u);
  const ResultPart& p = timer.parts()[0];
  EXPECT_EQ(calls, PartTimer::kRepetitions);
  EXPECT_EQ(p.name, "compute");
  EXPECT_EQ(p.repetitions, PartTimer::kRepetitions);
  EXPECT_EQ(p.clock, "host clock");
  EXPECT_GE(p.ms, 2.0);  // a sleep lasts at least as long as asked
}

TEST(PartTimer, DevicePartsAreTimedByTheStepsDeviceBetweenEvents) {
  auto comm = collectives::make_single_communicator();
  TimerOps ops;
  PartTimer timer(*comm, &ops);
  int enqueued = 0;
  int stream = 0;
  timer.device("transfer", &stream, [&] { ++enqueued; });
  EXPECT_EQ(ops.stream_seen, &stream);
  EXPECT_EQ(enqueued, 3);
  ASSERT_EQ(timer.parts().size(), 1u);
  EXPECT_DOUBLE_EQ(timer.parts()[0].ms, 2.0);  // the median of 3, 1, 2
  EXPECT_EQ(timer.parts()[0].clock, "cuda events");
}

TEST(PartTimer, ADevicePartOnAHostStepIsAnError) {
  auto comm = collectives::make_single_communicator();
  PartTimer timer(*comm, nullptr);
  EXPECT_THROW(timer.device("transfer", nullptr, [] {}), Error);
}

TEST(PartTimer, SamplesAreTheMedianOverIterations) {
  auto comm = collectives::make_single_communicator();
  PartTimer timer(*comm, nullptr);
  timer.samples("exposed communication", {4.0, 1.0, 3.0, 2.0, 100.0});
  ASSERT_EQ(timer.parts().size(), 1u);
  EXPECT_DOUBLE_EQ(timer.parts()[0].ms, 3.0);
  EXPECT_EQ(timer.parts()[0].repetitions, 5);
}

TEST(PartTimer, SamplesLeaveOutTheWarmUp) {
  auto comm = collectives::make_single_communicator();
  PartTimer timer(*comm, nullptr, PartTimer::kRepetitions, /*warmup=*/2);
  timer.samples("exposed communication", {100.0, 90.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(timer.parts().at(0).ms, 2.0);
  EXPECT_EQ(timer.parts().at(0).repetitions, 3);
}

TEST(PartStopwatch, AddsStretchesToTheCurrentIteration) {
  PartStopwatch watch;
  const auto sleep = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  watch.time(sleep);
  watch.time(sleep);
  watch.end_iteration();
  watch.end_iteration();  // an iteration with no communication
  ASSERT_EQ(watch.ms_per_iteration().size(), 2u);
  EXPECT_GE(watch.ms_per_iteration()[0], 2.0);
  EXPECT_EQ(watch.ms_per_iteration()[1], 0.0);
  EXPECT_DOUBLE_EQ(watch.total_ms(), watch.ms_per_iteration()[0]);
}

}  // namespace
}  // namespace perflab
