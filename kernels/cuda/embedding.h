// Multi-table embedding lookup and sparse SGD on the GPU: the CUDA twin of
// kernels/cpu/embedding.h, with the same ids/output layout.
//
// All tables live in one device allocation `tables` [total_rows, dim]; table
// t starts at row table_row_offsets[t], so the global row of ids[b, t] is
// table_row_offsets[t] + ids[b, t]. As on the CPU, ids are not checked here:
// the caller validates them once per batch. The update relies on the tables
// lying in order without overlap (offsets ascending, each id below its
// table's rows): a batch of up to 2,048 samples is sorted table by table,
// and an id past its table could then leave one row's slots in two runs.
//
//   EmbeddingForward       out[b, t, :] = row(b, t)   (fp32, or bf16 rounded to nearest even)
//   EmbeddingBackwardSgd   for every distinct row r touched by the batch:
//                            r -= lr_device[0] * (sum of grad[b, t, :] over the slots that read r)
//
// The backward sorts global row ids paired with their slot b*T+t (a radix
// sort: a block per table up to 2,048 samples, CUB's device sort beyond;
// the same pairs), then makes one update per distinct row, finding each row's run of
// slots in the sorted keys: a warp per tile of sorted slots sums each row that
// starts in its tile in slot order, the CPU's order (bit for bit with the
// CPU); a row read more often than a tile holds (a hot row: ~36k slots at
// DLE's batch 65,536) is summed in tile-sized chunks by many warps, and the
// last to finish adds the chunks in a fixed order, so results are the same
// on every run and agree with the CPU to rounding. Two variants behind one
// Arguments type:
//   kSyncFree       buffers sized for B*T slots; never synchronises.
//   kSynchronising  waits on the host for the sort before the update
//                   (counted_stream_synchronize, one host sync per run);
//                   the update is the same.
// run() never allocates; the sync-free variant never synchronises, so it
// can be captured in a CUDA graph (the learning rate is read from device
// memory, so a replay sees the current value).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/sgd.h"
#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// Element type of the forward output.
enum class EmbeddingOutputType { kFloat32, kBFloat16 };

/// How the backward learns the number of distinct rows.
enum class EmbeddingUpdateMode { kSyncFree, kSynchronising };

/// Problem and device pointers shared by the forward and the backward.
struct EmbeddingArguments {
  int64_t batch = 0;       ///< B: samples.
  int num_tables = 0;      ///< T: tables, one id per sample each.
  int64_t dim = 0;         ///< D: floats per row, the same for every table.
  int64_t total_rows = 0;  ///< Rows of all tables together (at most 2^32).

  float* tables = nullptr;                     ///< [total_rows, dim], fp32.
  const int64_t* table_row_offsets = nullptr;  ///< Device [num_tables]: first row of table t.
  const int32_t* ids = nullptr;                ///< Device [batch, num_tables].

  // Forward.
  void* out = nullptr;  ///< [batch, num_tables, dim] of out_type.
  EmbeddingOutputType out_type = EmbeddingOutputType::kFloat32;

  // Backward + sparse SGD.
  const float* grad = nullptr;       ///< [batch, num_tables, dim], fp32.
  /// Instead of grad: the gradient stored bf16 (a bf16 model's interaction
  /// writes it so), widened exactly as it is summed. Exactly one is set.
  const __nv_bfloat16* grad_bf16 = nullptr;
  const float* lr_device = nullptr;  ///< Device float: the learning rate.
  EmbeddingUpdateMode mode = EmbeddingUpdateMode::kSyncFree;

  /// Training: the forward's gather also writes the update's sort input
  /// (each slot's global row and the slot; it zeroes the update's done
  /// counters) into its workspace, and the update skips its keys launch:
  /// one launch fewer per step. Both then take the same workspace
  /// (EmbeddingBackwardSgd::workspace_bytes), which nothing else may touch
  /// between the forward and the update, and the ids must not change (with
  /// the lookup fused into the interaction, InteractionLookup, not before
  /// its backward has read them either).
  bool keys_in_forward = false;

  /// Optional: a dense SGD (SgdUpdate's, the same arithmetic) run by the
  /// update's own launch, in blocks past the tiles': the optimizer's two
  /// updates in one launch (DLRM's fused mode). Must outlive run().
  const SgdArguments* dense = nullptr;
};

/// The update's sort input, which keys_in_forward has the gather write:
/// each slot's global row and the slot, and the update's done counters to
/// zero, where they live in the update's workspace. A kernel that fuses the
/// lookup into its consumer writes them in the gather's place
/// (InteractionArguments::lookup; the device side is embedding_sort.cuh's
/// write_sort_input).
struct EmbeddingSortInput {
  uint32_t* keys = nullptr;  ///< [B*T]: the global row of slot b*T + t (null: nothing to write).
  int32_t* slots = nullptr;  ///< [B*T]: the slot itself.
  unsigned* done = nullptr;  ///< [tiles]: the update's done counters, zeroed.
  int64_t tiles = 0;
};

/// Where `args`' update keeps its sort input in `workspace`
/// (EmbeddingBackwardSgd::workspace_bytes(args) bytes). Host-only.
EmbeddingSortInput embedding_sort_input(const EmbeddingArguments& args, void* workspace);

/// Gather of every table's rows in one launch.
class EmbeddingForward {
 public:
  /// Checks the shape and that tables, table_row_offsets, ids and out are set.
  static Status can_implement(const EmbeddingArguments& args);
  /// 0, or with keys_in_forward the update's (the same workspace).
  static size_t workspace_bytes(const EmbeddingArguments& args);
  /// Launches the gather on `stream`. Never allocates or synchronises.
  static void run(const EmbeddingArguments& args, void* workspace, cudaStream_t stream);
  /// What run() launches: one gather (ids, the rows, the output; with
  /// keys_in_forward the sort keys and slots). Host-only.
  static LaunchList launches(const EmbeddingArguments& args);
};

/// Deduplicated sparse SGD: tables -= lr * (summed gradient of each distinct row).
class EmbeddingBackwardSgd {
 public:
  /// Checks the shape (B*T below 2^31, total_rows at most 2^32) and that
  /// tables, table_row_offsets, ids, exactly one of grad and grad_bf16, and
  /// lr_device are set.
  static Status can_implement(const EmbeddingArguments& args);
  /// Sort buffers for B*T slots, the update's per-tile partial sums and
  /// done counters, plus CUB's temporary storage (asked
  /// of CUB here; it depends only on B*T, the bits of total_rows - 1 and
  /// the current device's architecture). Allocates nothing; throws
  /// CudaError when CUB cannot answer (no device).
  static size_t workspace_bytes(const EmbeddingArguments& args);
  /// Runs the keys, sort and update on `stream`. `workspace` holds
  /// workspace_bytes(args) bytes, 256-byte aligned (cudaMalloc's alignment).
  /// kSyncFree never synchronises; kSynchronising makes exactly one counted
  /// host sync.
  static void run(const EmbeddingArguments& args, void* workspace, cudaStream_t stream);
  /// run() in two parts, so the sort can run on another stream while the
  /// step's MLPs run: sort() makes the keys (unless keys_in_forward: then
  /// after the forward that wrote them) and sorts them; update() (after
  /// sort()'s work, and after the gradient is complete) updates the rows.
  /// sort() reads only ids (or the forward's keys) and writes only the
  /// sorted pairs and (CUB's device sort, past 2,048 samples) CUB's storage
  /// in `workspace`.
  static void sort(const EmbeddingArguments& args, void* workspace, cudaStream_t stream);
  static void update(const EmbeddingArguments& args, void* workspace, cudaStream_t stream);
  /// What run() launches: the keys (unless keys_in_forward), the sort (one
  /// kernel up to 2,048 samples, else CUB's device radix sort: a library
  /// call, several kernels) and the row update (with the
  /// dense SGD's work when `dense` is set). The update's bytes count the
  /// gradient and sorted pairs it reads, not the table rows it updates (how
  /// many are distinct depends on the data). Host-only.
  static LaunchList launches(const EmbeddingArguments& args);
};

}  // namespace perflab::kernels::cuda
