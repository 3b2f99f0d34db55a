#include "kernels/cpu/embedding_cache.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"

namespace perflab::kernels {

const char* cache_policy_name(CachePolicy p) {
  switch (p) {
    case CachePolicy::kStatic:
      return "static";
    case CachePolicy::kLru:
      return "lru";
    case CachePolicy::kLfu:
      return "lfu";
  }
  return "?";
}

bool parse_cache_policy(const std::string& name, CachePolicy* out) {
  for (CachePolicy p : {CachePolicy::kStatic, CachePolicy::kLru, CachePolicy::kLfu}) {
    if (name == cache_policy_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

CacheGeometry cache_geometry(int64_t capacity) {
  if (capacity < 1) throw UsageError("embedding cache: the capacity must be at least 1 row");
  CacheGeometry g;
  g.ways = static_cast<int>(std::min<int64_t>(kCacheMaxWays, capacity));
  g.sets = capacity / g.ways;
  return g;
}

namespace cpu {

EmbeddingCache::EmbeddingCache(int64_t capacity, int64_t dim, CachePolicy policy)
    : geometry_(cache_geometry(capacity)), dim_(dim), policy_(policy) {
  if (dim < 1) throw UsageError("embedding cache: rows must hold at least 1 value");
  const auto slots = static_cast<size_t>(geometry_.slots());
  keys_.assign(slots, kCacheEmpty);
  stamps_.assign(slots, 0);
  counts_.assign(slots, 0);
  values_.assign(slots * static_cast<size_t>(dim), 0.0f);
}

int64_t EmbeddingCache::occupied() const {
  return static_cast<int64_t>(std::count_if(keys_.begin(), keys_.end(), [](int64_t k) { return k != kCacheEmpty; }));
}

int64_t EmbeddingCache::find(int64_t key) const {
  const int64_t base = cache_set(key, geometry_.sets) * geometry_.ways;
  for (int w = 0; w < geometry_.ways; ++w) {
    if (keys_[static_cast<size_t>(base + w)] == key) return base + w;
  }
  return -1;
}

bool EmbeddingCache::update(int64_t key, const float* values) {
  const int64_t slot = find(key);
  if (slot < 0) return false;
  copy_row(values, &values_[static_cast<size_t>(slot * dim_)]);
  return true;
}

void EmbeddingCache::copy_row(const float* src, float* dst) const {
  std::memcpy(dst, src, static_cast<size_t>(dim_) * sizeof(float));
}

void EmbeddingCache::store(int64_t slot, int64_t key, uint32_t stamp, uint64_t count, const float* values) {
  const auto s = static_cast<size_t>(slot);
  keys_[s] = key;
  stamps_[s] = stamp;
  counts_[s] = count;
  copy_row(values, &values_[s * static_cast<size_t>(dim_)]);
}

const std::vector<std::pair<int64_t, uint64_t>>& EmbeddingCache::order_misses() {
  // Distinct misses with their counts (one sort of the keys), then those
  // ordered by (set, key): each key's set is hashed once, not per comparison.
  std::sort(misses_.begin(), misses_.end());
  by_set_.clear();
  for (size_t i = 0; i < misses_.size();) {
    size_t j = i;
    while (j < misses_.size() && misses_[j] == misses_[i]) ++j;
    by_set_.push_back({cache_set(misses_[i], geometry_.sets), misses_[i], static_cast<uint64_t>(j - i)});
    i = j;
  }
  std::sort(by_set_.begin(), by_set_.end(), [](const SetKey& a, const SetKey& b) {
    return a.set != b.set ? a.set < b.set : a.key < b.key;
  });
  order_.clear();
  for (const SetKey& k : by_set_) order_.emplace_back(k.key, k.count);
  return order_;
}

}  // namespace cpu
}  // namespace perflab::kernels
