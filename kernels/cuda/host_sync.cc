#include "kernels/cuda/host_sync.h"

#include <atomic>

#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {
namespace {
std::atomic<int64_t>& counter() {
  static std::atomic<int64_t> count{0};
  return count;
}
}  // namespace

int64_t host_sync_count() { return counter().load(std::memory_order_relaxed); }

void counted_stream_synchronize(cudaStream_t stream) {
  counter().fetch_add(1, std::memory_order_relaxed);
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void counted_copy_to_host(void* host, const void* device, size_t bytes, cudaStream_t stream) {
  PERFLAB_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
  counted_stream_synchronize(stream);
}

}  // namespace perflab::kernels::cuda
