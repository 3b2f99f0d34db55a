// CUPTI activity recording (see cupti_activity.h). CUPTI hands records over
// in buffers it asks for and returns from its own threads: the buffers are
// parsed into ActivityRecords under a mutex, and stop() flushes them all.
#include "harness/cupti_activity.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "base/error.h"
#include "kernels/cuda/graph_memsets.h"

namespace perflab::cupti {
namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlignment = 8;

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                     CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

struct State {
  std::mutex mutex;
  bool registered = false;
  bool recording = false;
  ActivityLog log;
};

State& state() {
  static State s;
  return s;
}

void check(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw Error(fmt::format("CUPTI: {}: {}", call, text ? text : "unknown error"));
}

const char* copy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                               size_t /*size*/, size_t valid) {
  std::vector<ActivityRecord> out;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ActivityRecord r;
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      // A captured graph's memset node turned into a kernel node
      // (kernels/cuda/graph_memsets.h: graph_memset_kernel) is still the
      // memset it stands for: counted so, named so.
      const bool memset = k->name != nullptr && std::strstr(k->name, kernels::cuda::kGraphMemsetKernelName) != nullptr;
      r = {memset ? ActivityKind::kMemset : ActivityKind::kKernel,
           memset ? "memset (kernel node)" : k->name ? k->name : "?",
           k->start,
           k->end,
           k->deviceId,
           k->streamId,
           0,
           k->graphId,
           0};
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      r = {ActivityKind::kMemcpy,
           copy_name(m->copyKind),
           m->start,
           m->end,
           m->deviceId,
           m->streamId,
           m->bytes,
           m->graphId,
           0};
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      r = {ActivityKind::kMemset, "memset", m->start,   m->end, m->deviceId,
           m->streamId,           m->bytes, m->graphId, 0};
    } else {
      continue;
    }
    out.push_back(std::move(r));
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped);
  std::free(buffer);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (ActivityRecord& r : out) s.log.records.push_back(std::move(r));
  s.log.dropped += dropped;
}

}  // namespace

void start() {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.recording) throw Error("CUPTI: a recording is already running in this process");
    s.log = {};
  }
  if (!s.registered) {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
          "cuptiActivityRegisterCallbacks");
    s.registered = true;
  }
  for (CUpti_ActivityKind kind : kKinds) {
    const CUptiResult result = cuptiActivityEnable(kind);
    if (result != CUPTI_SUCCESS) {
      for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
      check(result, "cuptiActivityEnable");
    }
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  s.recording = true;
}

ActivityLog stop() {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.recording) return {};  // nothing started (or already stopped)
  }
  const cudaError_t synced =
      cudaDeviceSynchronize();  // sync outside the iteration: a profiled window's end
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  ActivityLog out;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.recording = false;
    out = std::exchange(s.log, {});
  }
  if (synced != cudaSuccess) {
    throw Error(fmt::format("CUDA: cudaDeviceSynchronize at the end of a profiled window: {}",
                            cudaGetErrorString(synced)));
  }
  check(flushed, "cuptiActivityFlushAll");
  return out;
}

uint64_t timestamp_ns() {
  uint64_t t = 0;
  check(cuptiGetTimestamp(&t), "cuptiGetTimestamp");
  return t;
}

}  // namespace perflab::cupti
