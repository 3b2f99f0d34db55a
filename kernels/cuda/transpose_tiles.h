// Which tile of which matrix a block of kernels/cuda/transpose.cu moves: the
// index arithmetic of TransposeMatrices, host and device, so a host test
// (tests/kernels/cuda/transpose_tiles_test.cc) can check that the blocks of
// one launch cover every element of every matrix once.
//
// A launch moves up to kMaxTransposeMatrices matrices, each cut into
// kTransposeTile x kTransposeTile tiles (the last row and column of tiles
// partial), one block a tile, the matrices' tiles one after another in the
// grid: tile_start[m] is the first block of matrix m and tile_start[count]
// the grid's size.
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace perflab::kernels::cuda {

inline constexpr int kTransposeTile = 32;
inline constexpr int kMaxTransposeMatrices = 16;

/// src [rows, cols] row-major -> dst [cols, rows] row-major.
struct TransposeMatrix {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
};

/// What a launch moves, and where each matrix's tiles begin in its grid
/// (transpose_tile_starts fills tile_start).
struct TransposeBatch {
  int count = 0;
  int element_bytes = 4;  ///< 4 (fp32) or 2 (bf16): the bits are moved, not converted.
  TransposeMatrix matrices[kMaxTransposeMatrices];
  int64_t tile_start[kMaxTransposeMatrices + 1] = {};
};

PERFLAB_HOST_DEVICE inline int64_t transpose_tiles_across(int64_t n) {
  return (n + kTransposeTile - 1) / kTransposeTile;
}

/// Fills tile_start from the matrices' shapes; returns the grid's size.
inline int64_t transpose_tile_starts(TransposeBatch& b) {
  b.tile_start[0] = 0;
  for (int m = 0; m < b.count; ++m) {
    const TransposeMatrix& x = b.matrices[m];
    b.tile_start[m + 1] = b.tile_start[m] + transpose_tiles_across(x.rows) * transpose_tiles_across(x.cols);
  }
  return b.tile_start[b.count];
}

/// The tile block `block` moves: matrix `matrix`, source rows from
/// `row0` and columns from `col0` (each up to kTransposeTile, clipped to the
/// matrix).
struct TransposeTile {
  int matrix = 0;
  int64_t row0 = 0;
  int64_t col0 = 0;
};

PERFLAB_HOST_DEVICE inline TransposeTile transpose_tile(const TransposeBatch& b, int64_t block) {
  int m = 0;
  while (m + 1 < b.count && block >= b.tile_start[m + 1]) ++m;
  const int64_t t = block - b.tile_start[m];
  const int64_t across = transpose_tiles_across(b.matrices[m].cols);
  return {m, t / across * kTransposeTile, t % across * kTransposeTile};
}

}  // namespace perflab::kernels::cuda
