#include "harness/cuda_event_timer.h"

#include <string>

#include "base/error.h"

namespace perflab {
namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA error: ") + call + " failed: " + cudaGetErrorString(status) + " (" +
                cudaGetErrorName(status) + ")");
  }
}

}  // namespace

CudaEventTimer::CudaEventTimer(cudaStream_t stream) : stream_(stream) {}

CudaEventTimer::~CudaEventTimer() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t CudaEventTimer::event(size_t i) {
  while (events_.size() <= i) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");
    events_.push_back(e);
  }
  return events_[i];
}

void CudaEventTimer::start() {
  if (recorded_ % 2 != 0) throw Error("internal: CudaEventTimer::start() twice without stop()");
  check(cudaEventRecord(event(recorded_++), stream_), "cudaEventRecord");
}

void CudaEventTimer::stop() {
  if (recorded_ % 2 != 1) throw Error("internal: CudaEventTimer::stop() without start()");
  check(cudaEventRecord(event(recorded_++), stream_), "cudaEventRecord");
}

std::vector<double> CudaEventTimer::collect_ms() {
  std::vector<double> out;
  if (recorded_ == 0) return out;
  check(cudaEventSynchronize(events_[recorded_ - 1]), "cudaEventSynchronize");
  for (size_t i = 0; i + 1 < recorded_; i += 2) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime");
    out.push_back(ms);
  }
  recorded_ = 0;
  return out;
}

}  // namespace perflab
