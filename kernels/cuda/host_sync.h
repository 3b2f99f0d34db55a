// Every host synchronisation a training iteration may make goes through
// these wrappers, which count it. The sync-free toggle is proven by the
// count: a sync-free iteration makes none. tests/lint/host_sync_test.sh
// fails on any synchronising runtime call in the CUDA operators and CUDA
// workload runs that is made directly and not marked, on its line, as
// outside the iteration ("// sync outside the iteration: why").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace perflab::kernels::cuda {

/// Host synchronisations made through the wrappers below since the process
/// started (thread-safe).
int64_t host_sync_count();

/// cudaStreamSynchronize, counted.
void counted_stream_synchronize(cudaStream_t stream);

/// Copies `bytes` from device memory to host memory on `stream` and waits
/// for it (one counted synchronisation): the naive way to learn a size
/// computed on the device.
void counted_copy_to_host(void* host, const void* device, size_t bytes, cudaStream_t stream);

}  // namespace perflab::kernels::cuda
