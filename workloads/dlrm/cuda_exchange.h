// Device kernels of the cuda backend's model-parallel embedding exchange
// (cuda_model.h with a communicator): this rank's tables' ids picked out of
// the global batch, and the received rows unpacked from per-peer segments
// into the [n, T, D] the interaction reads (and its gradients packed back).
// The index arithmetic is exchange_layout.h's, shared with the CPU tests.
// Each only enqueues on `stream`: no allocation, no host synchronisation,
// so a step using them can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "workloads/dlrm/exchange_layout.h"

namespace perflab::dlrm {

/// out[b, k] = ids[b, columns[k]] for b < batch, k < picked: the ids of
/// this rank's tables (columns, device memory) out of [batch, tables].
void select_table_ids(int64_t batch, int64_t tables, const int32_t* ids, int64_t picked,
                      const int32_t* columns, int32_t* out, cudaStream_t stream);

/// Per-peer segments of n samples (`slots`: per global table, device
/// memory) into sample-major [n, tables, dim]: fp32 rows, or with `bf16`
/// bf16 rows (a bf16 model's exchanged embeddings), moved as they are.
void unpack_segments(int64_t n, int64_t tables, int64_t dim, const ExchangeSlot* slots,
                     const void* segments, void* out, bool bf16, cudaStream_t stream);

/// The inverse: sample-major [n, tables, dim] into per-peer segments, fp32
/// or (`bf16`) bf16 values (a bf16 model's embedding gradients), moved as
/// they are.
void pack_segments(int64_t n, int64_t tables, int64_t dim, const ExchangeSlot* slots,
                   const void* in, void* segments, bool bf16, cudaStream_t stream);

}  // namespace perflab::dlrm
