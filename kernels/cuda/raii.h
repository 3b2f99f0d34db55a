// Owners of CUDA runtime handles, shared by every CUDA workload and the
// harness: a non-blocking stream (optionally with a priority), an event (timing off unless asked), an
// instantiated graph, and pinned host memory. Created at setup, never inside
// an iteration; destructors never throw (errors at teardown are dropped).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/graph_memsets.h"

namespace perflab::kernels::cuda {

/// The device's most urgent stream priority (numerically the lowest;
/// streams are created at the least urgent, 0, by default).
inline int greatest_stream_priority() {
  int least = 0, greatest = 0;
  PERFLAB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}

/// A stream that does not synchronise with the legacy default stream.
class Stream {
 public:
  Stream() { PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  /// With a priority (greatest_stream_priority() for the most urgent): when
  /// SMs free up, blocks of a more urgent stream's kernels start first.
  explicit Stream(int priority) {
    PERFLAB_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
  }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// An event; timing is disabled unless `timing` (cheaper to record and wait on).
class Event {
 public:
  explicit Event(bool timing = false) {
    PERFLAB_CUDA_CHECK(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// `waiter`'s later work runs after everything enqueued on `producer` so
/// far: `event` is recorded on producer and waited on by waiter (a fork or
/// a join; captured as a graph edge). Never synchronises the host.
inline void stream_waits_for(cudaStream_t waiter, cudaStream_t producer, cudaEvent_t event) {
  PERFLAB_CUDA_CHECK(cudaEventRecord(event, producer));
  PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(waiter, event, 0));
}

/// An instantiated graph, empty until set from a finished capture.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() { reset(); }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& other) noexcept {
    if (this != &other) {
      reset();
      exec_ = std::exchange(other.exec_, nullptr);
    }
    return *this;
  }
  /// Ends the capture on `stream` and instantiates what it recorded, its
  /// memset nodes turned into kernel nodes first (graph_memsets.h; unless
  /// PERFLAB_GRAPH_MEMSETS=nodes). Each
  /// kernel keeps the priority of the stream it was captured from (not the
  /// launch stream's for all): a replay schedules as the eager step does.
  void end_capture(cudaStream_t stream) {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    note_capture_stream(nullptr);  // the capture is over either way: no check waits on a stale stream
    PERFLAB_CUDA_CHECK(ended);
    // Memset nodes (cuBLASLt's, CUB's) as kernel nodes: graph_memsets.h.
    try {
      if (graph_memsets_as_kernels()) replace_memset_nodes(graph);
    } catch (...) {
      cudaGraphDestroy(graph);
      throw;
    }
    reset();
    const cudaError_t instantiated = cudaGraphInstantiate(&exec_, graph, cudaGraphInstantiateFlagUseNodePriority);
    cudaGraphDestroy(graph);
    PERFLAB_CUDA_CHECK(instantiated);
  }
  void launch(cudaStream_t stream) const { PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }
  bool empty() const { return exec_ == nullptr; }

 private:
  void reset() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  cudaGraphExec_t exec_ = nullptr;
};

/// Pinned (page-locked) host memory, so async copies from and to it overlap
/// compute.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t count) : count_(count) {
    if (count_ > 0) PERFLAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  /// A pinned copy of `source`.
  explicit PinnedBuffer(const std::vector<T>& source) : PinnedBuffer(source.size()) {
    if (count_ > 0) std::memcpy(data_, source.data(), count_ * sizeof(T));
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) cudaFreeHost(data_);
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace perflab::kernels::cuda
