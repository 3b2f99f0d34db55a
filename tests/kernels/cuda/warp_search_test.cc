// The embedding update's run searches (kernels/cuda/warp_search.h), run by
// a host loop standing in for the warp's 32 lanes: needs no device. Every
// position of sorted arrays with runs of one slot to 100,000 against
// std::lower_bound / std::upper_bound; the rounds a search takes against
// 1 + ceil(log32 c) per direction; and no read outside the array.
#include "kernels/cuda/warp_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace perflab::kernels::cuda::warp_search {
namespace {

/// The warp's ballot as a loop over the lanes; counts its rounds.
struct LoopBallot {
  int* rounds;
  template <typename Test>
  unsigned operator()(const Test& test) const {
    ++*rounds;
    unsigned mask = 0;
    for (int l = 0; l < 32; ++l) {
      if (test(l)) mask |= 1u << l;
    }
    return mask;
  }
};

/// Sorted keys read through a bounds check: a read outside [0, size) fails.
struct CheckedKeys {
  const std::vector<uint32_t>* keys;
  uint32_t operator[](int64_t i) const {
    EXPECT_GE(i, 0);
    EXPECT_LT(i, static_cast<int64_t>(keys->size()));
    return i >= 0 && i < static_cast<int64_t>(keys->size()) ? (*keys)[static_cast<size_t>(i)] : 0u;
  }
};

/// ceil(log32 n) for n >= 1: the partition search's rounds over n positions.
int log32_ceil(int64_t n) {
  int r = 0;
  for (int64_t span = 1; span < n; span *= 32) ++r;
  return r;
}

std::vector<uint32_t> sorted_runs(const std::vector<int64_t>& lengths) {
  std::vector<uint32_t> keys;
  uint32_t key = 3;
  for (int64_t length : lengths) {
    keys.insert(keys.end(), static_cast<size_t>(length), key);
    key += 1 + key % 3;  // gaps between keys too
  }
  return keys;
}

void expect_runs_found(const std::vector<uint32_t>& keys, int64_t stride) {
  const CheckedKeys checked{&keys};
  const auto n = static_cast<int64_t>(keys.size());
  for (int64_t at = 0; at < n; at += stride) {
    const auto start = static_cast<int64_t>(std::lower_bound(keys.begin(), keys.end(), keys[at]) - keys.begin());
    const auto end = static_cast<int64_t>(std::upper_bound(keys.begin(), keys.end(), keys[at]) - keys.begin());
    int rounds = 0;
    ASSERT_EQ(run_end(checked, n, at, LoopBallot{&rounds}), end) << "at " << at << " of " << n;
    // The gallop, then a search of a bracket holding under 2 (end - at) positions.
    EXPECT_LE(rounds, 1 + log32_ceil(std::max<int64_t>(1, 2 * (end - at)))) << "run_end at " << at;
    rounds = 0;
    ASSERT_EQ(run_start(checked, at, LoopBallot{&rounds}), start) << "at " << at << " of " << n;
    EXPECT_LE(rounds, 1 + log32_ceil(std::max<int64_t>(1, 2 * (at - start + 1)))) << "run_start at " << at;
  }
}

TEST(WarpSearch, FindsEveryRunsBoundsInOddArrays) {
  expect_runs_found({7}, 1);
  expect_runs_found(sorted_runs({1}), 1);
  expect_runs_found(sorted_runs({1, 1, 1, 2, 3, 31, 32, 33, 1, 64, 65, 1}), 1);
  expect_runs_found(sorted_runs({257, 1, 255, 256, 2, 1023, 1}), 1);
  std::mt19937_64 rng(7);
  std::vector<int64_t> lengths;
  for (int i = 0; i < 400; ++i) lengths.push_back(1 + static_cast<int64_t>(rng() % (i % 10 == 0 ? 5000 : 40)));
  expect_runs_found(sorted_runs(lengths), 3);
}

// A hot row's run as at DLRM's batch 65,536 (~36k slots), between short
// runs, at both ends of the array and in its middle: four rounds a search
// from the run's inside, the claim warp_search.h's comment makes.
TEST(WarpSearch, AHotRowsRunTakesFourRoundsEachWay) {
  for (const std::vector<int64_t>& lengths : std::vector<std::vector<int64_t>>{
           {36000, 3, 5}, {2, 7, 36000}, {1, 36000, 1}, {100000}, {4, 100000, 9}}) {
    const std::vector<uint32_t> keys = sorted_runs(lengths);
    expect_runs_found(keys, 997);
  }
  const std::vector<uint32_t> keys = sorted_runs({5, 36000, 5});
  int rounds = 0;
  EXPECT_EQ(run_end(CheckedKeys{&keys}, static_cast<int64_t>(keys.size()), 5 + 255, LoopBallot{&rounds}), 36005);
  EXPECT_EQ(rounds, 4);
  rounds = 0;
  EXPECT_EQ(run_start(CheckedKeys{&keys}, 5 + 30000, LoopBallot{&rounds}), 5);
  EXPECT_EQ(rounds, 4);
}

TEST(WarpSearch, PartitionPointReadsOnlyInsideItsRange) {
  std::vector<int64_t> read;
  int rounds = 0;
  const auto pred = [&read](int64_t q) {
    read.push_back(q);
    return q >= 1000;
  };
  EXPECT_EQ(partition_point(10, 5000, pred, LoopBallot{&rounds}), 1000);
  for (int64_t q : read) {
    EXPECT_GT(q, 10);
    EXPECT_LT(q, 5000);
  }
  read.clear();
  EXPECT_EQ(partition_point(4, 5, pred, LoopBallot{&rounds}), 5);  // nothing between: no read
  EXPECT_TRUE(read.empty());
}

}  // namespace
}  // namespace perflab::kernels::cuda::warp_search
