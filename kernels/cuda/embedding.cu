// Multi-table embedding gather, the operators' checks and declared launches,
// and the update's workspace layout (its sort and SGD: embedding_update.cu).
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <string>
#include <type_traits>

#include "base/error.h"
#include "base/round_up.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_detail.h"
#include "kernels/cuda/embedding_sort.cuh"

namespace perflab::kernels::cuda {
namespace {

using embedding_detail::at_offset;
using embedding_detail::backward_layout;
using embedding_detail::BackwardLayout;
using embedding_detail::kMaxBlocks;
using embedding_detail::kMaxRowsForKeys;
using embedding_detail::kThreads;
using embedding_detail::row_key_bits;
using embedding_detail::RowKey;
using embedding_detail::Slot;
using embedding_detail::tiles_for;

constexpr size_t kAlign = 256;

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
  wait_for_prior_kernels();
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
  wait_for_prior_kernels();
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
    at += round_up(bytes, kAlign);
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

}  // namespace

BackwardLayout embedding_detail::backward_layout(int64_t num_slots, int64_t dim, int key_bits) {
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
    launch_kernel(gather_bf16_kernel, l.grid, l.block, 0, stream, a.tables, a.table_row_offsets,
                  a.ids, a.num_tables, a.dim, slots, static_cast<__nv_bfloat16*>(a.out), sort);
    PERFLAB_CUDA_CHECK_LAUNCH("gather_bf16_kernel");
  } else if (a.dim % 4 == 0 && aligned16(a.tables) && aligned16(a.out)) {
    const int64_t width = a.dim / 4;
    const GatherLaunch l = gather_launch(slots, width);
    launch_kernel(gather_kernel<float4>, l.grid, l.block, 0, stream,
                  reinterpret_cast<const float4*>(a.tables), a.table_row_offsets, a.ids,
                  a.num_tables, width, slots, static_cast<float4*>(a.out), sort);
    PERFLAB_CUDA_CHECK_LAUNCH("gather_kernel<float4>");
  } else {
    const GatherLaunch l = gather_launch(slots, a.dim);
    launch_kernel(gather_kernel<float>, l.grid, l.block, 0, stream, a.tables, a.table_row_offsets,
                  a.ids, a.num_tables, a.dim, slots, static_cast<float*>(a.out), sort);
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
  if (embedding_detail::per_table_sort(a.batch)) {
    // The keys read, the pairs written (the slots are computed).
    list.push_back({"sort_per_table_kernel", "radix sort of (row, slot) pairs, a block per table", "",
                    {n * sizeof(RowKey) + n * pair, 0, ""}});
  } else {
    list.push_back({"DeviceRadixSort", "CUB radix sort of (row, slot) pairs", "", {2 * n * pair, 0, ""}});
  }
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

}  // namespace perflab::kernels::cuda
