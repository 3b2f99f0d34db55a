// Private to the embedding operators' two sources: embedding.cu (checks,
// the gather, the update's workspace layout and declared launches) and
// embedding_update.cu (the update's sort and its SGD kernel). The sort's
// key and slot types, the tiles of the sorted order, and where the update's
// buffers lie in its workspace, which the gather writes into too
// (keys_in_forward). Host code; the types are the kernels' too.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/embedding.h"

namespace perflab::kernels::cuda::embedding_detail {

inline constexpr int kThreads = 256;
inline constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest
inline constexpr int64_t kMaxRowsForKeys = int64_t{1} << 32;  // rows are uint32 sort keys

using RowKey = uint32_t;  // global row id
using Slot = int32_t;     // b * T + t

inline unsigned blocks_for(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

/// Key bits the radix sort looks at: enough for total_rows - 1 (at least 1).
inline int row_key_bits(int64_t total_rows) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) < total_rows) ++bits;
  return bits;
}

/// Slots per tile of the sorted order: enough tiles to give every SM
/// several warps at small batches, few enough that combining a hot row's
/// chunks stays short at large ones (B*T = 1.7M: 256, 6,656 tiles).
inline int64_t tile_slots(int64_t num_slots) {
  constexpr int64_t kTargetTiles = 4096;
  return std::clamp<int64_t>((num_slots + kTargetTiles - 1) / kTargetTiles, 32, 256);
}

inline int64_t tiles_for(int64_t num_slots) {
  const int64_t tile = tile_slots(num_slots);
  return (num_slots + tile - 1) / tile;
}

/// The update's sort: up to kTableSortMaxBatch samples, a block per table
/// sorts that table's slots (sort_per_table_kernel: one launch, no memset);
/// beyond, CUB's device-wide radix sort (a histogram, a scan and a pass per
/// 8 key bits, each pass after a memset). A table's rows lie below the next
/// table's, so the tables' sorted runs side by side are the whole sorted
/// order, and both sorts are stable: the same keys and slots, bit for bit.
enum class SortAlgorithm { kAuto, kPerTable, kDevice };
inline constexpr int64_t kTableSortMaxBatch = 2048;
inline bool per_table_sort(int64_t batch) { return batch <= kTableSortMaxBatch; }

/// The update's sort (EmbeddingBackwardSgd::sort, which passes kAuto) with
/// its algorithm named: tests compare the two. kPerTable past
/// kTableSortMaxBatch throws std::invalid_argument.
void sort_pairs(const EmbeddingArguments& a, void* workspace, cudaStream_t stream, SortAlgorithm algorithm);

/// How the update's warps read and write a row's columns: a lane four
/// adjacent columns in one access (kQuads: dim a multiple of 4, the tables,
/// the gradient and the workspace aligned to a row's quad), or a column
/// every 32 (kScalar: any shape). kAuto takes kQuads where it can. Both sum
/// each column's slots in the same order with the same roundings: the same
/// bits (tests compare them).
enum class UpdateColumns { kAuto, kScalar, kQuads };

/// Whether the update can take kQuads for these arguments and workspace.
bool update_quads_possible(const EmbeddingArguments& a, const void* workspace);

/// The update's SGD launch (EmbeddingBackwardSgd::update, which passes
/// kAuto) with its column layout named. kQuads where update_quads_possible
/// is false throws std::invalid_argument.
void update_rows(const EmbeddingArguments& a, void* workspace, cudaStream_t stream, UpdateColumns columns);

/// Where each buffer sits in the backward's workspace (byte offsets).
struct BackwardLayout {
  size_t keys_in = 0, keys_out = 0, slots_in = 0, slots_out = 0;
  size_t done = 0, partials = 0;
  size_t temp = 0, temp_bytes = 0, total = 0;
};

/// The update's workspace layout for this problem (remembered per thread
/// for the last problem and device: the forward, with keys_in_forward, and
/// the update ask for it every step, and CUB's size query is host work).
BackwardLayout backward_layout(int64_t num_slots, int64_t dim, int key_bits);

template <typename T>
T* at_offset(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace perflab::kernels::cuda::embedding_detail
