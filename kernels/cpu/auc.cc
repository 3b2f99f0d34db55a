// Exact ROC AUC via a radix sort of the scores and one pass over tied groups.
#include "kernels/cpu/auc.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

/// Maps a float to a uint32 whose unsigned order is the float's order
/// (negatives flipped, positives offset), with -0.0 and +0.0 made equal.
uint32_t sortable_key(float score) {
  if (score == 0.0f) score = 0.0f;  // Folds -0.0 into +0.0.
  uint32_t bits = 0;
  std::memcpy(&bits, &score, sizeof(bits));
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

/// Stable LSD radix sort of `items` by their upper 32 bits, 8 bits a pass;
/// a pass whose digit is the same for every item is skipped.
void radix_sort_upper32(std::vector<uint64_t>& items) {
  std::vector<uint64_t> scratch(items.size());
  for (int shift = 32; shift < 64; shift += 8) {
    std::array<size_t, 257> offsets{};
    for (uint64_t item : items) ++offsets[((item >> shift) & 0xffu) + 1];
    bool single_bucket = false;
    for (size_t b = 1; b <= 256; ++b) single_bucket |= offsets[b] == items.size();
    if (single_bucket) continue;
    for (size_t b = 1; b <= 256; ++b) offsets[b] += offsets[b - 1];
    for (uint64_t item : items) scratch[offsets[(item >> shift) & 0xffu]++] = item;
    items.swap(scratch);
  }
}

}  // namespace

double roc_auc(const float* scores, const float* labels, int64_t n) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (n <= 0) return kNaN;
  // Each item: the sortable score key in the upper 32 bits, the label in bit 0.
  std::vector<uint64_t> items(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(scores[i])) return kNaN;
    const uint64_t positive = labels[i] >= 0.5f ? 1 : 0;
    items[static_cast<size_t>(i)] = (uint64_t{sortable_key(scores[i])} << 32) | positive;
  }
  radix_sort_upper32(items);

  // Walk groups of equal scores in ascending order. A positive beats every
  // negative below its group and ties with each negative inside it, so
  // 2U = sum over groups of positives * (2 * negatives_below + negatives_in_group).
  // Kept exact in uint64: 2U <= 2 * P * N <= n^2 / 2, fine for n < 4e9.
  uint64_t twice_u = 0, negatives_below = 0, positives_total = 0;
  size_t i = 0;
  while (i < items.size()) {
    const uint64_t key = items[i] >> 32;
    uint64_t positives = 0, negatives = 0;
    for (; i < items.size() && (items[i] >> 32) == key; ++i) {
      if ((items[i] & 1u) != 0) {
        ++positives;
      } else {
        ++negatives;
      }
    }
    twice_u += positives * (2 * negatives_below + negatives);
    negatives_below += negatives;
    positives_total += positives;
  }
  if (positives_total == 0 || negatives_below == 0) return kNaN;
  return static_cast<double>(twice_u) /
         (2.0 * static_cast<double>(positives_total) * static_cast<double>(negatives_below));
}

}  // namespace perflab::kernels::cpu
