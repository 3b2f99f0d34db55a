// The interaction's pair index (kernels/cuda/pair_index.h), on the host: no
// device needed. Every index up to 2^21 and indices across the range up to
// 2^28 - 1 give the pair whose index they are, with 0 <= j < i; the first
// pairs in the order the tensor-core kernels write them, and the blocks of
// row groups (the CUDA-core forward's, interaction_pair_blocks.cuh), which
// are the same pairs shifted by a row.
#include "kernels/cuda/pair_index.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace perflab::kernels::cuda {
namespace {

::testing::AssertionResult is_pair_of(int p) {
  int i = -1, j = -1;
  pair_from_index(p, &i, &j);
  const int64_t back = int64_t{i} * (i - 1) / 2 + j;
  if (j >= 0 && j < i && back == p) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "p " << p << " gave (" << i << ", " << j << "), index " << back;
}

TEST(PairIndex, EveryIndexIsItsPair) {
  for (int p = 0; p < (1 << 21); ++p) ASSERT_TRUE(is_pair_of(p));
  // Across the range, the rows' first and last indices among them (where a
  // rounded estimate would fall on the wrong side).
  for (int64_t r = 2048; r < 23170; r += 7) {
    const auto first = static_cast<int>(r * (r - 1) / 2);
    ASSERT_TRUE(is_pair_of(first));
    ASSERT_TRUE(is_pair_of(first + static_cast<int>(r) - 1));
  }
  ASSERT_TRUE(is_pair_of((1 << 28) - 1));
}

TEST(PairIndex, TheFirstPairsRowByRow) {
  const int expected[][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {3, 2}, {4, 0}};
  for (int p = 0; p < 7; ++p) {
    int i = 0, j = 0;
    pair_from_index(p, &i, &j);
    EXPECT_EQ(i, expected[p][0]) << p;
    EXPECT_EQ(j, expected[p][1]) << p;
  }
  // Blocks of row groups (a >= c, t = a (a + 1) / 2 + c: the CUDA-core
  // forward's, block_groups) are these pairs with a = i - 1: (0, 0), (1, 0),
  // (1, 1), (2, 0), ...
  int i = 0, j = 0;
  for (int t = 0, a = 0; a < 20; ++a) {
    for (int c = 0; c <= a; ++c, ++t) {
      pair_from_index(t, &i, &j);
      EXPECT_EQ(i - 1, a) << t;
      EXPECT_EQ(j, c) << t;
    }
  }
  pair_from_index(350, &i, &j);  // DLRM's last pair: 27 features
  EXPECT_EQ(i, 26);
  EXPECT_EQ(j, 25);
}

}  // namespace
}  // namespace perflab::kernels::cuda
