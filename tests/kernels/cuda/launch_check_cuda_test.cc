// Synchronous launch checks (kernels/cuda/check.h; `perflab run
// --check-launches`, and every debug build): a fault inside a kernel is
// reported by that kernel's own launch check, naming it, instead of by
// whichever call happens to come next; inside a graph capture no check
// waits, so the capture holds. The fault test comes last and is alone in
// this executable: an illegal address ends the process's CUDA context.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

TEST(LaunchChecks, ACaptureHoldsWhileChecksAreSynchronous) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  set_synchronous_launch_checks(true);
  std::vector<float> host = {-1.5f, 2.0f, -0.0f, 3.25f, -7.0f};
  DeviceBuffer<float> x(host), y(host.size());
  Stream stream;
  GraphExec graph;
  begin_capture(stream.get());
  relu_forward(DType::kF32, static_cast<int64_t>(host.size()), x.data(), y.data(), stream.get());
  graph.end_capture(stream.get());  // throws when a check waited inside the capture (invalidated)
  graph.launch(stream.get());
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(y.download(), (std::vector<float>{0.0f, 2.0f, 0.0f, 3.25f, 0.0f}));
  // Outside the capture again, checks wait (a good launch passes).
  relu_forward(DType::kF32, static_cast<int64_t>(host.size()), x.data(), y.data(), stream.get());
}

TEST(LaunchChecks, AFaultIsNamedByTheKernelThatMadeIt) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  set_synchronous_launch_checks(true);
  DeviceBuffer<float> x(std::vector<float>(1 << 20, 1.0f));
  // y points at memory the process does not own: the kernel's writes fault.
  void* nowhere = reinterpret_cast<void*>(uintptr_t{0x1000});
  try {
    relu_forward(DType::kF32, int64_t{1} << 20, x.data(), nowhere, nullptr);
    FAIL() << "the faulting kernel's own launch check passed";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("relu_forward_kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorIllegalAddress"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
