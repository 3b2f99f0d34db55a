// The CUDA-core forward's blocks of pairs (kernels/cuda/interaction_pair_blocks.cuh),
// their indexing on the host: no device needed. Every pair i > j of 2 to 64
// features is written exactly once over all blocks, lanes and sums, and
// nothing else is; blocks run row by row, so neighbours share their a-rows.
// The sums themselves (the shuffles) are held against the CPU by the GPU
// tests (InteractionCuda.ForwardMatchesCpu and the fused-lookup tests).
#include "kernels/cuda/interaction_pair_blocks.cuh"

#include <gtest/gtest.h>

#include <vector>

namespace perflab::kernels::cuda::interaction_detail {
namespace {

TEST(InteractionPairBlocks, EveryPairIsWrittenOnceAndNothingElse) {
  for (int features = 2; features <= 64; ++features) {
    std::vector<int> written(static_cast<size_t>(features * features), 0);
    const int blocks = pair_blocks(features);
    const int groups = (features + kBlockRows - 1) / kBlockRows;
    ASSERT_EQ(blocks, groups * (groups + 1) / 2) << features;
    for (int q = 0; q < blocks; ++q) {
      int gi = -1, gj = -1;
      block_groups(q, &gi, &gj);
      ASSERT_GE(gj, 0) << q;
      ASSERT_LE(gj, gi) << q;
      ASSERT_LT(gi, groups) << q;
      for (int slice = 0; slice < kBlockSlices; ++slice) {
        for (int k = 0; k < kBlockRows; ++k) {
          int i = -1, j = -1;
          if (!block_pair(gi, gj, slice, k, features, &i, &j)) continue;
          ASSERT_LT(i, features);
          ASSERT_GE(j, 0);
          ASSERT_LT(j, i);
          ++written[static_cast<size_t>(i * features + j)];
        }
      }
    }
    for (int i = 0; i < features; ++i) {
      for (int j = 0; j < features; ++j) {
        EXPECT_EQ(written[static_cast<size_t>(i * features + j)], j < i ? 1 : 0)
            << "pair (" << i << ", " << j << ") of " << features << " features";
      }
    }
  }
}

TEST(InteractionPairBlocks, BlocksRunRowByRow) {
  // DLRM's 27 features: 7 row groups, 28 blocks, 112 lanes (one pass of the
  // forward's 128 threads).
  EXPECT_EQ(pair_blocks(27), 28);
  int q = 0;
  for (int gi = 0; gi < 7; ++gi) {
    for (int gj = 0; gj <= gi; ++gj, ++q) {
      int a = -1, c = -1;
      block_groups(q, &a, &c);
      EXPECT_EQ(a, gi) << q;
      EXPECT_EQ(c, gj) << q;
    }
  }
  // The diagonal block of the last group: rows 24-26 (27 features), so
  // lanes 1 and 2 write (25, 24), (26, 24), (26, 25) and lane 3 nothing.
  int i = 0, j = 0;
  EXPECT_FALSE(block_pair(6, 6, 0, 0, 27, &i, &j));
  EXPECT_TRUE(block_pair(6, 6, 1, 0, 27, &i, &j));
  EXPECT_EQ(i, 25);
  EXPECT_EQ(j, 24);
  EXPECT_TRUE(block_pair(6, 6, 2, 1, 27, &i, &j));
  EXPECT_EQ(i, 26);
  EXPECT_EQ(j, 25);
  for (int k = 0; k < kBlockRows; ++k) EXPECT_FALSE(block_pair(6, 6, 3, k, 27, &i, &j)) << k;
}

}  // namespace
}  // namespace perflab::kernels::cuda::interaction_detail
