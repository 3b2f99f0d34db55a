// The transducer workload as a throughput benchmark: the problem's data is
// prepared once; each seed's run times iterations on its backend and ends
// with a correctness gate.
#pragma once

#include <memory>

#include "harness/workload.h"
#include "workloads/transducer/problem.h"

namespace perflab::transducer {

class TransducerBenchmark final : public Benchmark {
 public:
  explicit TransducerBenchmark(const WorkloadConfig& config);
  TrainingPlan plan() const override { return plan_; }
  std::unique_ptr<TrainingRun> start_run(uint64_t seed) override;

 private:
  WorkloadConfig config_;
  Problem problem_;
  ProblemData data_;
  TrainingPlan plan_;
};

/// The CPU run (the reference implementation, timed).
std::unique_ptr<TrainingRun> make_cpu_run(const Problem& problem, const ProblemData& data);

#ifdef PERFLAB_TRANSDUCER_CUDA
/// The CUDA run: unfused or fused kernels, padded or packed, sync-free or
/// synchronising, as the toggles in `config` say.
std::unique_ptr<TrainingRun> make_cuda_run(const Problem& problem, const ProblemData& data,
                                           const WorkloadConfig& config);
#endif

}  // namespace perflab::transducer
