// The CUDA run's packed input blocks (workloads/dlrm/input_pack.h): every
// section aligned, the right samples in each (one rank, and a rank's slice
// of a larger batch), zeros in the padding, and bad ranges refused with a
// line that says why.
#include "workloads/dlrm/input_pack.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/half_precision.h"

namespace perflab::dlrm {
namespace {

/// 10 samples of 3 dense features and 2 tables, every value telling its
/// sample and column apart.
Dataset numbered() {
  Dataset d;
  d.num_dense = 3;
  d.table_sizes = {100, 100};
  for (int s = 0; s < 10; ++s) {
    for (int c = 0; c < 3; ++c) d.dense.push_back(static_cast<float>(s * 10 + c));
    for (int t = 0; t < 2; ++t) d.categorical.push_back(s * 10 + t);
    d.labels.push_back(static_cast<float>(s % 2));
  }
  return d;
}

TEST(PackedBatchLayout, SectionsFollowEachOtherAligned) {
  // 3 rows of 4 floats (48 bytes), 5 x 2 ids (40 bytes), 3 labels (12 bytes).
  const PackedBatchLayout l = packed_batch_layout(3, 4, 5, 2);
  EXPECT_EQ(l.dense_offset, 0);
  EXPECT_EQ(l.ids_offset, 256);
  EXPECT_EQ(l.labels_offset, 512);
  EXPECT_EQ(l.bytes, 768);
  // Exactly a multiple of the alignment takes no padding.
  const PackedBatchLayout m = packed_batch_layout(64, 16, 64, 1);
  EXPECT_EQ(m.ids_offset, 64 * 16 * 4);
  EXPECT_EQ(m.labels_offset, m.ids_offset + 256);
  EXPECT_EQ(m.bytes, m.labels_offset + 256);
  for (const PackedBatchLayout& x : {l, m}) {
    EXPECT_EQ(x.ids_offset % kPackAlignment, 0);
    EXPECT_EQ(x.labels_offset % kPackAlignment, 0);
    EXPECT_EQ(x.bytes % kPackAlignment, 0);
  }
}

TEST(PackBatch, OneRankTakesTheWholeBatchWithRowsPadded) {
  const Dataset d = numbered();
  const PackedBatchLayout l = packed_batch_layout(4, 5, 4, 2);  // rows padded 3 -> 5
  std::vector<std::byte> block(static_cast<size_t>(l.bytes), std::byte{0x7f});
  pack_batch(d, 1, 0, l, block.data());  // samples 4..7
  const auto* dense = reinterpret_cast<const float*>(block.data() + l.dense_offset);
  const auto* ids = reinterpret_cast<const int32_t*>(block.data() + l.ids_offset);
  const auto* labels = reinterpret_cast<const float*>(block.data() + l.labels_offset);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) {
      EXPECT_EQ(dense[r * 5 + c], c < 3 ? static_cast<float>((4 + r) * 10 + c) : 0.0f) << r << "," << c;
    }
    for (int t = 0; t < 2; ++t) EXPECT_EQ(ids[r * 2 + t], (4 + r) * 10 + t);
    EXPECT_EQ(labels[r], static_cast<float>((4 + r) % 2));
  }
  // Nothing of the old contents is left between the sections.
  for (int64_t i = 4 * 5 * 4; i < l.ids_offset; ++i) EXPECT_EQ(block[static_cast<size_t>(i)], std::byte{0}) << i;
  for (int64_t i = l.labels_offset + 16; i < l.bytes; ++i) EXPECT_EQ(block[static_cast<size_t>(i)], std::byte{0}) << i;
}

// A bf16 model's block: the dense rows as bf16 bits rounded to nearest even
// (the device cast's rounding), half the bytes, the rest as for fp32.
TEST(PackBatch, Bf16DenseRowsAreRoundedToNearestEvenInHalfTheBytes) {
  Dataset d = numbered();
  d.dense[3 * 4] = 1.00390625f;   // sample 4, column 0: 1 + 2^-8, a tie: to even (1.0)
  d.dense[3 * 4 + 1] = 1.01171875f;  // 1 + 3 * 2^-8, a tie: to even (1 + 2^-6)
  const PackedBatchLayout l = packed_batch_layout(4, 5, 4, 2, true);
  EXPECT_EQ(l.ids_offset, 256) << "4 rows of 5 bf16 values: 40 bytes";
  std::vector<std::byte> block(static_cast<size_t>(l.bytes), std::byte{0x7f});
  pack_batch(d, 1, 0, l, block.data());
  const auto* dense = reinterpret_cast<const uint16_t*>(block.data() + l.dense_offset);
  EXPECT_EQ(dense[0], to_bf16(1.00390625f));
  EXPECT_EQ(from_bf16(dense[0]), 1.0f);
  EXPECT_EQ(from_bf16(dense[1]), 1.015625f);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) {
      const float want = c < 3 ? d.dense[static_cast<size_t>((4 + r) * 3 + c)] : 0.0f;
      EXPECT_EQ(dense[r * 5 + c], to_bf16(want)) << r << "," << c;
    }
  }
  for (int64_t i = 4 * 5 * 2; i < l.ids_offset; ++i) EXPECT_EQ(block[static_cast<size_t>(i)], std::byte{0}) << i;
  const auto* ids = reinterpret_cast<const int32_t*>(block.data() + l.ids_offset);
  const auto* labels = reinterpret_cast<const float*>(block.data() + l.labels_offset);
  for (int r = 0; r < 4; ++r) {
    for (int t = 0; t < 2; ++t) EXPECT_EQ(ids[r * 2 + t], (4 + r) * 10 + t);
    EXPECT_EQ(labels[r], static_cast<float>((4 + r) % 2));
  }
  // A rank's slice in bf16: samples 8 and 9 of batch 1 (samples 5..9).
  const PackedBatchLayout slice = packed_batch_layout(2, 3, 5, 2, true);
  std::vector<std::byte> part(static_cast<size_t>(slice.bytes));
  pack_batch(d, 1, 3, slice, part.data());
  const auto* rows = reinterpret_cast<const uint16_t*>(part.data() + slice.dense_offset);
  EXPECT_EQ(from_bf16(rows[0]), 80.0f);
  EXPECT_EQ(from_bf16(rows[5]), 92.0f);
  EXPECT_EQ(reinterpret_cast<const float*>(part.data() + slice.labels_offset)[1], 1.0f);
}

TEST(PackBatch, ARankTakesItsSliceOfDenseAndLabelsAndEveryId) {
  const Dataset d = numbered();
  const PackedBatchLayout l = packed_batch_layout(2, 3, 5, 2);  // a rank's 2 of a batch of 5
  std::vector<std::byte> block(static_cast<size_t>(l.bytes));
  pack_batch(d, 1, 3, l, block.data());  // batch 1 is samples 5..9; this rank's are 8 and 9
  const auto* dense = reinterpret_cast<const float*>(block.data() + l.dense_offset);
  const auto* ids = reinterpret_cast<const int32_t*>(block.data() + l.ids_offset);
  const auto* labels = reinterpret_cast<const float*>(block.data() + l.labels_offset);
  EXPECT_EQ(dense[0], 80.0f);
  EXPECT_EQ(dense[5], 92.0f);
  EXPECT_EQ(labels[0], 0.0f);
  EXPECT_EQ(labels[1], 1.0f);
  for (int s = 0; s < 5; ++s) EXPECT_EQ(ids[s * 2 + 1], (5 + s) * 10 + 1) << "every sample's ids, not the slice's";
}

TEST(PackBatch, RefusesRangesAndShapesThatDoNotFit) {
  const Dataset d = numbered();
  std::vector<std::byte> block(4096);
  const PackedBatchLayout l = packed_batch_layout(4, 3, 4, 2);
  EXPECT_THROW(pack_batch(d, 2, 0, l, block.data()), UsageError) << "samples 8..11 of 10";
  EXPECT_THROW(pack_batch(d, -1, 0, l, block.data()), UsageError);
  const PackedBatchLayout slice = packed_batch_layout(2, 3, 4, 2);
  EXPECT_THROW(pack_batch(d, 0, 3, slice, block.data()), UsageError) << "a slice past the batch";
  EXPECT_THROW(pack_batch(d, 0, 0, packed_batch_layout(4, 2, 4, 2), block.data()), UsageError)
      << "3 features in rows of 2";
  EXPECT_THROW(pack_batch(d, 0, 0, packed_batch_layout(4, 3, 4, 3), block.data()), UsageError) << "3 tables of 2";
  try {
    pack_batch(d, 2, 0, l, block.data());
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("[8, 12)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(packed_batch_layout(0, 3, 4, 2), UsageError);
  EXPECT_THROW(packed_batch_layout(5, 3, 4, 2), UsageError) << "a rank's share beyond the batch";
}

}  // namespace
}  // namespace perflab::dlrm
