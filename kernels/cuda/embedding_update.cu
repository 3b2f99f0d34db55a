// The embedding update (embedding.h's EmbeddingBackwardSgd): the radix sort
// of (row, slot) pairs (a block per table for small batches, CUB's device
// sort beyond: embedding_detail.h's SortAlgorithm), then a warp per tile of
// the sorted order sums
// each distinct row's gradients and applies SGD, optionally with the dense
// SGD in the same launch. Checks, workspace layout and declared launches are
// embedding.cu's.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/check.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_detail.h"
#include "kernels/cuda/embedding_sort.cuh"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/sgd_device.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

using embedding_detail::at_offset;
using embedding_detail::backward_layout;
using embedding_detail::BackwardLayout;
using embedding_detail::blocks_for;
using embedding_detail::kMaxBlocks;
using embedding_detail::kThreads;
using embedding_detail::row_key_bits;
using embedding_detail::RowKey;
using embedding_detail::Slot;
using embedding_detail::tile_slots;
using embedding_detail::tiles_for;

/// keys[slot] = global row of ids[slot]; slots[slot] = slot. Also zeroes
/// the update's done counters (`tiles` of them), which run before it on the
/// same stream: no memset launch.
__global__ void make_keys_kernel(const int64_t* __restrict__ row_offsets,
                                 const int32_t* __restrict__ ids, int num_tables, int64_t num_slots,
                                 RowKey* __restrict__ keys, Slot* __restrict__ slots,
                                 unsigned* __restrict__ done, int64_t tiles) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < num_slots;
       i += int64_t{gridDim.x} * blockDim.x) {
    write_sort_input(EmbeddingSortInput{keys, slots, done, tiles}, i, row_offsets[i % num_tables] + ids[i]);
  }
}

/// Table blockIdx.x's slots sorted by row, stably, by one block: slot s * T
/// + t of sample s (the sort input's layout: make_keys_kernel, the gather,
/// the interaction's lookup) is item s of the block's blocked arrangement,
/// padded past the batch with the largest key (sorted after every real one
/// of the same key, being later); the table's sorted pairs go to positions
/// [t * batch, (t + 1) * batch). Slots are the slot itself
/// (EmbeddingSortInput), so they are computed, not loaded. The pairs of
/// CUB's device sort, bit for bit (embedding_detail.h).
template <int kBlockThreads, int kItems>
__global__ void __launch_bounds__(kBlockThreads)
    sort_per_table_kernel(const RowKey* __restrict__ keys_in, int num_tables, int64_t batch, int key_bits,
                          RowKey* __restrict__ keys_out, Slot* __restrict__ slots_out) {
  using BlockSort = cub::BlockRadixSort<RowKey, kBlockThreads, kItems, Slot>;
  __shared__ typename BlockSort::TempStorage temp;
  const int64_t t = blockIdx.x;
  RowKey keys[kItems];
  Slot slots[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int64_t s = int64_t{threadIdx.x} * kItems + j;
    const int64_t slot = s * num_tables + t;
    keys[j] = s < batch ? keys_in[slot] : ~RowKey{0};
    slots[j] = static_cast<Slot>(s < batch ? slot : 0);
  }
  BlockSort(temp).Sort(keys, slots, 0, key_bits);
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int64_t at = int64_t{threadIdx.x} * kItems + j;
    if (at < batch) {
      keys_out[t * batch + at] = keys[j];
      slots_out[t * batch + at] = slots[j];
    }
  }
}

/// Columns each lane accumulates per pass over a run: a warp covers
/// 32 * kColsPerLane columns at once (DLRM's 128 in one pass).
constexpr int kColsPerLane = 4;
constexpr unsigned kFullMask = 0xffffffffu;

/// The first sorted position in [0, x] whose key is keys[x]: where the run
/// holding x starts (binary search; keys are sorted).
__device__ int64_t run_start(const RowKey* __restrict__ keys, int64_t x) {
  const RowKey key = keys[x];
  int64_t lo = -1, hi = x;  // keys[lo] < key (lo = -1: none), keys[hi] == key
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return hi;
}

/// One past the last sorted position whose key is keys[start]: where the
/// run from `start` ends. Galloping from `start`, then a binary search, so a
/// run of c slots costs about 2 log2(c) reads (a hot row's ~36k: ~30).
__device__ int64_t run_end(const RowKey* __restrict__ keys, int64_t num_slots, int64_t start) {
  const RowKey key = keys[start];
  int64_t lo = start, step = 1;  // keys[lo] == key
  int64_t hi = start + 1;        // first candidate past the run
  while (hi < num_slots && keys[hi] == key) {
    lo = hi;
    step *= 2;
    hi = start + step;
  }
  if (hi > num_slots) hi = num_slots;
  while (hi - lo > 1) {  // keys[lo] == key; hi == num_slots or keys[hi] != key
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] == key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return hi;
}

/// acc[i] += grad[slot, c0 + lane + 32 i] for the slots at sorted positions
/// [begin, end), in order (warp-uniform arguments). Each lane loads one
/// slot index of 32 and the warp broadcasts it, so a row's gradient is
/// read in coalesced pieces (128 bytes fp32, 64 bf16). TG: the gradient's
/// stored type (fp32, or bf16 widened exactly).
template <typename TG>
__device__ void add_slots(const Slot* __restrict__ sorted_slots, const TG* __restrict__ grad, int64_t dim,
                          int64_t c0, int64_t begin, int64_t end, float (&acc)[kColsPerLane]) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (int64_t base = begin; base < end; base += 32) {
    const int count = static_cast<int>(end - base < 32 ? end - base : 32);
    const Slot mine = lane < count ? sorted_slots[base + lane] : 0;
#pragma unroll 8
    for (int u = 0; u < count; ++u) {
      const TG* __restrict__ row = grad + int64_t{__shfl_sync(kFullMask, mine, u)} * dim;
#pragma unroll
      for (int i = 0; i < kColsPerLane; ++i) {
        const int64_t col = c0 + lane + 32 * i;
        if (col < dim) acc[i] = __fadd_rn(acc[i], widen(row[col]));
      }
    }
  }
}

/// w -= lr * sum, rounded as the CPU rounds (no fused multiply-add).
__device__ void apply_sgd(float* __restrict__ w, int64_t dim, int64_t c0, float lr,
                          const float (&acc)[kColsPerLane]) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
#pragma unroll
  for (int i = 0; i < kColsPerLane; ++i) {
    const int64_t col = c0 + lane + 32 * i;
    if (col < dim) w[col] = __fsub_rn(w[col], __fmul_rn(lr, acc[i]));
  }
}

/// The dense SGD some of the update's blocks run (EmbeddingArguments::dense):
/// SgdUpdate's arithmetic (no fused multiply-add), fp32 or bf16 gradients,
/// the optional bf16 copy of the updated weights.
struct DenseSgd {
  int64_t count = 0;  ///< 0: none
  float* w = nullptr;
  const float* g = nullptr;
  const __nv_bfloat16* g_bf16 = nullptr;
  const float* lr = nullptr;
  __nv_bfloat16* w_bf16 = nullptr;
};

/// How many sorted positions a warp loads at once when it streams runs:
/// their gradient rows and the tables' rows of the runs ending among them
/// are all in flight before any is added (2 x kGroup loads per lane).
constexpr int kGroup = 4;
static_assert(32 % kGroup == 0, "a group never straddles two blocks of 32 positions");

/// The partial of chunk k of the long run from `start` (see sgd_tiles_kernel):
/// in the tile the chunk starts in, slot 2q + 1 for a run's first chunk and
/// 2q for a later one (a tile holds at most one of each).
__device__ __forceinline__ float* chunk_partial(float* partials, int64_t start, int64_t k, int64_t tile,
                                                int64_t dim) {
  const int64_t q = (start + k * tile) / tile;
  return partials + (2 * q + (k == 0 ? 1 : 0)) * dim;
}

/// Once this warp's chunk of the long run (start, count) is in its partial:
/// counts the chunk (done[start / tile], zeroed with the sort keys), and the
/// warp that counts the run's last chunk adds the chunks' partials in chunk
/// order and applies the row. Warp-uniform arguments.
__device__ void finish_long_run(int64_t start, int64_t count, int64_t tile, int64_t dim, float* partials,
                                unsigned* done, float* __restrict__ w, float lr) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int64_t chunks = (count + tile - 1) / tile;
  __threadfence();  // this chunk's partial is visible before it is counted
  __syncwarp();
  unsigned finished = 0;
  if (lane == 0) finished = atomicAdd(done + start / tile, 1u) + 1u;
  finished = __shfl_sync(kFullMask, finished, 0);
  if (finished != static_cast<unsigned>(chunks)) return;
  __syncwarp();  // every lane past lane 0's atomic before any reads the partials
  __threadfence();
  constexpr int64_t kPass = 32 * kColsPerLane;
  for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
    float acc[kColsPerLane] = {};
    for (int64_t k = 0; k < chunks; ++k) {
      const float* part = chunk_partial(partials, start, k, tile, dim);
#pragma unroll
      for (int i = 0; i < kColsPerLane; ++i) {
        const int64_t col = c0 + lane + 32 * i;
        if (col < dim) acc[i] = __fadd_rn(acc[i], __ldcg(part + col));  // L2: written by other SMs
      }
    }
    apply_sgd(w, dim, c0, lr, acc);
  }
}

/// One column pass [c0, c0 + 32 kColsPerLane) of a tile's runs, streamed
/// from `pos` (the first sorted position of a run) through the sorted order:
/// every run that starts before `last` and has at most `tile` slots is
/// summed in slot order from zero and applied (w -= lr * sum, no fused
/// multiply-add: the CPU's rounding), reading past `last` to finish the
/// tile's last run. Positions come 32 at a time (a lane's key and slot;
/// where runs end, from a ballot), then kGroup at a time with every load of
/// the group issued before the first add: a warp keeps its loads in flight
/// instead of waiting out a search and a read per run. A run longer than
/// `tile` starts here and reaches past `last` (the tile's last run); its
/// first `tile` slots are its first chunk, whose sum goes to that chunk's
/// partial, and its start is returned for the chunk count (-1: none).
template <bool kFullPass, typename TG>
__device__ int64_t stream_runs(const RowKey* __restrict__ sorted_keys, const Slot* __restrict__ sorted_slots,
                               int64_t num_slots, int64_t tile, int64_t pos, int64_t last,
                               const TG* __restrict__ grad, int64_t dim, int64_t c0, float* __restrict__ tables,
                               float lr, float* __restrict__ partials) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  int64_t begin = pos;  // the current run's first position
  float acc[kColsPerLane] = {};
  for (int64_t base = pos; base < num_slots; base += 32) {
    if (begin == base && base >= last) return -1;  // the tile's last run ended on the block before
    const int n = static_cast<int>(num_slots - base < 32 ? num_slots - base : 32);
    const bool have = lane < n;
    const RowKey key = have ? sorted_keys[base + lane] : 0;
    const Slot slot = have ? sorted_slots[base + lane] : 0;
    RowKey next = __shfl_down_sync(kFullMask, key, 1);
    if (lane == 31 && base + 32 < num_slots) next = sorted_keys[base + 32];
    // Bit u: position base + u is the last of its run.
    const unsigned ends = __ballot_sync(kFullMask, have && (base + lane + 1 >= num_slots || key != next));
    for (int u0 = 0; u0 < n; u0 += kGroup) {
      // Every load of the group is unconditional, into its own register,
      // and nothing reads one before all are issued: a predicated load with
      // a default made the compiler load through one register and wait on
      // each (sm_90 SASS). A position past n reads row 0 (lanes past n hold
      // slot and key 0) and, in a pass narrower than 32 kColsPerLane
      // columns, a column past dim reads column 0: valid addresses, values
      // unused. A full pass needs no clamp: one base and fixed offsets.
      TG g_raw[kGroup][kColsPerLane];    // the group's gradient rows
      float old[kGroup][kColsPerLane];  // the tables' rows at its positions (used where a run ends)
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        const int u = u0 + j;  // at most 31 (u0 <= 28)
        const TG* __restrict__ row = grad + int64_t{__shfl_sync(kFullMask, slot, u)} * dim;
        const float* __restrict__ w = tables + int64_t{__shfl_sync(kFullMask, key, u)} * dim;
#pragma unroll
        for (int i = 0; i < kColsPerLane; ++i) {
          const int64_t col = c0 + lane + 32 * i;
          const int64_t c = kFullPass || col < dim ? col : 0;
          g_raw[j][i] = row[c];
          old[j][i] = w[c];
        }
      }
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        const int u = u0 + j;
        if (u >= n) break;
        const int64_t p = base + u;
        if (p == begin) {
          if (p >= last) return -1;  // a later tile's run
#pragma unroll
          for (int i = 0; i < kColsPerLane; ++i) acc[i] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kColsPerLane; ++i) acc[i] = __fadd_rn(acc[i], widen(g_raw[j][i]));
        if (((ends >> u) & 1u) != 0) {
          float* __restrict__ w = tables + int64_t{__shfl_sync(kFullMask, key, u)} * dim;
#pragma unroll
          for (int i = 0; i < kColsPerLane; ++i) {
            const int64_t col = c0 + lane + 32 * i;
            if (col < dim) w[col] = __fsub_rn(old[j][i], __fmul_rn(lr, acc[i]));
          }
          begin = p + 1;
        } else if (p + 1 - begin == tile) {  // a long run: its first chunk is summed
          float* __restrict__ partial = chunk_partial(partials, begin, 0, tile, dim);
#pragma unroll
          for (int i = 0; i < kColsPerLane; ++i) {
            const int64_t col = c0 + lane + 32 * i;
            if (col < dim) partial[col] = acc[i];
          }
          return begin;
        }
      }
    }
  }
  return -1;
}

/// The sparse SGD of every distinct row, one warp per tile of `tile` sorted
/// positions (so the grid follows B*T, never B*T*dim, and no warp waits on
/// a hot row's thousands of slots):
///  - a run of at most `tile` slots is summed in slot order and applied by
///    the warp of the tile it starts in (stream_runs): the CPU's order, so
///    such rows match the CPU bit for bit;
///  - a longer run is cut into chunks of `tile` slots from its start; the
///    warp of the tile a chunk starts in sums it into that chunk's partial,
///    and the warp that finishes the run's last chunk adds the chunks in
///    chunk order and applies the row (finish_long_run). The order is fixed,
///    so the result is the same on every run; against the CPU's sequential
///    sum it differs by rounding within the bound the tests state.
/// A tile that opens inside a run from an earlier tile finds that run's
/// bounds by search (run_start, run_end): it sums the run's chunk that
/// starts in it, if the run is long, and streams from the run's end.
/// Blocks from tile_blocks on run `dense` instead (when it has a count).
/// Two blocks a SM (ptxas: 114-115 registers, no spills): a group's 32
/// loads a lane in flight need the registers; capped at 80 (three blocks)
/// the group spilled.
template <typename TG>
__global__ void __launch_bounds__(kThreads, 2)
    sgd_tiles_kernel(const RowKey* __restrict__ sorted_keys, const Slot* __restrict__ sorted_slots, int64_t num_slots,
                     int64_t tile, int64_t num_tiles, const TG* __restrict__ grad, const float* __restrict__ lr_device,
                     int64_t dim, float* __restrict__ partials, unsigned* __restrict__ done,
                     float* __restrict__ tables, unsigned tile_blocks, DenseSgd dense) {
  if (blockIdx.x >= tile_blocks) {  // the dense SGD's blocks
    const float lr = *dense.lr;
    const int64_t t = int64_t{blockIdx.x - tile_blocks} * blockDim.x + threadIdx.x;
    const int64_t threads = int64_t{gridDim.x - tile_blocks} * blockDim.x;
    if (dense.g_bf16 != nullptr) {
      sgd_range(dense.w, dense.g_bf16, lr, dense.w_bf16, dense.count, t, threads);
    } else {
      sgd_range(dense.w, dense.g, lr, dense.w_bf16, dense.count, t, threads);
    }
    return;
  }
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) >> 5;
  const int64_t warps = (int64_t{tile_blocks} * blockDim.x) >> 5;
  const float lr = *lr_device;
  constexpr int64_t kPass = 32 * kColsPerLane;
  for (int64_t q = warp; q < num_tiles; q += warps) {
    const int64_t first = q * tile;
    const int64_t last = first + tile < num_slots ? first + tile : num_slots;
    int64_t pos = first;
    if (first > 0 && sorted_keys[first - 1] == sorted_keys[first]) {  // a run from an earlier tile reaches in
      // Its end, 32 positions a read (lane i: position base + i; the first
      // lane past the run, or past the array, marks it), and whether it is
      // longer than a tile by one more read: the run holds every position
      // from its start to end - 1, so count = end - start > tile exactly when
      // position end - tile - 1 holds its key. A short run (the usual case)
      // costs a read or two; only a long one, whose chunk this tile may sum,
      // is searched for its start.
      const RowKey key = sorted_keys[first];
      int64_t end = -1;
      for (int64_t base = first; end < 0 && base < first + tile; base += 32) {
        const int64_t p = base + lane;
        const unsigned past = __ballot_sync(kFullMask, p >= num_slots || sorted_keys[p] != key);
        if (past != 0) end = base + __ffs(static_cast<int>(past)) - 1;
      }
      // No end within a tile of `first`: the run holds first - 1 .. first + tile - 1, more than a tile.
      const bool long_run = end < 0 || (end - tile - 1 >= 0 && sorted_keys[end - tile - 1] == key);
      if (long_run) {
        const int64_t start = run_start(sorted_keys, first);
        end = run_end(sorted_keys, num_slots, start);
        const int64_t count = end - start;
        // The run's chunk that starts in this tile, if one does (a later
        // chunk: its first starts in the run's first tile).
        const int64_t k = (first - start + tile - 1) / tile;
        const int64_t from = start + k * tile;
        if (from < last && from < end) {
          const int64_t to = from + tile < end ? from + tile : end;
          float* __restrict__ partial = chunk_partial(partials, start, k, tile, dim);
          for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
            float acc[kColsPerLane] = {};
            add_slots(sorted_slots, grad, dim, c0, from, to, acc);
#pragma unroll
            for (int i = 0; i < kColsPerLane; ++i) {
              const int64_t col = c0 + lane + 32 * i;
              if (col < dim) partial[col] = acc[i];
            }
          }
          finish_long_run(start, count, tile, dim, partials, done, tables + int64_t{sorted_keys[start]} * dim, lr);
        }
      }
      pos = end;  // past the run: its first tile updates it (short) or finishes it (long)
    }
    if (pos >= last) continue;
    int64_t long_start = -1;
    for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
      long_start = c0 + kPass <= dim ? stream_runs<true>(sorted_keys, sorted_slots, num_slots, tile, pos, last, grad,
                                                         dim, c0, tables, lr, partials)
                                     : stream_runs<false>(sorted_keys, sorted_slots, num_slots, tile, pos, last, grad,
                                                          dim, c0, tables, lr, partials);
    }
    if (long_start >= 0) {
      finish_long_run(long_start, run_end(sorted_keys, num_slots, long_start) - long_start, tile, dim, partials,
                      done, tables + int64_t{sorted_keys[long_start]} * dim, lr);
    }
  }
}

/// Where the update's buffers lie in its workspace, for a's shape.
struct UpdateBuffers {
  int64_t num_slots = 0;
  int key_bits = 0;
  BackwardLayout layout;
  RowKey *keys_in = nullptr, *keys_out = nullptr;
  Slot *slots_in = nullptr, *slots_out = nullptr;
  unsigned* done = nullptr;
};

UpdateBuffers update_buffers(const EmbeddingArguments& a, void* workspace) {
  UpdateBuffers u;
  u.num_slots = a.batch * a.num_tables;
  u.key_bits = row_key_bits(a.total_rows);
  u.layout = backward_layout(u.num_slots, a.dim, u.key_bits);
  u.keys_in = at_offset<RowKey>(workspace, u.layout.keys_in);
  u.keys_out = at_offset<RowKey>(workspace, u.layout.keys_out);
  u.slots_in = at_offset<Slot>(workspace, u.layout.slots_in);
  u.slots_out = at_offset<Slot>(workspace, u.layout.slots_out);
  u.done = at_offset<unsigned>(workspace, u.layout.done);
  return u;
}

}  // namespace

void EmbeddingBackwardSgd::run(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  sort(a, workspace, stream);
  update(a, workspace, stream);
}

void EmbeddingBackwardSgd::sort(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  embedding_detail::sort_pairs(a, workspace, stream, embedding_detail::SortAlgorithm::kAuto);
}

void embedding_detail::sort_pairs(const EmbeddingArguments& a, void* workspace, cudaStream_t stream,
                                  SortAlgorithm algorithm) {
  const bool per_table = algorithm == SortAlgorithm::kPerTable ||
                         (algorithm == SortAlgorithm::kAuto && per_table_sort(a.batch));
  if (per_table && a.batch > kTableSortMaxBatch) {
    throw std::invalid_argument("sort_pairs: the per-table sort takes at most " + std::to_string(kTableSortMaxBatch) +
                                " samples, got " + std::to_string(a.batch));
  }
  const UpdateBuffers u = update_buffers(a, workspace);
  if (!a.keys_in_forward) {  // else the forward's gather wrote them (and zeroed done)
    make_keys_kernel<<<blocks_for(u.num_slots), kThreads, 0, stream>>>(
        a.table_row_offsets, a.ids, a.num_tables, u.num_slots, u.keys_in, u.slots_in, u.done, tiles_for(u.num_slots));
    PERFLAB_CUDA_CHECK_LAUNCH("make_keys_kernel");
  }
  if (per_table) {
    const auto grid = static_cast<unsigned>(a.num_tables);
    if (a.batch <= 512) {
      sort_per_table_kernel<128, 4><<<grid, 128, 0, stream>>>(u.keys_in, a.num_tables, a.batch, u.key_bits,
                                                                u.keys_out, u.slots_out);
    } else {
      sort_per_table_kernel<256, 8><<<grid, 256, 0, stream>>>(u.keys_in, a.num_tables, a.batch, u.key_bits,
                                                                u.keys_out, u.slots_out);
    }
    PERFLAB_CUDA_CHECK_LAUNCH("sort_per_table_kernel");
    return;
  }
  size_t temp_bytes = u.layout.temp_bytes;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(at_offset<void>(workspace, u.layout.temp), temp_bytes,
                                                     u.keys_in, u.keys_out, u.slots_in, u.slots_out,
                                                     static_cast<int>(u.num_slots), 0, u.key_bits, stream));
}

void EmbeddingBackwardSgd::update(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  const UpdateBuffers u = update_buffers(a, workspace);
  auto* partials = at_offset<float>(workspace, u.layout.partials);
  const int64_t tile = tile_slots(u.num_slots);
  const int64_t tiles = tiles_for(u.num_slots);
  // The update finds each row's run in the sorted keys itself (no
  // run-length encoding, scan or memset), and its grid is the sorted
  // order's tiles in both variants: every tile holds a run's or a chunk's
  // start, whatever the data. The synchronising variant waits on the host
  // for the sort first: the host synchronisation a step without the
  // sync-free toggle makes.
  if (a.mode == EmbeddingUpdateMode::kSynchronising) counted_stream_synchronize(stream);
  constexpr int64_t kWarpsPerBlock = kThreads / 32;
  const auto blocks =
      static_cast<unsigned>(std::clamp<int64_t>((tiles + kWarpsPerBlock - 1) / kWarpsPerBlock, 1, kMaxBlocks));
  DenseSgd dense;
  unsigned dense_blocks = 0;
  if (a.dense != nullptr) {
    dense = {a.dense->count, a.dense->weights, a.dense->gradients, a.dense->gradients_bf16, a.dense->lr_device,
             a.dense->weights_bf16};
    constexpr int64_t kMaxDenseBlocks = 1024;  // grid-stride beyond
    // A thread per four values (sgd_range).
    dense_blocks = static_cast<unsigned>(std::clamp<int64_t>((dense.count / 4 + kThreads - 1) / kThreads, 1, kMaxDenseBlocks));
  }
  if (a.grad_bf16 != nullptr) {
    sgd_tiles_kernel<__nv_bfloat16><<<blocks + dense_blocks, kThreads, 0, stream>>>(
        u.keys_out, u.slots_out, u.num_slots, tile, tiles, a.grad_bf16, a.lr_device, a.dim, partials, u.done, a.tables,
        blocks, dense);
  } else {
    sgd_tiles_kernel<float><<<blocks + dense_blocks, kThreads, 0, stream>>>(
        u.keys_out, u.slots_out, u.num_slots, tile, tiles, a.grad, a.lr_device, a.dim, partials, u.done, a.tables,
        blocks, dense);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("sgd_tiles_kernel");
}

}  // namespace perflab::kernels::cuda
