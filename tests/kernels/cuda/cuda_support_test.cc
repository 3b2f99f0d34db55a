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

// A stale read waiting to happen, caught: a large pageable upload, then at
// once a copy on a non-blocking stream (which does not wait for the legacy
// stream), and a fill that is then read on it. Without the waits in
// DeviceBuffer::upload and zero, the copy may read the buffer before the
// DMA lands (the first H200 run's NCCL test read stale input that way).
// Several rounds with fresh values, so a stale buffer holds wrong ones.
TEST(DeviceBuffer, AnUploadOrFillHasLandedForEveryStreamWhenItReturns) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr size_t kCount = size_t{64} << 20;  // 256 MiB of floats: many DMA chunks
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<float> source(kCount), copy(kCount);
  std::vector<float> host(kCount), back(kCount);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < kCount; ++i) host[i] = static_cast<float>(round * 7 + 1) + static_cast<float>(i % 1021);
    source.upload(host);
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(copy.data(), source.data(), kCount * sizeof(float), cudaMemcpyDeviceToDevice,
                                       stream));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(back.data(), copy.data(), kCount * sizeof(float), cudaMemcpyDeviceToHost,
                                       stream));
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // sync outside the iteration: test read-back
    size_t wrong = 0;
    for (size_t i = 0; i < kCount; ++i) wrong += back[i] != host[i];
    EXPECT_EQ(wrong, 0u) << "round " << round << ": the non-blocking stream read a stale upload";
    source.zero();
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(back.data(), source.data(), kCount * sizeof(float), cudaMemcpyDeviceToHost,
                                       stream));
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // sync outside the iteration: test read-back
    wrong = 0;
    for (size_t i = 0; i < kCount; ++i) wrong += back[i] != 0.0f;
    EXPECT_EQ(wrong, 0u) << "round " << round << ": the non-blocking stream read before the fill landed";
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace perflab::kernels::cuda
