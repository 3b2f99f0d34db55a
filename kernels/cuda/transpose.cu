// Several matrices transposed in one launch (see transpose.h).
#include "kernels/cuda/transpose.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"

namespace perflab::kernels::cuda {
namespace {

/// A block: 32 lanes along a tile's row, 8 rows at a time.
constexpr int kRowsPerPass = 8;

/// One tile of one matrix a block: read along the source's rows into shared
/// memory, written along the destination's rows. The padding keeps a
/// tile's column (the transposed reads) on 32 banks: rows 33 words apart
/// for 4-byte elements, 17 for 2-byte ones (one element of padding would
/// be 16.5 words, two lanes of 32 sharing a bank every other pass). The batch stays in the parameter
/// space (__grid_constant__): the block's matrix is picked by index.
template <typename T>
__global__ void __launch_bounds__(kTransposeTile * kRowsPerPass)
    transpose_kernel(const __grid_constant__ TransposeBatch batch) {
  wait_for_prior_kernels();
  constexpr int kPad = sizeof(T) == 2 ? 2 : 1;
  __shared__ T tile[kTransposeTile][kTransposeTile + kPad];
  const TransposeTile t = transpose_tile(batch, blockIdx.x);
  const TransposeMatrix& m = batch.matrices[t.matrix];
  const T* __restrict__ src = static_cast<const T*>(m.src);
  T* __restrict__ dst = static_cast<T*>(m.dst);
  const int lane = static_cast<int>(threadIdx.x), first = static_cast<int>(threadIdx.y);
  for (int r = first; r < kTransposeTile; r += kRowsPerPass) {
    const int64_t row = t.row0 + r, col = t.col0 + lane;
    if (row < m.rows && col < m.cols) tile[r][lane] = src[row * m.cols + col];
  }
  __syncthreads();
  // Row c of dst [cols, rows] is column c of src.
  for (int r = first; r < kTransposeTile; r += kRowsPerPass) {
    const int64_t row = t.col0 + r, col = t.row0 + lane;
    if (row < m.cols && col < m.rows) dst[row * m.rows + col] = tile[lane][r];
  }
}

bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

}  // namespace

std::vector<TransposeBatch> transpose_batches(const std::vector<TransposeMatrix>& matrices, int element_bytes) {
  std::vector<TransposeBatch> batches;
  for (const TransposeMatrix& m : matrices) {
    if (batches.empty() || batches.back().count == kMaxTransposeMatrices) {
      batches.emplace_back();
      batches.back().element_bytes = element_bytes;
    }
    TransposeBatch& b = batches.back();
    b.matrices[b.count++] = m;
  }
  return batches;
}

Status TransposeMatrices::can_implement(const TransposeBatch& b) {
  if (b.count < 1 || b.count > kMaxTransposeMatrices) {
    return Status::invalid(fmt::format("transpose: 1 to {} matrices a launch, got {}", kMaxTransposeMatrices, b.count));
  }
  if (b.element_bytes != 4 && b.element_bytes != 2) {
    return Status::invalid(fmt::format("transpose: element_bytes must be 4 or 2, got {}", b.element_bytes));
  }
  int64_t tiles = 0;
  for (int m = 0; m < b.count; ++m) {
    const TransposeMatrix& x = b.matrices[m];
    if (x.rows < 1 || x.cols < 1) {
      return Status::invalid(fmt::format("transpose: matrix {} is {} x {}", m, x.rows, x.cols));
    }
    if (x.src == nullptr || x.dst == nullptr) return Status::invalid(fmt::format("transpose: matrix {}: null pointer", m));
    const auto e = static_cast<uintptr_t>(b.element_bytes);
    if (reinterpret_cast<uintptr_t>(x.src) % e != 0 || reinterpret_cast<uintptr_t>(x.dst) % e != 0) {
      return Status::invalid(fmt::format("transpose: matrix {}: a pointer not aligned to its {}-byte elements", m, e));
    }
    tiles += transpose_tiles_across(x.rows) * transpose_tiles_across(x.cols);
  }
  if (tiles > INT32_MAX) return Status::invalid(fmt::format("transpose: {} tiles, over a grid's 2^31 - 1", tiles));
  for (int i = 0; i < b.count; ++i) {
    const int64_t bytes_i = b.matrices[i].rows * b.matrices[i].cols * b.element_bytes;
    for (int j = 0; j < b.count; ++j) {
      const int64_t bytes_j = b.matrices[j].rows * b.matrices[j].cols * b.element_bytes;
      if (overlap(b.matrices[i].src, bytes_i, b.matrices[j].dst, bytes_j)) {
        return Status::invalid(fmt::format("transpose: matrix {}'s source overlaps matrix {}'s destination", i, j));
      }
      if (i < j && overlap(b.matrices[i].dst, bytes_i, b.matrices[j].dst, bytes_j)) {
        return Status::invalid(fmt::format("transpose: matrices {} and {} have overlapping destinations", i, j));
      }
    }
  }
  return Status::success();
}

void TransposeMatrices::run(TransposeBatch b, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(transpose_tile_starts(b));
  const dim3 threads(kTransposeTile, kRowsPerPass);
  if (b.element_bytes == 4) {
    launch_kernel(transpose_kernel<uint32_t>, blocks, threads, 0, stream, b);
  } else {
    launch_kernel(transpose_kernel<uint16_t>, blocks, threads, 0, stream, b);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("transpose_kernel");
}

LaunchList TransposeMatrices::launches(const TransposeBatch& b) {
  double elements = 0;
  for (int m = 0; m < b.count; ++m) elements += static_cast<double>(b.matrices[m].rows * b.matrices[m].cols);
  return {{"transpose_kernel", "transpose", "", {2 * elements * b.element_bytes, 0, ""}}};
}

}  // namespace perflab::kernels::cuda
