// DeviceOps on the CUDA runtime (see step_driver.h): graph capture in
// thread-local mode (kernels/cuda/capture.h: NCCL's threads cannot invalidate
// it) on the step's stream, one instantiated graph per step variant, the
// counted host syncs of kernels/cuda/host_sync.h, CUDA-event timing, and
// CUPTI's activity records (harness/cupti_activity.h).
// Built with CUDA only.
#include <map>

#include "harness/cuda_event_timer.h"
#include "harness/cupti_activity.h"
#include "harness/step_driver.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"

namespace perflab {
namespace {

namespace kc = kernels::cuda;

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

class CudaDeviceOps final : public DeviceOps {
 public:
  int64_t host_sync_count() override { return kc::host_sync_count(); }
  void begin_capture(void* stream) override {
    kc::begin_capture(as_stream(stream));
  }
  void end_capture(void* stream, int variant) override { graphs_[variant].end_capture(as_stream(stream)); }
  void abort_capture(void* stream) override { kc::abort_capture(as_stream(stream)); }
  void launch(void* stream, int variant) override { graphs_.at(variant).launch(as_stream(stream)); }
  void synchronize(void* stream) override {
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));  // sync outside the iteration: the runner's window boundary
  }
  std::unique_ptr<DeviceIterationTimer> make_timer(void* stream) override {
    return std::make_unique<CudaEventTimer>(as_stream(stream));
  }
  void start_activity() override { cupti::start(); }
  ActivityLog stop_activity() override { return cupti::stop(); }
  uint64_t activity_clock_ns() override { return cupti::timestamp_ns(); }
  void set_launch_checks(bool synchronous) override {
    kc::set_synchronous_launch_checks(synchronous || kc::kDebugBuild);
  }

 private:
  std::map<int, kc::GraphExec> graphs_;
};

}  // namespace

std::unique_ptr<DeviceOps> make_cuda_device_ops() { return std::make_unique<CudaDeviceOps>(); }

}  // namespace perflab
