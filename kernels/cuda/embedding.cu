// Multi-table embedding gather and deduplicated sparse SGD on the GPU.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <limits>
#include <string>

#include "kernels/cuda/check.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/host_sync.h"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest
constexpr size_t kAlign = 256;
constexpr int kUnroll = 8;                             // gradient rows loaded at once by the update
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

/// out[slot, :] = tables[row(slot), :], counted in units of V (float or
/// float4; `width` = dim / (floats per V)). One row per threadIdx.y: its
/// table and row are found once per row (one 64-bit modulo), not once per
/// element, and threadIdx.x walks the row's columns.
template <typename V>
__global__ void gather_kernel(const V* __restrict__ tables, const int64_t* __restrict__ row_offsets,
                              const int32_t* __restrict__ ids, int num_tables, int64_t width,
                              int64_t num_slots, V* __restrict__ out) {
  for (int64_t slot = blockIdx.x * int64_t{blockDim.y} + threadIdx.y; slot < num_slots;
       slot += int64_t{gridDim.x} * blockDim.y) {
    const int64_t row = row_offsets[slot % num_tables] + ids[slot];
    const V* __restrict__ src = tables + row * width;
    V* __restrict__ dst = out + slot * width;
    for (int64_t col = threadIdx.x; col < width; col += blockDim.x) dst[col] = src[col];
  }
}

/// As gather_kernel, rounding to bf16 (nearest even).
__global__ void gather_bf16_kernel(const float* __restrict__ tables,
                                   const int64_t* __restrict__ row_offsets,
                                   const int32_t* __restrict__ ids, int num_tables, int64_t dim,
                                   int64_t num_slots, __nv_bfloat16* __restrict__ out) {
  for (int64_t slot = blockIdx.x * int64_t{blockDim.y} + threadIdx.y; slot < num_slots;
       slot += int64_t{gridDim.x} * blockDim.y) {
    const int64_t row = row_offsets[slot % num_tables] + ids[slot];
    const float* __restrict__ src = tables + row * dim;
    __nv_bfloat16* __restrict__ dst = out + slot * dim;
    for (int64_t col = threadIdx.x; col < dim; col += blockDim.x) dst[col] = __float2bfloat16_rn(src[col]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- backward --------------------------------------------------------------

/// keys[slot] = global row of ids[slot]; slots[slot] = slot.
__global__ void make_keys_kernel(const int64_t* __restrict__ row_offsets,
                                 const int32_t* __restrict__ ids, int num_tables, int64_t num_slots,
                                 RowKey* __restrict__ keys, Slot* __restrict__ slots) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < num_slots;
       i += int64_t{gridDim.x} * blockDim.x) {
    keys[i] = static_cast<RowKey>(row_offsets[i % num_tables] + ids[i]);
    slots[i] = static_cast<Slot>(i);
  }
}

/// For each distinct row r < *num_runs and column d: sum the gradients of
/// its slots in slot order (the sort is stable), then
/// row -= lr * sum, rounded as the CPU rounds (no fused multiply-add).
/// Launched over at least num_runs * dim threads; the rest do nothing.
__global__ void sgd_rows_kernel(const RowKey* __restrict__ unique_rows,
                                const int32_t* __restrict__ run_offsets,
                                const int32_t* __restrict__ run_counts,
                                const Slot* __restrict__ sorted_slots,
                                const int32_t* __restrict__ num_runs,
                                const float* __restrict__ grad, const float* __restrict__ lr_device,
                                int64_t dim, float* __restrict__ tables) {
  const int64_t total = int64_t{*num_runs} * dim;
  const float lr = *lr_device;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t run = i / dim;
    const int64_t col = i - run * dim;
    const int32_t begin = run_offsets[run];
    const int32_t end = begin + run_counts[run];
    float sum = 0.0f;
    int32_t k = begin;
    // Eight loads in flight per step (a hot row may have thousands of
    // slots); the additions stay in slot order.
    for (; end - k >= kUnroll; k += kUnroll) {
      float g[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) g[u] = grad[int64_t{sorted_slots[k + u]} * dim + col];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) sum = __fadd_rn(sum, g[u]);
    }
    for (; k < end; ++k) sum = __fadd_rn(sum, grad[int64_t{sorted_slots[k]} * dim + col]);
    float* w = tables + int64_t{unique_rows[run]} * dim + col;
    *w = __fsub_rn(*w, __fmul_rn(lr, sum));
  }
}

/// Where each buffer sits in the backward's workspace (byte offsets).
struct BackwardLayout {
  size_t keys_in = 0, keys_out = 0, slots_in = 0, slots_out = 0;
  size_t unique_rows = 0, run_counts = 0, run_offsets = 0, num_runs = 0;
  size_t temp = 0, temp_bytes = 0, total = 0;
};

BackwardLayout backward_layout(int64_t num_slots, int key_bits) {
  const int n = static_cast<int>(num_slots);
  size_t sort_bytes = 0, encode_bytes = 0, scan_bytes = 0;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, sort_bytes, static_cast<const RowKey*>(nullptr), static_cast<RowKey*>(nullptr),
      static_cast<const Slot*>(nullptr), static_cast<Slot*>(nullptr), n, 0, key_bits));
  PERFLAB_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(
      nullptr, encode_bytes, static_cast<const RowKey*>(nullptr), static_cast<RowKey*>(nullptr),
      static_cast<int32_t*>(nullptr), static_cast<int32_t*>(nullptr), n));
  PERFLAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes,
                                                   static_cast<const int32_t*>(nullptr),
                                                   static_cast<int32_t*>(nullptr), n));
  BackwardLayout l;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t offset = at;
    at += align_up(bytes);
    return offset;
  };
  const size_t count = static_cast<size_t>(num_slots);
  l.keys_in = take(count * sizeof(RowKey));
  l.keys_out = take(count * sizeof(RowKey));
  l.slots_in = take(count * sizeof(Slot));
  l.slots_out = take(count * sizeof(Slot));
  l.unique_rows = take(count * sizeof(RowKey));
  l.run_counts = take(count * sizeof(int32_t));
  l.run_offsets = take(count * sizeof(int32_t));
  l.num_runs = take(sizeof(int32_t));
  l.temp_bytes = std::max({sort_bytes, encode_bytes, scan_bytes, size_t{1}});
  l.temp = take(l.temp_bytes);
  l.total = at;
  return l;
}

template <typename T>
T* at_offset(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

Status EmbeddingForward::can_implement(const EmbeddingArguments& args) {
  if (Status s = check_common(args); !s) return s;
  if (args.out == nullptr) return Status::invalid("embedding forward: out is null");
  if (args.out_type != EmbeddingOutputType::kFloat32 &&
      args.out_type != EmbeddingOutputType::kBFloat16) {
    return Status::invalid("embedding forward: unknown output type");
  }
  return Status::success();
}

size_t EmbeddingForward::workspace_bytes(const EmbeddingArguments&) { return 0; }

void EmbeddingForward::run(const EmbeddingArguments& a, void*, cudaStream_t stream) {
  const int64_t slots = a.batch * a.num_tables;
  if (a.out_type == EmbeddingOutputType::kBFloat16) {
    const GatherLaunch l = gather_launch(slots, a.dim);
    gather_bf16_kernel<<<l.grid, l.block, 0, stream>>>(a.tables, a.table_row_offsets, a.ids, a.num_tables,
                                                       a.dim, slots, static_cast<__nv_bfloat16*>(a.out));
    PERFLAB_CUDA_CHECK_LAUNCH("gather_bf16_kernel");
  } else if (a.dim % 4 == 0 && aligned16(a.tables) && aligned16(a.out)) {
    const int64_t width = a.dim / 4;
    const GatherLaunch l = gather_launch(slots, width);
    gather_kernel<float4><<<l.grid, l.block, 0, stream>>>(reinterpret_cast<const float4*>(a.tables),
                                                          a.table_row_offsets, a.ids, a.num_tables, width,
                                                          slots, static_cast<float4*>(a.out));
    PERFLAB_CUDA_CHECK_LAUNCH("gather_kernel<float4>");
  } else {
    const GatherLaunch l = gather_launch(slots, a.dim);
    gather_kernel<float><<<l.grid, l.block, 0, stream>>>(a.tables, a.table_row_offsets, a.ids, a.num_tables,
                                                         a.dim, slots, static_cast<float*>(a.out));
    PERFLAB_CUDA_CHECK_LAUNCH("gather_kernel<float>");
  }
}

LaunchList EmbeddingForward::launches(const EmbeddingArguments& a) {
  const double slots = static_cast<double>(a.batch * a.num_tables);
  const double values = slots * static_cast<double>(a.dim);
  const bool bf16 = a.out_type == EmbeddingOutputType::kBFloat16;
  return {{bf16 ? "gather_bf16_kernel" : "gather_kernel", "embedding lookups (all tables)", "",
           {slots * sizeof(int32_t) + values * sizeof(float) + values * (bf16 ? 2 : 4), 0, ""}}};
}

LaunchList EmbeddingBackwardSgd::launches(const EmbeddingArguments& a) {
  const double n = static_cast<double>(a.batch * a.num_tables);
  const double pair = sizeof(RowKey) + sizeof(Slot);
  return {{"make_keys_kernel", "sort keys (global rows) and slots", "", {n * sizeof(int32_t) + n * pair, 0, ""}},
          {"DeviceRadixSort", "CUB radix sort of (row, slot) pairs", "", {2 * n * pair, 0, ""}},
          {"DeviceReduceByKey", "CUB run-length encoding: distinct rows and their counts", "",
           {n * sizeof(RowKey) + 2 * n * sizeof(int32_t), 0, ""}},
          {"DeviceScan", "CUB exclusive scan: each row's first slot", "", {2 * n * sizeof(int32_t), 0, ""}},
          {"sgd_rows_kernel", "sparse SGD of every distinct row", "",
           {n * static_cast<double>(a.dim) * sizeof(float) + n * (sizeof(Slot) + 2 * sizeof(int32_t)),
            n * static_cast<double>(a.dim) * 2, "fp32"}}};
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
  if (args.grad == nullptr) return Status::invalid("embedding backward: grad is null");
  if (args.lr_device == nullptr) return Status::invalid("embedding backward: lr_device is null");
  if (args.mode != EmbeddingUpdateMode::kSyncFree &&
      args.mode != EmbeddingUpdateMode::kSynchronising) {
    return Status::invalid("embedding backward: unknown update mode");
  }
  return Status::success();
}

size_t EmbeddingBackwardSgd::workspace_bytes(const EmbeddingArguments& args) {
  return backward_layout(args.batch * args.num_tables, row_key_bits(args.total_rows)).total;
}

void EmbeddingBackwardSgd::run(const EmbeddingArguments& a, void* workspace, cudaStream_t stream) {
  const int64_t num_slots = a.batch * a.num_tables;
  const int n = static_cast<int>(num_slots);
  const int key_bits = row_key_bits(a.total_rows);
  const BackwardLayout l = backward_layout(num_slots, key_bits);
  auto* keys_in = at_offset<RowKey>(workspace, l.keys_in);
  auto* keys_out = at_offset<RowKey>(workspace, l.keys_out);
  auto* slots_in = at_offset<Slot>(workspace, l.slots_in);
  auto* slots_out = at_offset<Slot>(workspace, l.slots_out);
  auto* unique_rows = at_offset<RowKey>(workspace, l.unique_rows);
  auto* run_counts = at_offset<int32_t>(workspace, l.run_counts);
  auto* run_offsets = at_offset<int32_t>(workspace, l.run_offsets);
  auto* num_runs = at_offset<int32_t>(workspace, l.num_runs);
  void* temp = at_offset<void>(workspace, l.temp);

  make_keys_kernel<<<blocks_for(num_slots), kThreads, 0, stream>>>(
      a.table_row_offsets, a.ids, a.num_tables, num_slots, keys_in, slots_in);
  PERFLAB_CUDA_CHECK_LAUNCH("make_keys_kernel");
  size_t temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, slots_in,
                                                     slots_out, n, 0, key_bits, stream));
  // Counts past the number of runs are scanned but never used; zero them so
  // the scan reads defined memory.
  PERFLAB_CUDA_CHECK(
      cudaMemsetAsync(run_counts, 0, static_cast<size_t>(num_slots) * sizeof(int32_t), stream));
  temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, keys_out, unique_rows,
                                                        run_counts, num_runs, n, stream));
  temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(temp, temp_bytes, run_counts, run_offsets, n, stream));

  // The update reads the run count on the device either way; the
  // synchronising variant only sizes its launch to it.
  int64_t update_work = num_slots * a.dim;
  if (a.mode == EmbeddingUpdateMode::kSynchronising) {
    int32_t runs_host = 0;
    counted_copy_to_host(&runs_host, num_runs, sizeof(runs_host), stream);
    update_work = int64_t{runs_host} * a.dim;
  }
  sgd_rows_kernel<<<blocks_for(update_work), kThreads, 0, stream>>>(
      unique_rows, run_offsets, run_counts, slots_out, num_runs, a.grad, a.lr_device, a.dim,
      a.tables);
  PERFLAB_CUDA_CHECK_LAUNCH("sgd_rows_kernel");
}

}  // namespace perflab::kernels::cuda
