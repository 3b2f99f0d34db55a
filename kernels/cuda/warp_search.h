// Where a run of equal keys starts and ends in a sorted array, searched by a
// warp: each round every lane tests one position and a ballot of the 32
// answers narrows the range 32-fold, so a run reaching c positions away is
// found in 1 + ceil(log32 c) rounds of one read each (four for a hot row's
// ~36k slots at DLRM's batch 65,536), where one thread's galloping and
// binary search reads about 2 log2 c times one after another (~30). The
// embedding update (embedding_update.cu) runs them; written once for a warp
// and a host loop: `ballot(test)` returns the mask whose bit l is test(l),
// on the device __ballot_sync with each lane testing its own l
// (embedding_update.cu's WarpBallot), in a host test a loop over l
// (tests/kernels/cuda/warp_search_test.cc). Warp-uniform arguments: every
// lane returns the same position.
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace perflab::kernels::cuda::warp_search {

/// The lowest set bit's index; `mask` is not 0.
PERFLAB_HOST_DEVICE inline int lowest_set(unsigned mask) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(mask)) - 1;
#else
  return __builtin_ctz(mask);
#endif
}

/// The first position in (lo, hi] where `pred` holds, for a `pred` false up
/// to some position and true from there on; pred(lo) is taken as false and
/// pred(hi) as true, neither read, and no position outside (lo, hi) is.
template <typename Pred, typename Ballot>
PERFLAB_HOST_DEVICE int64_t partition_point(int64_t lo, int64_t hi, Pred pred, Ballot ballot) {
  while (hi - lo > 1) {
    const int64_t step = (hi - lo + 31) / 32;
    // Lane l tests lo + (l + 1) * step; lane 31's is at or past hi, so some lane holds.
    const unsigned holds = ballot([&](int l) {
      const int64_t q = lo + (l + 1) * step;
      return q >= hi || pred(q);
    });
    const int f = lowest_set(holds);  // lanes before f: pred false
    const int64_t top = lo + (f + 1) * step;
    lo += f * step;
    hi = top < hi ? top : hi;
  }
  return hi;
}

/// One past the last position of the run holding position `at` (keys sorted
/// ascending, `num_slots` of them, fewer than 2^31): a gallop (lane l tests
/// at + 2^l; lane 31's is past the array) brackets the end, a partition
/// search finds it.
template <typename Keys, typename Ballot>
PERFLAB_HOST_DEVICE int64_t run_end(const Keys& keys, int64_t num_slots, int64_t at, Ballot ballot) {
  const auto key = keys[at];
  const unsigned past = ballot([&](int l) {
    const int64_t q = at + (int64_t{1} << l);
    return q >= num_slots || keys[q] != key;
  });
  const int f = lowest_set(past);
  const int64_t lo = f == 0 ? at : at + (int64_t{1} << (f - 1));  // in the run
  const int64_t top = at + (int64_t{1} << f);                       // past it
  return partition_point(
      lo, top < num_slots ? top : num_slots, [&](int64_t q) { return keys[q] != key; }, ballot);
}

/// The first position of the run holding position `at`, the same way
/// backwards (lane l tests at - 2^l; lane 31's is before position 0).
template <typename Keys, typename Ballot>
PERFLAB_HOST_DEVICE int64_t run_start(const Keys& keys, int64_t at, Ballot ballot) {
  const auto key = keys[at];
  const unsigned before = ballot([&](int l) {
    const int64_t q = at - (int64_t{1} << l);
    return q < 0 || keys[q] != key;
  });
  const int f = lowest_set(before);
  const int64_t hi = f == 0 ? at : at - (int64_t{1} << (f - 1));  // in the run
  const int64_t bottom = at - (int64_t{1} << f);                    // before it
  return partition_point(
      bottom > -1 ? bottom : -1, hi, [&](int64_t q) { return keys[q] == key; }, ballot);
}

}  // namespace perflab::kernels::cuda::warp_search
