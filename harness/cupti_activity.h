// CUPTI's activity API behind three calls: start recording every kernel,
// copy and memset the device runs; stop (after the device is idle) and
// return the records; and CUPTI's clock. Built with CUDA only; used by the
// CUDA DeviceOps (harness/cuda_device_ops.cc).
#pragma once

#include <cstdint>

#include "harness/activity.h"

namespace perflab::cupti {

/// Enables the kernel (concurrent), memcpy and memset activity kinds.
/// Throws Error ("CUPTI: <call>: <reason>") when CUPTI refuses (another
/// profiler holds it, or the driver has no CUPTI support), or when a
/// recording is already running in this process.
void start();
/// Synchronises the device, flushes CUPTI's buffers, disables the kinds and
/// returns the records since start() (device records only).
ActivityLog stop();
/// cuptiGetTimestamp: the nanosecond clock of the records.
uint64_t timestamp_ns();

}  // namespace perflab::cupti
