// DeviceIterationTimer on CUDA events: start()/stop() record an event pair
// on the workload's stream (no synchronisation); collect_ms() waits for the
// last event and returns each pair's elapsed time. Events are created once
// and reused, so timing an iteration allocates nothing. Built with CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "harness/workload.h"

namespace perflab {

class CudaEventTimer final : public DeviceIterationTimer {
 public:
  explicit CudaEventTimer(cudaStream_t stream);
  ~CudaEventTimer() override;
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void start() override;
  void stop() override;
  std::vector<double> collect_ms() override;

 private:
  cudaEvent_t event(size_t i);
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;  ///< 2 per pending iteration, grown as needed.
  size_t recorded_ = 0;
};

}  // namespace perflab
