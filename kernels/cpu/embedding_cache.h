// A set-associative cache of embedding rows: the hot rows of tables that
// live elsewhere (host memory, another tier), as a serving engine keeps them
// in GPU memory (issue 28). This CPU version is the reference the CUDA cache
// (kernels/cuda/embedding_cache.h) is tested against: the same geometry,
// the same set of every row, the same victims, so the same hits and misses
// for the same batches.
//
// Geometry: `capacity` rows as `sets` sets of `ways` ways (ways = min(32,
// capacity), sets = capacity / ways: never more rows than asked for). A
// row's key is its global row (table_row_offsets[t] + id) and its set
// cache_set(key, sets). Each slot holds a key (-1: empty), the clock of its
// last use (`stamp`), its use count (`count`) and the row's values.
//
// One batch (lookup):
//   1. the clock advances (the first batch is 1);
//   2. every slot (b, t) whose row is cached is a hit: its values are
//      copied out, and the slot's stamp is set to the clock and its count
//      grows by one per hit; every other slot is a miss, copied from the
//      backing tables;
//   3. policy kStatic stops here. Otherwise the batch's distinct missed
//      rows are inserted, set by set, each set's rows in ascending key
//      order: into the set's first empty way, else over the victim --
//      kLru: the smallest stamp; kLfu: the smallest count, then the smallest
//      stamp; ties to the lowest way. A new entry's stamp is the clock and
//      its count the batch's misses of that row.
// The order within steps 2 and 3 never depends on threads or timing, so a
// sequence of batches leaves the same cache on the CPU and on the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/counter_random.h"

#include "base/host_device.h"

namespace perflab::kernels {

/// Which entry a full set gives up (see the file comment).
enum class CachePolicy : int {
  kStatic = 0,  ///< Never: filled once (prefill), then read only.
  kLru = 1,     ///< Least recently used.
  kLfu = 2,     ///< Least frequently used (then least recently).
};

/// "static", "lru" or "lfu"; and back (false for anything else).
const char* cache_policy_name(CachePolicy p);
bool parse_cache_policy(const std::string& name, CachePolicy* out);

/// How `capacity` rows are laid out.
struct CacheGeometry {
  int64_t sets = 0;
  int ways = 0;
  int64_t slots() const { return sets * ways; }
};
inline constexpr int kCacheMaxWays = 32;
/// ways = min(32, capacity), sets = capacity / ways; capacity >= 1.
CacheGeometry cache_geometry(int64_t capacity);

inline constexpr int64_t kCacheEmpty = -1;

/// The set of a key: a 64-bit mix of the key (splitmix64, constexpr, so a
/// kernel computes it too: --expt-relaxed-constexpr), so consecutive rows
/// spread over the sets.
PERFLAB_HOST_DEVICE inline int64_t cache_set(int64_t key, int64_t sets) {
  return static_cast<int64_t>(splitmix64(static_cast<uint64_t>(key)) % static_cast<uint64_t>(sets));
}

/// The way a new key takes in a set (`keys`, `stamps`, `counts`: the set's
/// `ways` slots): the first empty way, else the policy's victim. -1 under
/// kStatic when the set is full (nothing is evicted).
PERFLAB_HOST_DEVICE inline int cache_victim(const int64_t* keys, const uint32_t* stamps, const uint64_t* counts,
                                            int ways, CachePolicy policy) {
  for (int w = 0; w < ways; ++w) {
    if (keys[w] == kCacheEmpty) return w;
  }
  if (policy == CachePolicy::kStatic) return -1;
  int best = 0;
  for (int w = 1; w < ways; ++w) {
    const bool fewer = counts[w] < counts[best];
    const bool older = stamps[w] < stamps[best];
    if (policy == CachePolicy::kLru ? older : (fewer || (counts[w] == counts[best] && older))) best = w;
  }
  return best;
}

namespace cpu {

/// Hits and misses of one lookup.
struct CacheLookupStats {
  int64_t hits = 0;
  int64_t misses = 0;
};

class EmbeddingCache {
 public:
  /// An empty cache of `capacity` rows of `dim` floats (UsageError: one
  /// line, for capacity < 1 or dim < 1).
  EmbeddingCache(int64_t capacity, int64_t dim, CachePolicy policy);

  const CacheGeometry& geometry() const { return geometry_; }
  CachePolicy policy() const { return policy_; }
  int64_t dim() const { return dim_; }
  /// Batches looked up so far (the clock).
  uint32_t clock() const { return clock_; }
  /// Rows cached now.
  int64_t occupied() const;

  /// The slot holding `key`, or -1.
  int64_t find(int64_t key) const;

  /// Puts `keys` (distinct, most wanted first) with their `counts` (the
  /// use counts LFU starts from) into the cache while their sets have an
  /// empty way; a key whose set is full is skipped. `row(key)` gives the
  /// values. Returns the keys placed.
  template <typename RowOf>
  int64_t prefill(const std::vector<int64_t>& keys, const std::vector<uint64_t>& counts, RowOf row) {
    int64_t placed = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (find(keys[i]) >= 0) continue;
      const auto base = static_cast<size_t>(cache_set(keys[i], geometry_.sets) * geometry_.ways);
      const int way = cache_victim(&keys_[base], &stamps_[base], &counts_[base], geometry_.ways, CachePolicy::kStatic);
      if (way < 0) continue;
      store(static_cast<int64_t>(base) + way, keys[i], 0, counts[i], row(keys[i]));
      ++placed;
    }
    return placed;
  }

  /// Steps 1 and 2 of a batch (the file comment): `n` rows by key, out
  /// [n, dim]; a miss reads `row(key)` (the backing store: dim floats) and
  /// is remembered for insert_misses. `hit` [n] (optional) gets 1 for each hit.
  template <typename RowOf>
  CacheLookupStats lookup(int64_t n, const int64_t* keys, float* out, RowOf row, uint8_t* hit = nullptr) {
    CacheLookupStats stats;
    ++clock_;
    misses_.clear();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t slot = find(keys[i]);
      float* dst = out + i * dim_;
      if (slot >= 0) {
        copy_row(&values_[static_cast<size_t>(slot * dim_)], dst);
        stamps_[static_cast<size_t>(slot)] = clock_;
        counts_[static_cast<size_t>(slot)] += 1;
        ++stats.hits;
      } else {
        copy_row(row(keys[i]), dst);
        misses_.push_back(keys[i]);
        ++stats.misses;
      }
      if (hit != nullptr) hit[i] = slot >= 0 ? 1 : 0;
    }
    return stats;
  }

  /// Step 3 of the last lookup: inserts its distinct missed rows (none
  /// under kStatic), reading their values from `row(key)`. Returns the rows inserted.
  template <typename RowOf>
  int64_t insert_misses(RowOf row) {
    if (policy_ == CachePolicy::kStatic) return 0;
    const std::vector<std::pair<int64_t, uint64_t>>& order = order_misses();
    misses_.clear();
    int64_t inserted = 0;
    for (const auto& [key, count] : order) {
      const auto base = static_cast<size_t>(cache_set(key, geometry_.sets) * geometry_.ways);
      const int way = cache_victim(&keys_[base], &stamps_[base], &counts_[base], geometry_.ways, policy_);
      store(static_cast<int64_t>(base) + way, key, clock_, count, row(key));
      ++inserted;
    }
    return inserted;
  }

  /// Overwrites a cached row's values (an update to the backing store
  /// made visible here); nothing when `key` is not cached. Returns whether it was.
  bool update(int64_t key, const float* values);

  /// The slots' state, for tests and the CUDA cache's check.
  const std::vector<int64_t>& keys() const { return keys_; }
  const std::vector<uint32_t>& stamps() const { return stamps_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  const std::vector<float>& values() const { return values_; }

 private:
  void copy_row(const float* src, float* dst) const;
  void store(int64_t slot, int64_t key, uint32_t stamp, uint64_t count, const float* values);
  /// misses_ as (key, misses) pairs, distinct, by set, ascending keys within a set.
  const std::vector<std::pair<int64_t, uint64_t>>& order_misses();

  CacheGeometry geometry_;
  int64_t dim_ = 0;
  CachePolicy policy_ = CachePolicy::kLru;
  uint32_t clock_ = 0;
  std::vector<int64_t> keys_;
  std::vector<uint32_t> stamps_;
  std::vector<uint64_t> counts_;
  std::vector<float> values_;
  std::vector<int64_t> misses_;
  struct SetKey {
    int64_t set, key;
    uint64_t count;
  };
  std::vector<SetKey> by_set_;
  std::vector<std::pair<int64_t, uint64_t>> order_;
};

}  // namespace cpu
}  // namespace perflab::kernels
