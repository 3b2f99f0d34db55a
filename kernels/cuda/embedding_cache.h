// The hot-row embedding cache on the GPU (issue 28): the CUDA twin of
// kernels/cpu/embedding_cache.h, with the same geometry, sets, victims and
// insert order, so the same batches leave the same cache (tested against
// the CPU reference). The rows behind it (`backing`) live anywhere the
// device can read: pinned, mapped host memory in the serving engine (a miss
// is read over PCIe/C2C in the same request), or device memory.
//
//   lookup   one launch, a warp per (sample, table) slot: the warp reads the
//            slot's set (ways <= 32: one lane per way) and either copies the
//            cached row (stamp = clock, count += 1, the table's hit counter
//            += 1) or the backing row into out; misses are noted in the
//            workspace.
//   insert   the distinct misses of the last lookup into the cache: CUB
//            sorts the missed rows (with their slots), run-length encodes
//            them (distinct rows, their miss counts; a scan gives each
//            row's first slot), sorts the distinct rows by set (stable: each
//            set's rows stay ascending), and one thread per set inserts its
//            rows in that order (cache_victim), copying each row's values
//            from the lookup's output. Nothing in it reads the backing store.
//            kStatic: nothing is launched.
//   refresh  after rows of the backing store changed (updates while
//            serving): each given row's cached copy, if any, is read again.
//
// run-style calls never allocate and never synchronise; insert can run on a
// second stream (off the request's critical path) as long as the next
// lookup waits for it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/embedding_cache.h"
#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// The cache's state in device memory (sized for geometry.slots()).
struct CacheState {
  CacheGeometry geometry;
  CachePolicy policy = CachePolicy::kLru;
  int64_t* keys = nullptr;      ///< [slots], kCacheEmpty for an empty way.
  uint32_t* stamps = nullptr;   ///< [slots]
  uint64_t* counts = nullptr;   ///< [slots]
  float* values = nullptr;      ///< [slots, dim]
};

struct EmbeddingCacheArguments {
  int64_t batch = 0;       ///< B: samples.
  int num_tables = 0;      ///< T
  int64_t dim = 0;         ///< D: floats per row.
  int64_t total_rows = 0;  ///< Rows of all tables (keys are global rows below it).

  const int64_t* table_row_offsets = nullptr;  ///< Device [T].
  const int32_t* ids = nullptr;                ///< Device [B, T], inside their tables (not checked).
  const float* backing = nullptr;  ///< [total_rows, dim], device-readable (mapped host memory).
  CacheState cache;
  uint32_t clock = 0;              ///< This batch's clock (the first batch is 1).
  float* out = nullptr;            ///< [B, T, D]
  uint64_t* table_hits = nullptr;  ///< Device [T], hits added (optional).
  uint64_t* inserted = nullptr;    ///< Device counter, rows inserted added (optional).
  /// The batch the workspace was sized for (workspace_bytes), when larger
  /// than `batch` (a short batch in a workspace made for the longest); 0: batch.
  int64_t workspace_batch = 0;
};

class EmbeddingCache {
 public:
  /// Checks the shape (B*T below 2^31, ways <= 32) and the pointers.
  static Status can_implement(const EmbeddingCacheArguments& args);
  /// The misses' bookkeeping and CUB's temporary storage for B*T slots.
  /// Allocates nothing; throws CudaError when CUB cannot answer (no device).
  static size_t workspace_bytes(const EmbeddingCacheArguments& args);
  /// Steps 1-2 (see the file comment) on `stream`.
  static void lookup(const EmbeddingCacheArguments& args, void* workspace, cudaStream_t stream);
  /// Step 3 on `stream`, from the same workspace and the output of the
  /// lookup before it (both untouched in between).
  static void insert(const EmbeddingCacheArguments& args, void* workspace, cudaStream_t stream);
  /// Re-reads the cached copy of each of `keys` [n] (device) from backing.
  static void refresh(const EmbeddingCacheArguments& args, const int64_t* keys, int64_t n, cudaStream_t stream);
  /// What lookup() and insert() launch. Host-only.
  static LaunchList lookup_launches(const EmbeddingCacheArguments& args);
  static LaunchList insert_launches(const EmbeddingCacheArguments& args);
};

}  // namespace perflab::kernels::cuda
