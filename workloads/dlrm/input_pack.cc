#include "workloads/dlrm/input_pack.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/round_up.h"
#include "kernels/half_precision.h"

namespace perflab::dlrm {
PackedBatchLayout packed_batch_layout(int64_t local, int64_t width, int64_t batch, int64_t tables,
                                      bool dense_bf16) {
  if (local < 1 || width < 1 || batch < local || tables < 1) {
    throw UsageError(fmt::format("packed batch: {} samples of {} a rank, {} dense values and {} ids a sample "
                                 "(each at least 1, the batch at least a rank's samples)",
                                 batch, local, width, tables));
  }
  PackedBatchLayout l;
  l.local = local;
  l.width = width;
  l.batch = batch;
  l.tables = tables;
  l.dense_bf16 = dense_bf16;
  l.dense_offset = 0;
  const int64_t dense_bytes = local * width * (dense_bf16 ? 2 : static_cast<int64_t>(sizeof(float)));
  l.ids_offset = round_up(dense_bytes, kPackAlignment);
  l.labels_offset = l.ids_offset + round_up(batch * tables * static_cast<int64_t>(sizeof(int32_t)), kPackAlignment);
  l.bytes = l.labels_offset + round_up(local * static_cast<int64_t>(sizeof(float)), kPackAlignment);
  return l;
}

void pack_batch(const Dataset& train, int64_t index, int64_t first_sample, const PackedBatchLayout& l,
                std::byte* out) {
  const int64_t first = index * l.batch;
  const int64_t mine = first + first_sample;
  if (index < 0 || first_sample < 0 || first_sample + l.local > l.batch || first + l.batch > train.size()) {
    throw UsageError(fmt::format("packed batch {}: samples [{}, {}) (this rank's from {}) lie outside the "
                                 "{} of the dataset",
                                 index, first, first + l.batch, mine, train.size()));
  }
  if (train.num_dense > l.width || train.num_tables() != l.tables) {
    throw UsageError(fmt::format("packed batch: the dataset's {} dense features and {} tables do not fit a "
                                 "layout of {} dense values and {} ids a sample",
                                 train.num_dense, train.num_tables(), l.width, l.tables));
  }
  std::memset(out, 0, static_cast<size_t>(l.bytes));
  for (int64_t r = 0; r < l.local; ++r) {
    const float* row = train.dense.data() + (mine + r) * train.num_dense;
    if (l.dense_bf16) {
      auto* dense = reinterpret_cast<uint16_t*>(out + l.dense_offset) + r * l.width;
      for (int c = 0; c < train.num_dense; ++c) dense[c] = to_bf16(row[c]);
    } else {
      std::copy(row, row + train.num_dense, reinterpret_cast<float*>(out + l.dense_offset) + r * l.width);
    }
  }
  std::memcpy(out + l.ids_offset, train.categorical.data() + first * l.tables,
              static_cast<size_t>(l.batch * l.tables) * sizeof(int32_t));
  std::memcpy(out + l.labels_offset, train.labels.data() + mine, static_cast<size_t>(l.local) * sizeof(float));
}

}  // namespace perflab::dlrm
