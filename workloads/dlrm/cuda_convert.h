// Small device helpers of the DLRM CUDA model that no kernel in kernels/cuda
// provides: the bf16 -> fp32 widening of a bf16 model's logits for
// evaluation and serving (without the fused head, which writes fp32 logits), and
// writing one value to device memory from a kernel argument (the value
// travels in the launch itself, so no host buffer must stay alive until the
// copy runs), and the learning rate of the schedule at a step counter kept
// on the device. These only enqueue on `stream`: no allocation,
// no host synchronisation, so they can be captured in a CUDA graph. And two
// set-up fills: an embedding table's seeded initial values, drawn on the
// device, and cuRAND's uniform operands for timing GEMMs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/launch.h"
#include "workloads/dlrm/schedule.h"

namespace perflab::dlrm {

/// dst[i] = float(src[i]) for n elements; src holds __nv_bfloat16.
void cast_bf16_to_float(int64_t n, const void* src, float* dst, cudaStream_t stream);

/// Embedding table `table`'s initial values under `seed`, [rows, dim] into
/// dst: CpuModel's (initialise_table), the same bits (init_random.h),
/// drawn where the table lives instead of on the host and uploaded.
void fill_embedding_table(float* dst, int64_t rows, int64_t dim, uint64_t seed, int table, cudaStream_t stream);

/// *dst = value (one thread; the value is a kernel argument).
void set_device_float(float* dst, float value, cudaStream_t stream);

/// *dst = value (one thread; the value is a kernel argument).
void set_device_int64(int64_t* dst, int64_t value, cudaStream_t stream);

/// *lr = float(schedule.at(*step)), then ++*step: one thread, reading the
/// step from device memory, so a captured step replays it with the next
/// step's rate and the host writes nothing between replays. The same bits
/// as LrSchedule::at on the host: the same double operations in the same
/// order, each rounded to nearest (no contraction into FMAs), then rounded
/// to float.
void scheduled_learning_rate(const LrSchedule& schedule, int64_t* step, float* lr, cudaStream_t stream);

/// Fills `n` elements of `dst` (fp32, or __nv_bfloat16 when `bf16`) with
/// uniform values in (0, 1] from cuRAND's Philox generator, seeded by
/// `seed`, on `stream`: operands for timing that are not all zeros (zeros
/// can run faster than data). Creates a generator and, for bf16, a float
/// staging buffer: setup only, never inside a step.
void fill_uniform(void* dst, int64_t n, bool bf16, uint64_t seed, cudaStream_t stream);

/// What scheduled_learning_rate launches (kernels/launch.h). Host-only.
kernels::LaunchList scheduled_learning_rate_launches();

}  // namespace perflab::dlrm
