// The transducer workload as a timed step: the problem's data is prepared
// once; each seed's step runs on its backend and ends with a correctness
// gate.
#pragma once

#include <memory>

#include "harness/run_context.h"
#include "harness/workload.h"
#include "workloads/transducer/problem.h"

namespace perflab::transducer {

class TransducerBenchmark final : public Benchmark {
 public:
  explicit TransducerBenchmark(const RunContext& ctx);
  StepPlan step_plan() const override { return plan_; }
  std::unique_ptr<TimedStep> start_step(uint64_t seed) override;

 private:
  Backend backend_;
  ToggleSet toggles_;
  Problem problem_;
  /// Shared with the other points that need the same inputs (shared_problem_data).
  std::shared_ptr<const ProblemData> data_;
  StepPlan plan_;
};

/// The CPU run (the reference implementation, timed).
std::unique_ptr<TimedStep> make_cpu_run(const Problem& problem, const ProblemData& data);

#ifdef PERFLAB_TRANSDUCER_CUDA
/// The CUDA run: unfused or fused kernels, padded or packed, sync-free or
/// synchronising, as the toggles in effect say; its iteration is a
/// DeviceStep with one variant per length set.
std::unique_ptr<TimedStep> make_cuda_run(const Problem& problem, const ProblemData& data,
                                         const ToggleSet& toggles);
#endif

}  // namespace perflab::transducer
