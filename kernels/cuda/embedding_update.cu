// The embedding update (embedding.h's EmbeddingBackwardSgd): the radix sort
// of (row, slot) pairs (a block per table for small batches, CUB's device
// sort beyond: embedding_detail.h's SortAlgorithm), then a warp per tile of
// the sorted order sums
// each distinct row's gradients and applies SGD, optionally with the dense
// SGD in the same launch (its column layouts: embedding_update_columns.cuh).
// Checks, workspace layout and declared launches are
// embedding.cu's.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_detail.h"
#include "kernels/cuda/embedding_sort.cuh"
#include "kernels/cuda/embedding_update_columns.cuh"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/sgd_device.cuh"
#include "kernels/cuda/stored_types.cuh"
#include "kernels/cuda/warp_search.h"

namespace perflab::kernels::cuda {
namespace {

using embedding_detail::at_offset;
using embedding_update_columns::kColsPerLane;
using embedding_update_columns::QuadColumns;
using embedding_update_columns::StridedColumns;
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
  wait_for_prior_kernels();
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
  wait_for_prior_kernels();
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

constexpr unsigned kFullMask = 0xffffffffu;

/// warp_search.h's ballot for a warp: each lane answers for itself.
struct WarpBallot {
  template <typename Test>
  __device__ unsigned operator()(const Test& test) const {
    return __ballot_sync(kFullMask, test(static_cast<int>(threadIdx.x & 31u)));
  }
};

/// One past the last position of the run holding `at` (warp_search.h).
__device__ int64_t warp_run_end(const RowKey* __restrict__ keys, int64_t num_slots, int64_t at) {
  return warp_search::run_end(keys, num_slots, at, WarpBallot{});
}

/// The first position of the run holding `at` (warp_search.h).
__device__ int64_t warp_run_start(const RowKey* __restrict__ keys, int64_t at) {
  return warp_search::run_start(keys, at, WarpBallot{});
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


/// acc += the lane's columns of grad[slot] (Columns' layout) for the slots
/// at sorted positions [begin, end), in order (warp-uniform arguments).
/// Each lane loads one slot index of 32 (the next 32's while these are
/// summed) and the warp broadcasts it; a group of Columns::kSumGroup rows is
/// loaded before the first is added (past `end`: row 0, unused). No table
/// rows ride along, so the group is twice stream_runs'. TG: the gradient's
/// stored type (fp32, or bf16 widened exactly).
template <typename Columns, typename TG>
__device__ void add_slots(const Columns& cols, const Slot* __restrict__ sorted_slots, const TG* __restrict__ grad,
                          int64_t dim, int64_t begin, int64_t end, float (&acc)[kColsPerLane]) {
  constexpr int kGroup = Columns::kSumGroup;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  Slot mine = begin + lane < end ? sorted_slots[begin + lane] : 0;
  for (int64_t base = begin; base < end; base += 32) {
    const int count = static_cast<int>(end - base < 32 ? end - base : 32);
    // The next 32 slots, in flight while these are summed.
    const Slot next = base + 32 + lane < end ? sorted_slots[base + 32 + lane] : 0;
    for (int u0 = 0; u0 < count; u0 += kGroup) {
      typename Columns::Part part[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) cols.load_grad(part[j], grad + int64_t{__shfl_sync(kFullMask, mine, u0 + j)} * dim);
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        if (u0 + j < count) Columns::add(acc, part[j]);
      }
    }
    mine = next;
  }
}

/// One column pass of a tile's runs (Columns' layout and pass), streamed
/// from `pos` (the first sorted position of a run) through the sorted order:
/// every run that starts before `last` and has at most `tile` slots is
/// summed in slot order from zero and applied (w -= lr * sum, no fused
/// multiply-add: the CPU's rounding), reading past `last` to finish the
/// tile's last run. Positions come 32 at a time (a lane's key and slot,
/// the next 32's loaded while these are summed; where runs end, from a
/// ballot), then Columns::kGroup at a time with every load of the group
/// issued before the first add: a warp keeps its loads in flight instead of
/// waiting out a search and a read per run. A run longer than `tile` starts
/// here and reaches past `last` (the tile's last run); its first `tile`
/// slots are its first chunk, whose sum goes to that chunk's partial, and
/// its start is returned for the chunk count (-1: none).
template <typename Columns, typename TG>
__device__ int64_t stream_runs(const Columns& cols, const RowKey* __restrict__ sorted_keys,
                               const Slot* __restrict__ sorted_slots, int64_t num_slots, int64_t tile, int64_t pos,
                               int64_t last, const TG* __restrict__ grad, int64_t dim, float* __restrict__ tables,
                               float lr, float* __restrict__ partials) {
  constexpr int kGroup = Columns::kGroup;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  int64_t begin = pos;  // the current run's first position
  float acc[kColsPerLane] = {};
  // Position base + lane's key and slot (0 past the array), and the key
  // after the block (lane 31's successor).
  int64_t base = pos;
  RowKey key = base + lane < num_slots ? sorted_keys[base + lane] : 0;
  Slot slot = base + lane < num_slots ? sorted_slots[base + lane] : 0;
  RowKey after = base + 32 < num_slots ? sorted_keys[base + 32] : 0;
  for (; base < num_slots; base += 32) {
    if (begin == base && base >= last) return -1;  // the tile's last run ended on the block before
    const int n = static_cast<int>(num_slots - base < 32 ? num_slots - base : 32);
    // The next block's, in flight while this one is summed.
    const int64_t ahead = base + 32;
    const RowKey key_next = ahead + lane < num_slots ? sorted_keys[ahead + lane] : 0;
    const Slot slot_next = ahead + lane < num_slots ? sorted_slots[ahead + lane] : 0;
    const RowKey after_next = ahead + 32 < num_slots ? sorted_keys[ahead + 32] : 0;
    RowKey next = __shfl_down_sync(kFullMask, key, 1);
    if (lane == 31) next = after;
    // Bit u: position base + u is the last of its run.
    const unsigned ends = __ballot_sync(kFullMask, lane < n && (base + lane + 1 >= num_slots || key != next));
    for (int u0 = 0; u0 < n; u0 += kGroup) {
      // Every load of the group is unconditional, into its own registers,
      // and nothing reads one before all are issued: a predicated load with
      // a default made the compiler load through one register and wait on
      // each (sm_90 SASS). A position past n reads row 0 (lanes past n hold
      // slot and key 0). The table's values are used where a run ends.
      typename Columns::Part part[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        const int u = u0 + j;  // at most 31
        cols.load(part[j], grad + int64_t{__shfl_sync(kFullMask, slot, u)} * dim,
                  tables + int64_t{__shfl_sync(kFullMask, key, u)} * dim);
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
        Columns::add(acc, part[j]);
        if (((ends >> u) & 1u) != 0) {
          cols.apply(tables + int64_t{__shfl_sync(kFullMask, key, u)} * dim, part[j], lr, acc);
          begin = p + 1;
        } else if (p + 1 - begin == tile) {  // a long run: its first chunk is summed
          cols.store(chunk_partial(partials, begin, 0, tile, dim), acc);
          return begin;
        }
      }
    }
    key = key_next;
    slot = slot_next;
    after = after_next;
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
/// bounds by search (warp_run_start, warp_run_end): it sums the run's chunk that
/// starts in it, if the run is long, and streams from the run's end.
/// Blocks from tile_blocks on run `dense` instead (when it has a count).
/// kQuads: the runs and chunks in QuadColumns' layout, else
/// StridedColumns'; finish_long_run's sum of the partials is the same in
/// both. Two blocks a SM (no spills at either layout's ptxas count): a
/// group's loads need the registers; capped at 80 (three blocks) the scalar
/// group spilled.
template <typename TG, bool kQuads>
__global__ void __launch_bounds__(kThreads, 2)
    sgd_tiles_kernel(const RowKey* __restrict__ sorted_keys, const Slot* __restrict__ sorted_slots, int64_t num_slots,
                     int64_t tile, int64_t num_tiles, const TG* __restrict__ grad, const float* __restrict__ lr_device,
                     int64_t dim, float* __restrict__ partials, unsigned* __restrict__ done,
                     float* __restrict__ tables, unsigned tile_blocks, DenseSgd dense) {
  wait_for_prior_kernels();
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
      // Its end: among the first 32 positions (lane i: position first + i;
      // the first lane past the run, or past the array, marks it) in one
      // read, which is where a short run (the usual case) ends, else by the
      // warp's search. Whether it is longer than a tile: the run holds every
      // position from its start to end - 1, first - 1 among them, so count =
      // end - start > tile exactly when position end - tile - 1 holds its
      // key. Only a long run, whose chunk this tile may sum, is searched for
      // its start.
      const RowKey key = sorted_keys[first];
      const int64_t p = first + lane;
      const RowKey here = p < num_slots ? sorted_keys[p] : 0;
      // With them, position first - tile + lane: for a run ending at first
      // + e among these 32, position end - tile - 1 is lane e - 1's, so the
      // usual case's long-run test takes no read of its own.
      const int64_t behind = first - tile + lane;
      const RowKey back = behind >= 0 ? sorted_keys[behind] : 0;
      const unsigned past = __ballot_sync(kFullMask, p >= num_slots || here != key);
      int64_t end = 0;
      bool long_run = false;
      if (past != 0) {
        const int e = __ffs(static_cast<int>(past)) - 1;  // at least 1: position first holds the key
        end = first + e;                                  // e < 32 <= tile: not a tile past first
        const RowKey at_tile_before_end = __shfl_sync(kFullMask, back, e - 1);
        long_run = end - tile - 1 >= 0 && at_tile_before_end == key;
      } else {
        end = warp_run_end(sorted_keys, num_slots, first + 31);
        long_run = end - first >= tile || (end - tile - 1 >= 0 && sorted_keys[end - tile - 1] == key);
      }
      if (long_run) {
        const int64_t start = warp_run_start(sorted_keys, first);
        const int64_t count = end - start;
        // The run's chunk that starts in this tile, if one does (a later
        // chunk: its first starts in the run's first tile).
        const int64_t k = (first - start + tile - 1) / tile;
        const int64_t from = start + k * tile;
        if (from < last && from < end) {
          const int64_t to = from + tile < end ? from + tile : end;
          float* __restrict__ partial = chunk_partial(partials, start, k, tile, dim);
          const auto sum_chunk = [&](const auto& cols) {
            float acc[kColsPerLane] = {};
            add_slots(cols, sorted_slots, grad, dim, from, to, acc);
            cols.store(partial, acc);
          };
          for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
            if constexpr (kQuads) {
              sum_chunk(QuadColumns<TG>(c0, dim));
            } else {
              sum_chunk(StridedColumns<TG, false>(c0, dim));
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
      if constexpr (kQuads) {
        long_start = stream_runs(QuadColumns<TG>(c0, dim), sorted_keys, sorted_slots, num_slots, tile, pos, last,
                                 grad, dim, tables, lr, partials);
      } else if (c0 + kPass <= dim) {
        long_start = stream_runs(StridedColumns<TG, true>(c0, dim), sorted_keys, sorted_slots, num_slots, tile, pos,
                                 last, grad, dim, tables, lr, partials);
      } else {
        long_start = stream_runs(StridedColumns<TG, false>(c0, dim), sorted_keys, sorted_slots, num_slots, tile, pos,
                                 last, grad, dim, tables, lr, partials);
      }
    }
    if (long_start >= 0) {
      // Its first chunk, `tile` slots from long_start, is in the run.
      finish_long_run(long_start, warp_run_end(sorted_keys, num_slots, long_start + tile - 1) - long_start, tile,
                      dim, partials, done, tables + int64_t{sorted_keys[long_start]} * dim, lr);
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
    launch_kernel(make_keys_kernel, blocks_for(u.num_slots), kThreads, 0, stream,
                  a.table_row_offsets, a.ids, a.num_tables, u.num_slots, u.keys_in, u.slots_in,
                  u.done, tiles_for(u.num_slots));
    PERFLAB_CUDA_CHECK_LAUNCH("make_keys_kernel");
  }
  if (per_table) {
    const auto grid = static_cast<unsigned>(a.num_tables);
    if (a.batch <= 512) {
      launch_kernel(sort_per_table_kernel<128, 4>, grid, 128, 0, stream, u.keys_in, a.num_tables,
                    a.batch, u.key_bits, u.keys_out, u.slots_out);
    } else {
      launch_kernel(sort_per_table_kernel<256, 8>, grid, 256, 0, stream, u.keys_in, a.num_tables,
                    a.batch, u.key_bits, u.keys_out, u.slots_out);
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
  embedding_detail::update_rows(a, workspace, stream, embedding_detail::UpdateColumns::kAuto);
}

namespace {

/// Why the quad layout cannot run (embedding_detail::UpdateColumns), or
/// nullptr when it can.
const char* quads_refusal(const EmbeddingArguments& a, const void* workspace, const UpdateBuffers& u) {
  const auto aligned = [](const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
  const bool bf16 = a.grad_bf16 != nullptr;
  const void* grad = bf16 ? static_cast<const void*>(a.grad_bf16) : static_cast<const void*>(a.grad);
  if (a.dim % 4 != 0) return "dim is not a multiple of 4";
  if (!aligned(a.tables, 16)) return "the tables are not 16-byte aligned";
  if (!aligned(grad, bf16 ? 8 : 16)) return bf16 ? "the bf16 gradient is not 8-byte aligned" : "the gradient is not 16-byte aligned";
  if (!aligned(static_cast<const char*>(workspace) + u.layout.partials, 16)) return "the workspace's partials are not 16-byte aligned";
  return nullptr;
}

}  // namespace

bool embedding_detail::update_quads_possible(const EmbeddingArguments& a, const void* workspace) {
  return quads_refusal(a, workspace, update_buffers(a, const_cast<void*>(workspace))) == nullptr;
}

void embedding_detail::update_rows(const EmbeddingArguments& a, void* workspace, cudaStream_t stream,
                                   UpdateColumns columns) {
  const UpdateBuffers u = update_buffers(a, workspace);
  const char* refusal = quads_refusal(a, workspace, u);
  if (columns == UpdateColumns::kQuads && refusal != nullptr) {
    throw std::invalid_argument(std::string("update_rows: no quad layout: ") + refusal + " (dim " +
                                std::to_string(a.dim) + ")");
  }
  const bool quads = columns == UpdateColumns::kQuads || (columns == UpdateColumns::kAuto && refusal == nullptr);
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
  const auto launch = [&](auto kernel, const auto* grad) {
    launch_kernel(kernel, blocks + dense_blocks, kThreads, 0, stream, u.keys_out, u.slots_out,
                  u.num_slots, tile, tiles, grad, a.lr_device, a.dim, partials, u.done, a.tables,
                  blocks, dense);
  };
  if (a.grad_bf16 != nullptr) {
    if (quads) {
      launch(sgd_tiles_kernel<__nv_bfloat16, true>, a.grad_bf16);
    } else {
      launch(sgd_tiles_kernel<__nv_bfloat16, false>, a.grad_bf16);
    }
  } else if (quads) {
    launch(sgd_tiles_kernel<float, true>, a.grad);
  } else {
    launch(sgd_tiles_kernel<float, false>, a.grad);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("sgd_tiles_kernel");
}

}  // namespace perflab::kernels::cuda
