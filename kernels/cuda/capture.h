// One stream-capture mode for every CUDA graph perflab captures (the
// harness's step graphs and every test's): thread-local.
//
// In global mode (CUDA's default), a potentially unsafe call (cudaMalloc, a
// synchronisation, a pageable copy) made by *any* thread of the process
// while a capture is open invalidates that capture. NCCL's own threads make
// such calls while a non-blocking communicator connects and while its proxy
// runs, so a step captured beside a communicator on two or more ranks could
// fail depending on timing. Thread-local mode still refuses the capturing
// thread's own unsafe calls, the mistake a capture has to catch (a host sync
// or an allocation inside the step); relaxed would refuse nothing.
// tests/lint/capture_mode_test.sh keeps every capture on this one function.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {

inline constexpr cudaStreamCaptureMode kCaptureMode = cudaStreamCaptureModeThreadLocal;

/// Begins capturing `stream` in kCaptureMode (and notes it, so synchronous
/// launch checks do not wait inside the capture: check.h).
inline void begin_capture(cudaStream_t stream) {
  PERFLAB_CUDA_CHECK(cudaStreamBeginCapture(stream, kCaptureMode));
  note_capture_stream(stream);
}

/// Ends a capture whose recording is not wanted (a call inside it failed,
/// or the caller is unwinding): the graph, if any, dropped, the capture's
/// own error cleared (the caller reports what failed), and the note
/// cleared. Never throws. GraphExec::end_capture (raii.h) ends a wanted one.
inline void abort_capture(cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  note_capture_stream(nullptr);
}

}  // namespace perflab::kernels::cuda
