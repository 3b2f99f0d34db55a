// Where each embedding row sits in DLRM's model-parallel exchange: the index
// arithmetic shared by the CPU description (sharded_model.h) and the cuda
// backend's pack/unpack kernels (cuda_exchange.cu), callable on the host so
// tests check it on the CPU.
//
// A rank r holding tables T_r (ascending) looks up all B global samples:
// [B, T_r, D], sample-major. The rows for peer j are the contiguous samples
// [first_j, first_{j+1}) of it: rows first_j × T_r onwards, no packing needed.
// A rank receiving the rows of its n local samples keeps them in per-peer
// segments: peer j's segment [n, T_j, D] starts at row n × (tables of the
// ranks before j), sample-major, j's tables in ascending order. The model
// wants [n, T, D] (sample b, global table t at row b × T + t). segment_row
// says where (b, t) sits in the segments; the gradients go back the same
// way (the inverse mapping).
//
// Pure: standard headers (and base/host_device.h) only, so .cu files include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/host_device.h"

namespace perflab::dlrm {

/// One global table's place in the per-peer segments.
struct ExchangeSlot {
  int32_t tables_before =
      0;  ///< Tables of the ranks before its owner: the owner's segment starts at n × this.
  int32_t owner_tables = 0;  ///< Tables its owner holds (T_j): a sample's rows in the segment.
  int32_t index = 0;         ///< Its position among its owner's tables (ascending).
};

/// Row (of D floats) in the per-peer segments of `n` samples holding sample
/// `b`'s row of the table at `slot`.
PERFLAB_HOST_DEVICE inline int64_t segment_row(const ExchangeSlot& slot, int64_t n, int64_t b) {
  return n * slot.tables_before + b * slot.owner_tables + slot.index;
}

/// Row in the sample-major [n, tables, D] layout of sample `b`, table `t`.
PERFLAB_HOST_DEVICE inline int64_t sample_row(int64_t tables, int64_t b, int64_t t) {
  return b * tables + t;
}

/// Per global table, its slot, from each rank's tables (ascending, as
/// TablePlacement::tables_of holds them; every table on exactly one rank).
inline std::vector<ExchangeSlot> exchange_slots(const std::vector<std::vector<int>>& tables_of,
                                                int num_tables) {
  std::vector<ExchangeSlot> slots(static_cast<size_t>(num_tables));
  int32_t before = 0;
  for (const std::vector<int>& mine : tables_of) {
    const auto count = static_cast<int32_t>(mine.size());
    for (int32_t q = 0; q < count; ++q)
      slots[static_cast<size_t>(mine[static_cast<size_t>(q)])] = {before, count, q};
    before += count;
  }
  return slots;
}

}  // namespace perflab::dlrm
