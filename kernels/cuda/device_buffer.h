// DeviceBuffer<T>: owning, move-only device memory. Allocation happens at
// setup (never inside an operator's run()), so a training iteration can be
// captured in a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count_ > 0) PERFLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
  }
  /// Allocates and copies `host` (synchronous; setup and tests only).
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) cudaFree(data_);
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  /// Copies that have landed when they return, for every stream (setup and
  /// tests only; never inside run()). cudaMemcpy from pageable memory and
  /// cudaMemset go on the legacy stream and may return before the DMA or
  /// the fill lands, and a non-blocking stream does not wait for the legacy
  /// stream: the first H200 run read stale input that way (NCCL test,
  /// 2026-11-26). So upload and zero wait for the legacy stream, and
  /// download waits for the whole device before it reads.
  void upload(const std::vector<T>& host) {
    if (!host.empty()) {
      PERFLAB_CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));  // sync outside the iteration: setup
      PERFLAB_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // sync outside the iteration: setup
    }
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) {
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: tests and read-back
      PERFLAB_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));  // sync outside the iteration: tests and read-back
    }
    return host;
  }
  void zero() {
    if (count_ > 0) {
      PERFLAB_CUDA_CHECK(cudaMemset(data_, 0, bytes()));
      PERFLAB_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // sync outside the iteration: setup
    }
  }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace perflab::kernels::cuda
