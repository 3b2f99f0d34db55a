// TransposeMatrices on the host, no device needed: the blocks of one launch
// (transpose_tiles.h, the kernel's own arithmetic) cover every element of
// every matrix once and nothing outside them, at odd shapes and with
// matrices smaller than a tile; transpose_batches cuts a list into launches
// in order; can_implement refuses what the kernel cannot do, with a reason.
#include "kernels/cuda/transpose.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perflab::kernels::cuda {
namespace {

/// Runs every block's index arithmetic as the kernel does (its tile, then
/// the 32 x 32 elements inside the matrix) and counts each element's visits.
void expect_every_element_once(std::vector<std::pair<int64_t, int64_t>> shapes) {
  TransposeBatch b;
  std::vector<std::vector<int>> visits;
  for (const auto& [rows, cols] : shapes) {
    b.matrices[b.count++] = {nullptr, nullptr, rows, cols};
    visits.emplace_back(static_cast<size_t>(rows * cols), 0);
  }
  const int64_t blocks = transpose_tile_starts(b);
  for (int64_t block = 0; block < blocks; ++block) {
    const TransposeTile t = transpose_tile(b, block);
    ASSERT_GE(t.matrix, 0);
    ASSERT_LT(t.matrix, b.count);
    const TransposeMatrix& m = b.matrices[t.matrix];
    ASSERT_LT(t.row0, m.rows) << "block " << block << " starts below its matrix";
    ASSERT_LT(t.col0, m.cols) << "block " << block << " starts right of its matrix";
    ASSERT_EQ(t.row0 % kTransposeTile, 0);
    ASSERT_EQ(t.col0 % kTransposeTile, 0);
    for (int r = 0; r < kTransposeTile; ++r) {
      for (int c = 0; c < kTransposeTile; ++c) {
        const int64_t row = t.row0 + r, col = t.col0 + c;
        if (row < m.rows && col < m.cols) ++visits[static_cast<size_t>(t.matrix)][static_cast<size_t>(row * m.cols + col)];
      }
    }
  }
  for (size_t m = 0; m < visits.size(); ++m) {
    for (size_t i = 0; i < visits[m].size(); ++i) {
      ASSERT_EQ(visits[m][i], 1) << "matrix " << m << " (" << shapes[m].first << " x " << shapes[m].second
                                 << "), element " << i;
    }
  }
}

TEST(TransposeTiles, EveryElementOfEveryMatrixOnce) {
  expect_every_element_once({{1, 1}});
  expect_every_element_once({{32, 32}, {1, 33}, {33, 1}});
  expect_every_element_once({{31, 65}, {64, 64}, {100, 3}, {3, 100}, {97, 129}});
  // DLRM's data-gradient layers at the DLE shape: bottom 1-2, top 0-3.
  expect_every_element_once({{256, 512}, {128, 256}, {1024, 480}, {1024, 1024}, {512, 1024}, {256, 512}});
  // A full launch.
  std::vector<std::pair<int64_t, int64_t>> full;
  for (int m = 0; m < kMaxTransposeMatrices; ++m) full.emplace_back(1 + 7 * m, 40 - 2 * m);
  expect_every_element_once(full);
}

TEST(TransposeTiles, BatchesHoldUpToTheLimitInOrder) {
  std::vector<TransposeMatrix> list;
  for (int m = 0; m < 2 * kMaxTransposeMatrices + 3; ++m) list.push_back({nullptr, nullptr, m + 1, 2});
  const std::vector<TransposeBatch> batches = transpose_batches(list, 2);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].count, kMaxTransposeMatrices);
  EXPECT_EQ(batches[1].count, kMaxTransposeMatrices);
  EXPECT_EQ(batches[2].count, 3);
  int64_t next = 1;
  for (const TransposeBatch& b : batches) {
    EXPECT_EQ(b.element_bytes, 2);
    for (int m = 0; m < b.count; ++m) EXPECT_EQ(b.matrices[m].rows, next++);
  }
  EXPECT_TRUE(transpose_batches({}, 4).empty());
}

TEST(TransposeMatricesCanImplement, RefusesWhatTheKernelCannotDoWithAReason) {
  std::vector<float> a(64), b(64), c(64), d(64);
  TransposeBatch good;
  good.count = 2;
  good.matrices[0] = {a.data(), b.data(), 4, 16};
  good.matrices[1] = {d.data(), c.data(), 8, 8};
  EXPECT_TRUE(TransposeMatrices::can_implement(good).ok()) << TransposeMatrices::can_implement(good).reason();
  const auto reason = [](const TransposeBatch& x) { return TransposeMatrices::can_implement(x).reason(); };
  TransposeBatch x = good;
  x.count = 0;
  EXPECT_NE(reason(x).find("1 to 16 matrices a launch, got 0"), std::string::npos) << reason(x);
  x.count = kMaxTransposeMatrices + 1;
  EXPECT_NE(reason(x).find("got 17"), std::string::npos) << reason(x);
  x = good;
  x.element_bytes = 8;
  EXPECT_NE(reason(x).find("element_bytes must be 4 or 2, got 8"), std::string::npos) << reason(x);
  x = good;
  x.matrices[1].cols = 0;
  EXPECT_NE(reason(x).find("matrix 1 is 8 x 0"), std::string::npos) << reason(x);
  x = good;
  x.matrices[0].dst = nullptr;
  EXPECT_NE(reason(x).find("matrix 0: null pointer"), std::string::npos) << reason(x);
  x = good;
  x.matrices[0].dst = reinterpret_cast<char*>(c.data()) + 2;  // bf16-aligned, not fp32
  EXPECT_NE(reason(x).find("matrix 0: a pointer not aligned to its 4-byte elements"), std::string::npos) << reason(x);
  x = good;
  x.matrices[0].dst = a.data() + 8;  // in place, shifted: its source and destination overlap
  EXPECT_NE(reason(x).find("matrix 0's source overlaps matrix 0's destination"), std::string::npos) << reason(x);
  x = good;
  x.matrices[1].dst = b.data() + 63;  // the last element of matrix 0's destination
  EXPECT_NE(reason(x).find("matrices 0 and 1 have overlapping destinations"), std::string::npos) << reason(x);
  x = good;
  x.matrices[1].src = b.data();  // reads what matrix 0 writes
  EXPECT_NE(reason(x).find("matrix 1's source overlaps matrix 0's destination"), std::string::npos) << reason(x);
  // Two bf16 matrices side by side in one buffer do not overlap.
  std::vector<uint16_t> h(128), t(128);
  TransposeBatch halves;
  halves.count = 2;
  halves.element_bytes = 2;
  halves.matrices[0] = {h.data(), t.data(), 8, 8};
  halves.matrices[1] = {h.data() + 64, t.data() + 64, 4, 16};
  EXPECT_TRUE(TransposeMatrices::can_implement(halves).ok()) << TransposeMatrices::can_implement(halves).reason();
}

TEST(TransposeMatricesLaunches, OneKernelReadingAndWritingEachElementOnce) {
  TransposeBatch b;
  b.count = 2;
  b.element_bytes = 4;
  b.matrices[0] = {nullptr, nullptr, 1024, 480};
  b.matrices[1] = {nullptr, nullptr, 3, 5};
  const LaunchList list = TransposeMatrices::launches(b);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].kernel, "transpose_kernel");
  EXPECT_DOUBLE_EQ(list[0].cost.bytes, 2.0 * (1024 * 480 + 15) * 4);
  EXPECT_DOUBLE_EQ(list[0].cost.flops, 0.0);
}

}  // namespace
}  // namespace perflab::kernels::cuda
