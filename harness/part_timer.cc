// Parts timed alone (see part_timer.h).
#include "harness/part_timer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/phase.h"
#include "harness/stats.h"
#include "harness/step_driver.h"

namespace perflab {

PartTimer::PartTimer(collectives::Communicator& comm, DeviceOps* ops, int repetitions, int64_t warmup)
    : comm_(comm), ops_(ops), repetitions_(repetitions), warmup_(warmup) {}

void PartTimer::host(const std::string& name, const std::function<void()>& part) {
  std::vector<double> ms;
  for (int i = 0; i < repetitions_; ++i) {
    comm_.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    {
      ScopedPhase phase(name.c_str());
      part();
    }
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    comm_.all_reduce_host(&t, 1, collectives::ReduceOp::kMax);
    ms.push_back(t);
  }
  add(name, std::move(ms), "host clock");
}

void PartTimer::device(const std::string& name, void* stream, const std::function<void()>& enqueue) {
  if (!ops_) throw Error(fmt::format("internal: part '{}' is timed on a device, and the step has none", name));
  std::unique_ptr<DeviceIterationTimer> timer = ops_->make_timer(stream);
  std::vector<double> ms;
  for (int i = 0; i < repetitions_; ++i) {
    comm_.barrier();
    {
      ScopedPhase phase(name.c_str());
      timer->start();
      enqueue();
      timer->stop();
    }
    const std::vector<double> elapsed = timer->collect_ms();  // waits for the stream
    double t = elapsed.empty() ? 0.0 : elapsed.back();
    comm_.all_reduce_host(&t, 1, collectives::ReduceOp::kMax);
    ms.push_back(t);
  }
  add(name, std::move(ms), "cuda events");
}

void PartTimer::samples(const std::string& name, const std::vector<double>& ms_per_iteration) {
  const auto skip = static_cast<size_t>(std::max<int64_t>(0, warmup_));
  std::vector<double> after_warmup;
  if (ms_per_iteration.size() > skip) after_warmup.assign(ms_per_iteration.begin() + static_cast<std::ptrdiff_t>(skip), ms_per_iteration.end());
  double median = after_warmup.empty() ? 0.0 : percentile(after_warmup, 50);
  comm_.all_reduce_host(&median, 1, collectives::ReduceOp::kMax);
  ResultPart part;
  part.name = name;
  part.ms = median;
  part.repetitions = static_cast<int64_t>(after_warmup.size());
  part.clock = "host clock, inside the training iterations after the warm-up";
  parts_.push_back(std::move(part));
}

void PartTimer::add(const std::string& name, std::vector<double> ms, const std::string& clock) {
  ResultPart part;
  part.name = name;
  part.ms = percentile(std::move(ms), 50);
  part.repetitions = repetitions_;
  part.clock = clock;
  parts_.push_back(std::move(part));
}

}  // namespace perflab
