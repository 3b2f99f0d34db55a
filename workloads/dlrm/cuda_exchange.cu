// The embedding exchange's device kernels (see cuda_exchange.h): one thread
// per element, grid-stride, indices from exchange_layout.h.
#include <algorithm>

#include "kernels/cuda/check.h"
#include "workloads/dlrm/cuda_exchange.h"

namespace perflab::dlrm {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 16;  // grid-stride loops cover the rest

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

__global__ void select_kernel(int64_t batch, int64_t tables, const int32_t* __restrict__ ids,
                              int64_t picked, const int32_t* __restrict__ columns,
                              int32_t* __restrict__ out) {
  const int64_t total = batch * picked;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / picked;
    out[i] = ids[b * tables + columns[i - b * picked]];
  }
}

/// to_segments: sample-major -> segments (pack); otherwise the reverse.
/// T: the element, moved as it is (float, or the 16 bits of a bf16).
template <bool to_segments, typename T>
__global__ void move_kernel(int64_t n, int64_t tables, int64_t dim,
                            const ExchangeSlot* __restrict__ slots, const T* __restrict__ from,
                            T* __restrict__ to) {
  const int64_t total = n * tables * dim;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / dim;  // sample_row(tables, b, t)
    const int64_t d = i - row * dim;
    const int64_t b = row / tables;
    const int64_t t = row - b * tables;
    const int64_t seg = segment_row(slots[t], n, b) * dim + d;
    if (to_segments) {
      to[seg] = from[i];
    } else {
      to[i] = from[seg];
    }
  }
}

}  // namespace

void select_table_ids(int64_t batch, int64_t tables, const int32_t* ids, int64_t picked,
                      const int32_t* columns, int32_t* out, cudaStream_t stream) {
  if (batch < 1 || picked < 1) return;
  select_kernel<<<blocks_for(batch * picked), kThreads, 0, stream>>>(batch, tables, ids, picked,
                                                                     columns, out);
  PERFLAB_CUDA_CHECK_LAUNCH("select_kernel");
}

void unpack_segments(int64_t n, int64_t tables, int64_t dim, const ExchangeSlot* slots,
                     const void* segments, void* out, bool bf16, cudaStream_t stream) {
  if (n < 1 || tables < 1 || dim < 1) return;
  if (bf16) {
    move_kernel<false><<<blocks_for(n * tables * dim), kThreads, 0, stream>>>(
        n, tables, dim, slots, static_cast<const uint16_t*>(segments), static_cast<uint16_t*>(out));
  } else {
    move_kernel<false><<<blocks_for(n * tables * dim), kThreads, 0, stream>>>(
        n, tables, dim, slots, static_cast<const float*>(segments), static_cast<float*>(out));
  }
  PERFLAB_CUDA_CHECK_LAUNCH("unpack_segments");
}

void pack_segments(int64_t n, int64_t tables, int64_t dim, const ExchangeSlot* slots,
                   const void* in, void* segments, bool bf16, cudaStream_t stream) {
  if (n < 1 || tables < 1 || dim < 1) return;
  if (bf16) {
    move_kernel<true><<<blocks_for(n * tables * dim), kThreads, 0, stream>>>(
        n, tables, dim, slots, static_cast<const uint16_t*>(in), static_cast<uint16_t*>(segments));
  } else {
    move_kernel<true><<<blocks_for(n * tables * dim), kThreads, 0, stream>>>(
        n, tables, dim, slots, static_cast<const float*>(in), static_cast<float*>(segments));
  }
  PERFLAB_CUDA_CHECK_LAUNCH("pack_segments");
}

}  // namespace perflab::dlrm
