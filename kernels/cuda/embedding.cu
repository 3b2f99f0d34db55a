// Multi-table embedding gather and deduplicated sparse SGD on the GPU.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <string>
#include <type_traits>

#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_sort.cuh"
#include "kernels/cuda/sgd_device.cuh"
#include "kernels/cuda/stored_types.cuh"
#include "kernels/cuda/host_sync.h"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest
constexpr size_t kAlign = 256;
constexpr int64_t kMaxRowsForKeys = int64_t{1} << 32;  // rows are uint32 sort keys

using RowKey = uint32_t;  // global row id
using Slot = int32_t;     // b * T + t

unsigned blocks_for(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

/// Key bits the radix sort looks at: enough for total_rows - 1 (at least 1).
int row_key_bits(int64_t total_rows) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) < total_rows) ++bits;
  return bits;
}

Status check_common(const EmbeddingArguments& a) {
  if (a.batch < 1)
    return Status::invalid("embedding: batch must be at least 1, got " + std::to_string(a.batch));
  if (a.num_tables < 1) {
    return Status::invalid("embedding: num_tables must be at least 1, got " +
                           std::to_string(a.num_tables));
  }
  if (a.dim < 1)
    return Status::invalid("embedding: dim must be at least 1, got " + std::to_string(a.dim));
  if (a.total_rows < a.num_tables) {
    return Status::invalid("embedding: total_rows (" + std::to_string(a.total_rows) +
                           ") must be at least one row per table (" + std::to_string(a.num_tables) +
                           ")");
  }
  if (a.batch > std::numeric_limits<int64_t>::max() / a.num_tables / a.dim ||
      a.total_rows > std::numeric_limits<int64_t>::max() / a.dim) {
    return Status::invalid("embedding: element count overflows int64");
  }
  if (a.tables == nullptr) return Status::invalid("embedding: tables is null");
  if (a.table_row_offsets == nullptr)
    return Status::invalid("embedding: table_row_offsets is null");
  if (a.ids == nullptr) return Status::invalid("embedding: ids is null");
  return Status::success();
}

// ---- forward ---------------------------------------------------------------

/// Threads along a row in the gather kernels: a power of two covering the
/// row's width in loads (dim / 4 float4s, or dim floats), at most a warp;
/// the block's other dimension takes that many rows at once.
int gather_lanes(int64_t width) {
  int lanes = 1;
  while (lanes < 32 && lanes < width) lanes *= 2;
  return lanes;
}

/// Two-dimensional blocks of kThreads threads: x along a row (gather_lanes),
/// y over rows; a grid-stride loop over the rows beyond the grid.
struct GatherLaunch {
  dim3 block;
  unsigned grid = 1;
};

GatherLaunch gather_launch(int64_t slots, int64_t width) {
  const int lanes = gather_lanes(width);
  const int rows_per_block = kThreads / lanes;
  GatherLaunch l;
  l.block = dim3(static_cast<unsigned>(lanes), static_cast<unsigned>(rows_per_block));
  l.grid = static_cast<unsigned>(std::clamp<int64_t>((slots + rows_per_block - 1) / rows_per_block, 1, kMaxBlocks));
  return l;
}

/// The update's sort input, written by the gather when keys_in_forward
/// (make_keys_kernel's work): keys null when not.
using SortInput = EmbeddingSortInput;
static_assert(std::is_same_v<RowKey, uint32_t> && std::is_same_v<Slot, int32_t>,
              "EmbeddingSortInput's keys and slots are the sort's RowKey and Slot");

/// out[slot, :] = tables[row(slot), :], counted in units of V (float or
/// float4; `width` = dim / (floats per V)). One row per threadIdx.y: its
/// table and row are found once per row (one 64-bit modulo), not once per
/// element, and threadIdx.x walks the row's columns.
template <typename V>
__global__ void gather_kernel(const V* __restrict__ tables, const int64_t* __restrict__ row_offsets,
                              const int32_t* __restrict__ ids, int num_tables, int64_t width,
                              int64_t num_slots, V* __restrict__ out, SortInput sort) {
  for (int64_t slot = blockIdx.x * int64_t{blockDim.y} + threadIdx.y; slot < num_slots;
       slot += int64_t{gridDim.x} * blockDim.y) {
    const int64_t row = row_offsets[slot % num_tables] + ids[slot];
    if (sort.keys != nullptr && threadIdx.x == 0) write_sort_input(sort, slot, row);
    const V* __restrict__ src = tables + row * width;
    V* __restrict__ dst = out + slot * width;
    for (int64_t col = threadIdx.x; col < width; col += blockDim.x) dst[col] = src[col];
  }
}

/// As gather_kernel, rounding to bf16 (nearest even).
__global__ void gather_bf16_kernel(const float* __restrict__ tables,
                                   const int64_t* __restrict__ row_offsets,
                                   const int32_t* __restrict__ ids, int num_tables, int64_t dim,
                                   int64_t num_slots, __nv_bfloat16* __restrict__ out, SortInput sort) {
  for (int64_t slot = blockIdx.x * int64_t{blockDim.y} + threadIdx.y; slot < num_slots;
       slot += int64_t{gridDim.x} * blockDim.y) {
    const int64_t row = row_offsets[slot % num_tables] + ids[slot];
    if (sort.keys != nullptr && threadIdx.x == 0) write_sort_input(sort, slot, row);
    const float* __restrict__ src = tables + row * dim;
    __nv_bfloat16* __restrict__ dst = out + slot * dim;
    for (int64_t col = threadIdx.x; col < dim; col += blockDim.x) dst[col] = __float2bfloat16_rn(src[col]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- backward --------------------------------------------------------------

/// keys[slot] = global row of ids[slot]; slots[slot] = slot. Also zeroes
/// the update's done counters (`tiles` of them), which run before it on the
/// same stream: no memset launch.
__global__ void make_keys_kernel(const int64_t* __restrict__ row_offsets,
                                 const int32_t* __restrict__ ids, int num_tables, int64_t num_slots,
                                 RowKey* __restrict__ keys, Slot* __restrict__ slots,
                                 unsigned* __restrict__ done, int64_t tiles) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < num_slots;
       i += int64_t{gridDim.x} * blockDim.x) {
    write_sort_input(SortInput{keys, slots, done, tiles}, i, row_offsets[i % num_tables] + ids[i]);
  }
}

/// Columns each lane accumulates per pass over a run: a warp covers
/// 32 * kColsPerLane columns at once (DLRM's 128 in one pass).
constexpr int kColsPerLane = 4;
constexpr unsigned kFullMask = 0xffffffffu;

/// Slots per tile of the sorted order: enough tiles to give every SM
/// several warps at small batches, few enough that combining a hot row's
/// chunks stays short at large ones (B*T = 1.7M: 256, 6,656 tiles).
int64_t tile_slots(int64_t num_slots) {
  constexpr int64_t kTargetTiles = 4096;
  return std::clamp<int64_t>((num_slots + kTargetTiles - 1) / kTargetTiles, 32, 256);
}

int64_t tiles_for(int64_t num_slots) {
  const int64_t tile = tile_slots(num_slots);
  return (num_slots + tile - 1) / tile;
}

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

/// The sparse SGD of every distinct row, one warp per tile of `tile` sorted
/// positions (so the grid follows B*T, never B*T*dim, and no warp waits on
/// a hot row's thousands of slots). A row's run of slots is found in the
/// sorted keys (run_start, run_end):
///  - a run of at most `tile` slots is summed in slot order and applied by
///    the warp of the tile it starts in: the CPU's order, so such rows
///    match the CPU bit for bit;
///  - a longer run is cut into chunks of `tile` slots from its start; the
///    warp of the tile a chunk starts in sums it into `partials` (slot
///    2q + 1 for a run's first chunk, 2q for a later one: a tile holds at
///    most one of each), and the warp that finishes the run's last chunk
///    (counted in done[start / tile], zeroed with the sort keys) adds the
///    chunks in chunk order and applies the row. The order is fixed, so the
///    result is the same on every run; against the CPU's sequential sum it
///    differs by rounding within the bound the tests state.
/// Blocks from tile_blocks on run `dense` instead (when it has a count).
template <typename TG>
__global__ void sgd_tiles_kernel(const RowKey* __restrict__ sorted_keys, const Slot* __restrict__ sorted_slots,
                                 int64_t num_slots, int64_t tile, int64_t num_tiles,
                                 const TG* __restrict__ grad, const float* __restrict__ lr_device, int64_t dim,
                                 float* __restrict__ partials, unsigned* __restrict__ done,
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
    int64_t next = run_start(sorted_keys, first);
    while (next < last) {  // every run that starts in or reaches into this tile
      const int64_t start = next;
      next = run_end(sorted_keys, num_slots, start);
      const int64_t count = next - start;
      float* __restrict__ w = tables + int64_t{sorted_keys[start]} * dim;
      if (count <= tile) {
        if (start < first) continue;  // the tile it starts in updates it
        for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
          float acc[kColsPerLane] = {};
          add_slots(sorted_slots, grad, dim, c0, start, start + count, acc);
          apply_sgd(w, dim, c0, lr, acc);
        }
        continue;
      }
      const int64_t chunks = (count + tile - 1) / tile;
      const int64_t j = start >= first ? 0 : (first - start + tile - 1) / tile;
      const int64_t from = start + j * tile;
      if (j >= chunks || from >= last) continue;
      const int64_t to = from + tile < start + count ? from + tile : start + count;
      float* __restrict__ partial = partials + (2 * q + (j == 0 ? 1 : 0)) * dim;
      for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
        float acc[kColsPerLane] = {};
        add_slots(sorted_slots, grad, dim, c0, from, to, acc);
#pragma unroll
        for (int i = 0; i < kColsPerLane; ++i) {
          const int64_t col = c0 + lane + 32 * i;
          if (col < dim) partial[col] = acc[i];
        }
      }
      __threadfence();  // this chunk's partial is visible before it is counted
      __syncwarp();
      unsigned finished = 0;
      if (lane == 0) finished = atomicAdd(done + start / tile, 1u) + 1u;
      finished = __shfl_sync(kFullMask, finished, 0);
      if (finished != static_cast<unsigned>(chunks)) continue;
      __syncwarp();  // every lane past lane 0's atomic before any reads the partials
      __threadfence();
      for (int64_t c0 = 0; c0 < dim; c0 += kPass) {
        float acc[kColsPerLane] = {};
        for (int64_t k = 0; k < chunks; ++k) {
          const int64_t qk = (start + k * tile) / tile;
          const float* part = partials + (2 * qk + (k == 0 ? 1 : 0)) * dim;
#pragma unroll
          for (int i = 0; i < kColsPerLane; ++i) {
            const int64_t col = c0 + lane + 32 * i;
            if (col < dim) acc[i] = __fadd_rn(acc[i], __ldcg(part + col));  // L2: written by other SMs
          }
        }
        apply_sgd(w, dim, c0, lr, acc);
      }
    }
  }
}

/// Where each buffer sits in the backward's workspace (byte offsets).
struct BackwardLayout {
  size_t keys_in = 0, keys_out = 0, slots_in = 0, slots_out = 0;
  size_t done = 0, partials = 0;
  size_t temp = 0, temp_bytes = 0, total = 0;
};

BackwardLayout compute_backward_layout(int64_t num_slots, int64_t dim, int key_bits) {
  const int n = static_cast<int>(num_slots);
  size_t sort_bytes = 0;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, sort_bytes, static_cast<const RowKey*>(nullptr), static_cast<RowKey*>(nullptr),
      static_cast<const Slot*>(nullptr), static_cast<Slot*>(nullptr), n, 0, key_bits));
  BackwardLayout l;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t offset = at;
    at += align_up(bytes);
    return offset;
  };
  const size_t count = static_cast<size_t>(num_slots);
  const size_t tiles = static_cast<size_t>(tiles_for(num_slots));
  l.keys_in = take(count * sizeof(RowKey));
  l.keys_out = take(count * sizeof(RowKey));
  l.slots_in = take(count * sizeof(Slot));
  l.slots_out = take(count * sizeof(Slot));
  l.done = take(tiles * sizeof(unsigned));
  l.partials = take(2 * tiles * static_cast<size_t>(dim) * sizeof(float));
  l.temp_bytes = std::max(sort_bytes, size_t{1});
  l.temp = take(l.temp_bytes);
  l.total = at;
  return l;
}

/// compute_backward_layout, remembered for the last problem and device of
/// this thread: the forward (keys_in_forward) and the update ask for the
/// same layout every step, and CUB's size query is host work per call.
BackwardLayout backward_layout(int64_t num_slots, int64_t dim, int key_bits) {
  struct Memo {
    int64_t num_slots = -1, dim = -1;
    int key_bits = -1, device = -1;
    BackwardLayout layout;
  };
  thread_local Memo memo;
  int device = 0;
  PERFLAB_CUDA_CHECK(cudaGetDevice(&device));
  if (memo.num_slots != num_slots || memo.dim != dim || memo.key_bits != key_bits || memo.device != device) {
    memo = {num_slots, dim, key_bits, device, compute_backward_layout(num_slots, dim, key_bits)};
  }
  return memo.layout;
}

template <typename T>
T* at_offset(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

EmbeddingSortInput embedding_sort_input(const EmbeddingArguments& a, void* workspace) {
  const int64_t slots = a.batch * a.num_tables;
  const BackwardLayout l = backward_layout(slots, a.dim, row_key_bits(a.total_rows));
  return {at_offset<RowKey>(workspace, l.keys_in), at_offset<Slot>(workspace, l.slots_in),
          at_offset<unsigned>(workspace, l.done), tiles_for(slots)};
}

Status EmbeddingForward::can_implement(const EmbeddingArguments& args) {
  if (Status s = check_common(args); !s) return s;
  if (args.out == nullptr) return Status::invalid("embedding forward: out is null");
  if (args.out_type != EmbeddingOutputType::kFloat32 &&
      args.out_type != EmbeddingOutputType::kBFloat16) {
    return Status::invalid("embedding forward: unknown output type");
  }
  if (args.keys_in_forward && (args.batch * args.num_tables > std::numeric_limits<int32_t>::max() ||
                               args.total_rows > kMaxRowsForKeys)) {
    return Status::invalid("embedding forward: keys_in_forward needs batch * num_tables below 2^31 and total_rows "
                           "at most 2^32 (the update's sort keys)");
  }
  return Status::success();
}

size_t EmbeddingForward::workspace_bytes(const EmbeddingArguments& args) {
  return args.keys_in_forward ? EmbeddingBackwardSgd::workspace_bytes(args) : 0;
}

void EmbeddingForward::run(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  const int64_t slots = a.batch * a.num_tables;
  SortInput sort;
  if (a.keys_in_forward) {
    if (workspace == nullptr) throw Error("embedding forward: keys_in_forward needs the update's workspace");
    sort = embedding_sort_input(a, workspace);
  }
  if (a.out_type == EmbeddingOutputType::kBFloat16) {
    const GatherLaunch l = gather_launch(slots, a.dim);
    gather_bf16_kernel<<<l.grid, l.block, 0, stream>>>(a.tables, a.table_row_offsets, a.ids, a.num_tables,
                                                       a.dim, slots, static_cast<__nv_bfloat16*>(a.out), sort);
    PERFLAB_CUDA_CHECK_LAUNCH("gather_bf16_kernel");
  } else if (a.dim % 4 == 0 && aligned16(a.tables) && aligned16(a.out)) {
    const int64_t width = a.dim / 4;
    const GatherLaunch l = gather_launch(slots, width);
    gather_kernel<float4><<<l.grid, l.block, 0, stream>>>(reinterpret_cast<const float4*>(a.tables),
                                                          a.table_row_offsets, a.ids, a.num_tables, width,
                                                          slots, static_cast<float4*>(a.out), sort);
    PERFLAB_CUDA_CHECK_LAUNCH("gather_kernel<float4>");
  } else {
    const GatherLaunch l = gather_launch(slots, a.dim);
    gather_kernel<float><<<l.grid, l.block, 0, stream>>>(a.tables, a.table_row_offsets, a.ids, a.num_tables,
                                                         a.dim, slots, static_cast<float*>(a.out), sort);
    PERFLAB_CUDA_CHECK_LAUNCH("gather_kernel<float>");
  }
}

LaunchList EmbeddingForward::launches(const EmbeddingArguments& a) {
  const double slots = static_cast<double>(a.batch * a.num_tables);
  const double values = slots * static_cast<double>(a.dim);
  const bool bf16 = a.out_type == EmbeddingOutputType::kBFloat16;
  const double keys = a.keys_in_forward ? slots * (sizeof(RowKey) + sizeof(Slot)) : 0;
  return {{bf16 ? "gather_bf16_kernel" : "gather_kernel",
           a.keys_in_forward ? "embedding lookups (all tables) and the update's sort keys" : "embedding lookups (all tables)",
           "", {slots * sizeof(int32_t) + values * sizeof(float) + values * (bf16 ? 2 : 4) + keys, 0, ""}}};
}

LaunchList EmbeddingBackwardSgd::launches(const EmbeddingArguments& a) {
  const double n = static_cast<double>(a.batch * a.num_tables);
  const double pair = sizeof(RowKey) + sizeof(Slot);
  LaunchList list;
  if (!a.keys_in_forward) {
    list.push_back({"make_keys_kernel", "sort keys (global rows) and slots", "", {n * sizeof(int32_t) + n * pair, 0, ""}});
  }
  list.push_back({"DeviceRadixSort", "CUB radix sort of (row, slot) pairs", "", {2 * n * pair, 0, ""}});
  const double grad_bytes = a.grad_bf16 != nullptr ? 2.0 : sizeof(float);
  double bytes = n * static_cast<double>(a.dim) * grad_bytes + n * pair, flops = n * static_cast<double>(a.dim) * 2;
  if (a.dense != nullptr) {  // SgdUpdate's work, in the same launch
    const LaunchList dense = SgdUpdate::launches(*a.dense, a.dense->weights_bf16 != nullptr);
    bytes += dense.front().cost.bytes;
    flops += dense.front().cost.flops;
  }
  list.push_back({"sgd_tiles_kernel",
                  a.dense != nullptr ? "sparse SGD of every distinct row (a warp per tile of sorted slots) and the dense SGD"
                                     : "sparse SGD of every distinct row (a warp per tile of sorted slots)",
                  "", {bytes, flops, "fp32"}});
  return list;
}

Status EmbeddingBackwardSgd::can_implement(const EmbeddingArguments& args) {
  if (Status s = check_common(args); !s) return s;
  if (args.batch * args.num_tables > std::numeric_limits<int32_t>::max()) {
    return Status::invalid("embedding backward: batch * num_tables (" +
                           std::to_string(args.batch * args.num_tables) + ") must be below 2^31");
  }
  if (args.total_rows > kMaxRowsForKeys) {
    return Status::invalid("embedding backward: total_rows (" + std::to_string(args.total_rows) +
                           ") must be at most 2^32 (rows are 32-bit sort keys)");
  }
  if ((args.grad == nullptr) == (args.grad_bf16 == nullptr)) {
    return Status::invalid(args.grad == nullptr ? "embedding backward: grad is null"
                                                : "embedding backward: grad and grad_bf16 are both set");
  }
  if (args.lr_device == nullptr) return Status::invalid("embedding backward: lr_device is null");
  if (args.dense != nullptr) {
    if (const Status s = SgdUpdate::can_implement(*args.dense); !s) {
      return Status::invalid("embedding backward: its dense SGD: " + s.reason());
    }
  }
  if (args.mode != EmbeddingUpdateMode::kSyncFree &&
      args.mode != EmbeddingUpdateMode::kSynchronising) {
    return Status::invalid("embedding backward: unknown update mode");
  }
  return Status::success();
}

size_t EmbeddingBackwardSgd::workspace_bytes(const EmbeddingArguments& args) {
  return backward_layout(args.batch * args.num_tables, args.dim, row_key_bits(args.total_rows)).total;
}

void EmbeddingBackwardSgd::run(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  sort(a, workspace, stream);
  update(a, workspace, stream);
}

namespace {

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

void EmbeddingBackwardSgd::sort(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  const UpdateBuffers u = update_buffers(a, workspace);
  if (!a.keys_in_forward) {  // else the forward's gather wrote them (and zeroed done)
    make_keys_kernel<<<blocks_for(u.num_slots), kThreads, 0, stream>>>(
        a.table_row_offsets, a.ids, a.num_tables, u.num_slots, u.keys_in, u.slots_in, u.done, tiles_for(u.num_slots));
    PERFLAB_CUDA_CHECK_LAUNCH("make_keys_kernel");
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
