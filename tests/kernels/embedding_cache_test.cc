// The set-associative embedding cache (kernels/cpu/embedding_cache.h), the
// reference the CUDA cache is checked against: its geometry never holds
// more rows than asked for; a lookup serves each row from the cache or the
// store with the same values; LRU, LFU and static choose the victims the
// header states; inserts follow a fixed order whatever the order of the
// batch; a prefill skips full sets; an update reaches a cached copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/embedding_cache.h"

namespace perflab::kernels {
namespace {

using cpu::EmbeddingCache;

/// A backing store of `rows` rows of `dim` floats: row r's column c is r + c / 100.
struct Store {
  int64_t dim;
  std::vector<float> values;
  Store(int64_t rows, int64_t d) : dim(d), values(static_cast<size_t>(rows * d)) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < d; ++c) values[static_cast<size_t>(r * d + c)] = static_cast<float>(r) + static_cast<float>(c) / 100.0f;
    }
  }
  const float* operator()(int64_t key) const { return &values[static_cast<size_t>(key * dim)]; }
};

/// Keys that all fall in set `set` of `sets`, ascending, `n` of them.
std::vector<int64_t> keys_in_set(int64_t set, int64_t sets, size_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 0; out.size() < n; ++k) {
    if (cache_set(k, sets) == set) out.push_back(k);
  }
  return out;
}

TEST(EmbeddingCache, GeometryNeverHoldsMoreRowsThanAskedFor) {
  const struct {
    int64_t capacity, sets;
    int ways;
  } cases[] = {{1, 1, 1}, {5, 1, 5}, {32, 1, 32}, {33, 1, 32}, {64, 2, 32}, {1000, 31, 32}};
  for (const auto& c : cases) {
    const CacheGeometry g = cache_geometry(c.capacity);
    EXPECT_EQ(g.sets, c.sets) << c.capacity;
    EXPECT_EQ(g.ways, c.ways) << c.capacity;
    EXPECT_LE(g.slots(), c.capacity);
  }
  EXPECT_THROW(cache_geometry(0), UsageError);
  EXPECT_THROW(EmbeddingCache(4, 0, CachePolicy::kLru), UsageError);
  CachePolicy p = CachePolicy::kStatic;
  EXPECT_TRUE(parse_cache_policy("lfu", &p));
  EXPECT_EQ(p, CachePolicy::kLfu);
  EXPECT_FALSE(parse_cache_policy("fifo", &p));
}

TEST(EmbeddingCache, EveryLookupServesTheStoresValuesHitOrMiss) {
  const Store store(97, 3);
  for (CachePolicy policy : {CachePolicy::kLru, CachePolicy::kLfu}) {
    EmbeddingCache cache(40, 3, policy);  // 1 set of 32 ways
    std::mt19937 gen(5);
    int64_t hits = 0, misses = 0;
    for (int batch = 0; batch < 20; ++batch) {
      std::vector<int64_t> keys(31);
      for (int64_t& k : keys) k = static_cast<int64_t>(gen() % 97 % (batch % 3 == 0 ? 97 : 20));  // repeats and skew
      std::vector<float> out(keys.size() * 3);
      std::vector<uint8_t> hit(keys.size());
      const cpu::CacheLookupStats s = cache.lookup(static_cast<int64_t>(keys.size()), keys.data(), out.data(), store, hit.data());
      EXPECT_EQ(s.hits + s.misses, static_cast<int64_t>(keys.size()));
      EXPECT_EQ(s.hits, std::count(hit.begin(), hit.end(), 1));
      for (size_t i = 0; i < keys.size(); ++i) {
        for (int64_t c = 0; c < 3; ++c) ASSERT_EQ(out[i * 3 + static_cast<size_t>(c)], store(keys[i])[c]);
      }
      cache.insert_misses(store);
      hits += s.hits;
      misses += s.misses;
      EXPECT_LE(cache.occupied(), 32);
    }
    EXPECT_GT(hits, 0) << cache_policy_name(policy);
    EXPECT_GT(misses, 0) << cache_policy_name(policy);
    // Every cached row holds its store's values.
    for (size_t slot = 0; slot < cache.keys().size(); ++slot) {
      if (cache.keys()[slot] == kCacheEmpty) continue;
      for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(cache.values()[slot * 3 + static_cast<size_t>(c)], store(cache.keys()[slot])[c]);
    }
  }
}

TEST(EmbeddingCache, LruEvictsTheLeastRecentlyUsedAndLfuTheLeastUsed) {
  const Store store(4000, 2);
  // Capacity 2: one set of two ways. Keys a, b fill it.
  for (CachePolicy policy : {CachePolicy::kLru, CachePolicy::kLfu}) {
    EmbeddingCache cache(2, 2, policy);
    const std::vector<int64_t> k = keys_in_set(0, 1, 3);
    std::vector<float> out(8);
    auto batch = [&](std::vector<int64_t> keys) {
      cache.lookup(static_cast<int64_t>(keys.size()), keys.data(), out.data(), store);
      cache.insert_misses(store);
    };
    batch({k[0], k[0], k[0]});  // k0: count 3, stamp 1
    batch({k[1]});              // k1: count 1, stamp 2
    batch({k[0]});              // k0: count 4, stamp 3 -- now k1 is both older and rarer
    batch({k[1]});              // k1: count 2, stamp 4 -- k0 older, k1 rarer
    batch({k[2]});              // the victim: lru k0 (stamp 3 < 4), lfu k1 (count 2 < 4)
    const int64_t survivor = policy == CachePolicy::kLru ? k[1] : k[0];
    const int64_t evicted = policy == CachePolicy::kLru ? k[0] : k[1];
    EXPECT_GE(cache.find(survivor), 0) << cache_policy_name(policy);
    EXPECT_LT(cache.find(evicted), 0) << cache_policy_name(policy);
    EXPECT_GE(cache.find(k[2]), 0);
    EXPECT_EQ(cache.clock(), 5u);
  }
}

TEST(EmbeddingCache, InsertsDoNotDependOnTheOrderOfTheBatch) {
  const Store store(5000, 4);
  std::vector<int64_t> keys(300);
  std::mt19937 gen(11);
  for (int64_t& k : keys) k = static_cast<int64_t>(gen() % 5000);
  for (CachePolicy policy : {CachePolicy::kLru, CachePolicy::kLfu}) {
    EmbeddingCache a(70, 4, policy), b(70, 4, policy);  // 2 sets of 32: many evictions within the batch
    std::vector<int64_t> shuffled = keys;
    std::shuffle(shuffled.begin(), shuffled.end(), gen);
    std::vector<float> out(keys.size() * 4);
    a.lookup(static_cast<int64_t>(keys.size()), keys.data(), out.data(), store);
    a.insert_misses(store);
    b.lookup(static_cast<int64_t>(keys.size()), shuffled.data(), out.data(), store);
    b.insert_misses(store);
    EXPECT_EQ(a.keys(), b.keys());
    EXPECT_EQ(a.counts(), b.counts());
    EXPECT_EQ(a.values(), b.values());
  }
}

TEST(EmbeddingCache, StaticNeverInsertsAndAPrefillSkipsFullSets) {
  const Store store(1000, 1);
  EmbeddingCache cache(3, 1, CachePolicy::kStatic);  // one set of three ways
  const std::vector<int64_t> hot = {10, 20, 30, 40, 50};
  EXPECT_EQ(cache.prefill(hot, {9, 8, 7, 6, 5}, store), 3);
  EXPECT_GE(cache.find(30), 0);
  EXPECT_LT(cache.find(40), 0) << "the set was full";
  std::vector<int64_t> keys = {40, 10, 999};
  std::vector<float> out(3);
  const cpu::CacheLookupStats s = cache.lookup(3, keys.data(), out.data(), store);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(cache.insert_misses(store), 0);
  EXPECT_LT(cache.find(40), 0);
  EXPECT_EQ(cache.counts()[static_cast<size_t>(cache.find(10))], 10u) << "prefill count 9 and one hit";
}

TEST(EmbeddingCache, AnUpdateReachesACachedCopyOnly) {
  Store store(100, 2);
  EmbeddingCache cache(8, 2, CachePolicy::kLru);
  std::vector<int64_t> keys = {3};
  std::vector<float> out(2);
  cache.lookup(1, keys.data(), out.data(), store);
  cache.insert_misses(store);
  const float fresh[2] = {-1.0f, -2.0f};
  EXPECT_TRUE(cache.update(3, fresh));
  EXPECT_FALSE(cache.update(4, fresh));
  cache.lookup(1, keys.data(), out.data(), store);
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[1], -2.0f);
}

}  // namespace
}  // namespace perflab::kernels
