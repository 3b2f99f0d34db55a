// The shared CUDA plumbing: errors carry library, call and location; the
// host-sync counter counts; buffers round-trip.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/status.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

TEST(CudaCheck, FailureIsOneLineNamingLibraryCallAndLocation) {
  // Needs no device: an invalid argument is rejected by the runtime itself
  // (or, without a driver, the driver error is reported the same way).
  try {
    PERFLAB_CUDA_CHECK(cudaSetDevice(-1));
    FAIL() << "cudaSetDevice(-1) did not fail";
  } catch (const CudaError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("CUDA error: cudaSetDevice(-1) failed: "), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_support_test.cc:"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(CudaCheck, CublasFailureNamesCublasLt) {
  try {
    PERFLAB_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "no throw";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cuBLASLt error: CUBLAS_STATUS_INVALID_VALUE failed"),
              std::string::npos)
        << e.what();
  }
}

TEST(Status, CarriesReason) {
  EXPECT_TRUE(Status::success().ok());
  Status bad = Status::invalid("vocab must be positive");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "vocab must be positive");
  EXPECT_FALSE(Status::invalid("").ok());
}

TEST(DeviceBuffer, RoundTripsAndCountsSyncs) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  std::vector<int> host = {3, 1, 4, 1, 5, 9, 2};
  DeviceBuffer<int> buf(host);
  EXPECT_EQ(buf.download(), host);
  int first = 0;
  int64_t before = host_sync_count();
  counted_copy_to_host(&first, buf.data(), sizeof(int), nullptr);
  EXPECT_EQ(first, 3);
  EXPECT_EQ(host_sync_count(), before + 1);
}

}  // namespace
}  // namespace perflab::kernels::cuda
