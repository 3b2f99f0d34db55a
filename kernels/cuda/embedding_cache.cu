// The hot-row embedding cache on the GPU (see embedding_cache.h).
#include "kernels/cuda/embedding_cache.h"

#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <limits>
#include <string>

#include "base/round_up.h"
#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest
constexpr size_t kAlign = 256;

using Key = unsigned long long;  // a global row; CUB sorts it, atomics want this type
using Count = unsigned long long;

unsigned blocks_for(int64_t work, int64_t per_block) {
  return static_cast<unsigned>(std::clamp<int64_t>((work + per_block - 1) / per_block, 1, kMaxBlocks));
}

/// Bits that hold every value up to and including `v`.
int bits_for(int64_t v) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= v) ++bits;
  return bits;
}

/// Copies `dim` floats from src to dst, the warp's lanes striding the row.
__device__ void warp_copy_row(const float* src, float* dst, int64_t dim, int lane) {
  for (int64_t c = lane; c < dim; c += 32) dst[c] = src[c];
}

/// The way of `key` in the set at `base` (-1 when absent), as every lane of a warp sees it.
__device__ int warp_find(const int64_t* keys, int64_t base, int ways, int64_t key, int lane) {
  const bool match = lane < ways && keys[base + lane] == key;
  const unsigned ballot = __ballot_sync(0xffffffffu, match);
  return ballot == 0 ? -1 : __ffs(static_cast<int>(ballot)) - 1;
}

/// Steps 1-2: a warp per slot i = b * T + t.
__global__ void cache_lookup_kernel(const int64_t* __restrict__ offsets, const int32_t* __restrict__ ids,
                                    int num_tables, int64_t slots, int64_t dim, const float* __restrict__ backing,
                                    int64_t* cache_keys, uint32_t* stamps, Count* counts,
                                    const float* __restrict__ values, int64_t sets, int ways, uint32_t clock,
                                    float* __restrict__ out, Count* table_hits, Key miss_sentinel,
                                    Key* __restrict__ miss_keys, int32_t* __restrict__ positions) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; i < slots; i += warps) {
    const int t = static_cast<int>(i % num_tables);
    const int64_t key = offsets[t] + ids[i];
    const int64_t base = cache_set(key, sets) * ways;
    const int way = warp_find(cache_keys, base, ways, key, lane);
    const float* src = nullptr;
    if (way >= 0) {
      const int64_t slot = base + way;
      src = values + slot * dim;
      if (lane == 0) {
        stamps[slot] = clock;  // every hit of this batch writes the same value
        atomicAdd(&counts[slot], Count{1});
        if (table_hits != nullptr) atomicAdd(&table_hits[t], Count{1});
        miss_keys[i] = miss_sentinel;
      }
    } else {
      src = backing + key * dim;  // over PCIe/C2C when backing is mapped host memory
      if (lane == 0) miss_keys[i] = static_cast<Key>(key);
    }
    if (lane == 0) positions[i] = static_cast<int32_t>(i);
    warp_copy_row(src, out + i * dim, dim, lane);
  }
}

/// Each distinct missed row's set (the hits' run and unused entries: `sets`, sorted last).
__global__ void cache_set_keys_kernel(const Key* __restrict__ unique, const int32_t* __restrict__ num_runs,
                                      Key miss_sentinel, int64_t n, int64_t sets, Key* __restrict__ set_keys,
                                      int32_t* __restrict__ run_index) {
  const int32_t runs = *num_runs;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const bool real = r < runs && unique[r] != miss_sentinel;
    set_keys[r] = real ? static_cast<Key>(cache_set(static_cast<int64_t>(unique[r]), sets)) : static_cast<Key>(sets);
    run_index[r] = static_cast<int32_t>(r);
  }
}

/// Step 3: the first thread of each set's run inserts the set's rows in order.
__global__ void cache_insert_kernel(const Key* __restrict__ set_keys, const int32_t* __restrict__ run_index,
                                    const Key* __restrict__ unique, const int32_t* __restrict__ run_counts,
                                    const int32_t* __restrict__ run_offsets, const int32_t* __restrict__ sorted_pos,
                                    int64_t n, int64_t sets, int ways, int policy, uint32_t clock, int64_t dim,
                                    const float* __restrict__ out, int64_t* cache_keys, uint32_t* stamps,
                                    uint64_t* counts, float* values, Count* inserted) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Key set = set_keys[i];
    if (set == static_cast<Key>(sets) || (i > 0 && set_keys[i - 1] == set)) continue;
    const int64_t base = static_cast<int64_t>(set) * ways;
    for (int64_t j = i; j < n && set_keys[j] == set; ++j) {
      const int32_t r = run_index[j];
      const int way = cache_victim(cache_keys + base, stamps + base, counts + base, ways,
                                   static_cast<CachePolicy>(policy));
      if (way < 0) continue;
      const int64_t slot = base + way;
      cache_keys[slot] = static_cast<int64_t>(unique[r]);
      stamps[slot] = clock;
      counts[slot] = static_cast<uint64_t>(run_counts[r]);
      const float* src = out + static_cast<int64_t>(sorted_pos[run_offsets[r]]) * dim;
      for (int64_t c = 0; c < dim; ++c) values[slot * dim + c] = src[c];
      if (inserted != nullptr) atomicAdd(inserted, Count{1});
    }
  }
}

/// A warp per updated row: its cached copy, if any, read again from backing.
__global__ void cache_refresh_kernel(const int64_t* __restrict__ keys, int64_t n, int64_t dim,
                                     const float* __restrict__ backing, const int64_t* cache_keys,
                                     float* values, int64_t sets, int ways) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; i < n; i += warps) {
    const int64_t base = cache_set(keys[i], sets) * ways;
    const int way = warp_find(cache_keys, base, ways, keys[i], lane);
    if (way >= 0) warp_copy_row(backing + keys[i] * dim, values + (base + way) * dim, dim, lane);
  }
}

/// Where each buffer sits in the workspace (byte offsets), for n = B*T slots.
struct Layout {
  size_t miss_keys = 0, positions = 0, sorted_keys = 0, sorted_pos = 0, unique = 0, run_counts = 0, num_runs = 0,
         run_offsets = 0, set_keys = 0, run_index = 0, sorted_set_keys = 0, sorted_run_index = 0;
  size_t temp = 0, temp_bytes = 0, total = 0;
};

Layout layout(int64_t slots, int key_bits, int set_bits) {
  const int n = static_cast<int>(slots);
  size_t sort_keys = 0, encode = 0, scan = 0, sort_sets = 0;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_keys, static_cast<const Key*>(nullptr),
                                                     static_cast<Key*>(nullptr), static_cast<const int32_t*>(nullptr),
                                                     static_cast<int32_t*>(nullptr), n, 0, key_bits));
  PERFLAB_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, encode, static_cast<const Key*>(nullptr),
                                                        static_cast<Key*>(nullptr), static_cast<int32_t*>(nullptr),
                                                        static_cast<int32_t*>(nullptr), n));
  PERFLAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const int32_t*>(nullptr),
                                                   static_cast<int32_t*>(nullptr), n));
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_sets, static_cast<const Key*>(nullptr),
                                                     static_cast<Key*>(nullptr), static_cast<const int32_t*>(nullptr),
                                                     static_cast<int32_t*>(nullptr), n, 0, set_bits));
  Layout l;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t offset = at;
    at += round_up(bytes, kAlign);
    return offset;
  };
  const auto count = static_cast<size_t>(slots);
  l.miss_keys = take(count * sizeof(Key));
  l.positions = take(count * sizeof(int32_t));
  l.sorted_keys = take(count * sizeof(Key));
  l.sorted_pos = take(count * sizeof(int32_t));
  l.unique = take(count * sizeof(Key));
  l.run_counts = take(count * sizeof(int32_t));
  l.num_runs = take(sizeof(int32_t));
  l.run_offsets = take(count * sizeof(int32_t));
  l.set_keys = take(count * sizeof(Key));
  l.run_index = take(count * sizeof(int32_t));
  l.sorted_set_keys = take(count * sizeof(Key));
  l.sorted_run_index = take(count * sizeof(int32_t));
  l.temp_bytes = std::max({sort_keys, encode, scan, sort_sets, size_t{1}});
  l.temp = take(l.temp_bytes);
  l.total = at;
  return l;
}

/// The workspace's layout: for the batch it was sized for, so a short batch
/// finds its buffers where workspace_bytes put them.
Layout layout_for(const EmbeddingCacheArguments& a) {
  // The same problem every batch: CUB's four size queries once, not twice per batch.
  // CUB's temporary storage depends on the device too.
  struct Key {
    int64_t slots;
    int key_bits, set_bits, device;
    bool operator==(const Key& o) const {
      return slots == o.slots && key_bits == o.key_bits && set_bits == o.set_bits && device == o.device;
    }
  };
  thread_local Key last{-1, 0, 0, -1};
  thread_local Layout cached;
  int device = 0;
  PERFLAB_CUDA_CHECK(cudaGetDevice(&device));
  const Key key{std::max(a.batch, a.workspace_batch) * a.num_tables, bits_for(a.total_rows),
                bits_for(a.cache.geometry.sets), device};
  if (!(key == last)) {
    cached = layout(key.slots, key.key_bits, key.set_bits);
    last = key;
  }
  return cached;
}

template <typename T>
T* at_offset(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

Status EmbeddingCache::can_implement(const EmbeddingCacheArguments& a) {
  if (a.batch < 1 || a.num_tables < 1 || a.dim < 1) {
    return Status::invalid("embedding cache: batch, num_tables and dim must be at least 1");
  }
  if (a.batch * a.num_tables > std::numeric_limits<int32_t>::max()) {
    return Status::invalid("embedding cache: batch * num_tables (" + std::to_string(a.batch * a.num_tables) +
                           ") must be below 2^31");
  }
  if (a.total_rows < a.num_tables || a.total_rows > (int64_t{1} << 62)) {
    return Status::invalid("embedding cache: total_rows must be at least one row per table and below 2^62");
  }
  const CacheGeometry& g = a.cache.geometry;
  if (g.sets < 1 || g.ways < 1 || g.ways > kCacheMaxWays) {
    return Status::invalid("embedding cache: the geometry needs at least one set and 1 to 32 ways");
  }
  if (a.table_row_offsets == nullptr || a.ids == nullptr || a.backing == nullptr || a.out == nullptr ||
      a.cache.keys == nullptr || a.cache.stamps == nullptr || a.cache.counts == nullptr || a.cache.values == nullptr) {
    return Status::invalid("embedding cache: a pointer is null");
  }
  return Status::success();
}

size_t EmbeddingCache::workspace_bytes(const EmbeddingCacheArguments& a) { return layout_for(a).total; }

void EmbeddingCache::lookup(const EmbeddingCacheArguments& a, void* workspace, cudaStream_t stream) {
  const Layout l = layout_for(a);
  const int64_t slots = a.batch * a.num_tables;
  const CacheState& c = a.cache;
  cache_lookup_kernel<<<blocks_for(slots, kWarpsPerBlock), kThreads, 0, stream>>>(
      a.table_row_offsets, a.ids, a.num_tables, slots, a.dim, a.backing, c.keys, c.stamps,
      reinterpret_cast<Count*>(c.counts), c.values, c.geometry.sets, c.geometry.ways, a.clock, a.out,
      reinterpret_cast<Count*>(a.table_hits), static_cast<Key>(a.total_rows), at_offset<Key>(workspace, l.miss_keys),
      at_offset<int32_t>(workspace, l.positions));
  PERFLAB_CUDA_CHECK_LAUNCH("cache_lookup_kernel");
}

void EmbeddingCache::insert(const EmbeddingCacheArguments& a, void* workspace, cudaStream_t stream) {
  if (a.cache.policy == CachePolicy::kStatic) return;
  const Layout l = layout_for(a);
  const int64_t slots = a.batch * a.num_tables;
  const int n = static_cast<int>(slots);
  const CacheState& c = a.cache;
  auto* miss_keys = at_offset<Key>(workspace, l.miss_keys);
  auto* positions = at_offset<int32_t>(workspace, l.positions);
  auto* sorted_keys = at_offset<Key>(workspace, l.sorted_keys);
  auto* sorted_pos = at_offset<int32_t>(workspace, l.sorted_pos);
  auto* unique = at_offset<Key>(workspace, l.unique);
  auto* run_counts = at_offset<int32_t>(workspace, l.run_counts);
  auto* num_runs = at_offset<int32_t>(workspace, l.num_runs);
  auto* run_offsets = at_offset<int32_t>(workspace, l.run_offsets);
  auto* set_keys = at_offset<Key>(workspace, l.set_keys);
  auto* run_index = at_offset<int32_t>(workspace, l.run_index);
  auto* sorted_set_keys = at_offset<Key>(workspace, l.sorted_set_keys);
  auto* sorted_run_index = at_offset<int32_t>(workspace, l.sorted_run_index);
  void* temp = at_offset<void>(workspace, l.temp);
  size_t temp_bytes = l.temp_bytes;
  // The missed rows in order, their slots alongside (stable: a row's first slot first).
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, miss_keys, sorted_keys, positions, sorted_pos,
                                                     n, 0, bits_for(a.total_rows), stream));
  // Entries past the last run are never written by the encoding: zero them
  // so the scan below reads defined values.
  PERFLAB_CUDA_CHECK(cudaMemsetAsync(run_counts, 0, static_cast<size_t>(n) * sizeof(int32_t), stream));
  temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(
      cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, sorted_keys, unique, run_counts, num_runs, n, stream));
  temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, run_counts, run_offsets, n, stream));
  cache_set_keys_kernel<<<blocks_for(slots, kThreads), kThreads, 0, stream>>>(
      unique, num_runs, static_cast<Key>(a.total_rows), slots, c.geometry.sets, set_keys, run_index);
  PERFLAB_CUDA_CHECK_LAUNCH("cache_set_keys_kernel");
  temp_bytes = l.temp_bytes;
  PERFLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, set_keys, sorted_set_keys, run_index,
                                                     sorted_run_index, n, 0, bits_for(c.geometry.sets), stream));
  cache_insert_kernel<<<blocks_for(slots, kThreads), kThreads, 0, stream>>>(
      sorted_set_keys, sorted_run_index, unique, run_counts, run_offsets, sorted_pos, slots, c.geometry.sets,
      c.geometry.ways, static_cast<int>(c.policy), a.clock, a.dim, a.out, c.keys, c.stamps, c.counts, c.values,
      reinterpret_cast<Count*>(a.inserted));
  PERFLAB_CUDA_CHECK_LAUNCH("cache_insert_kernel");
}

void EmbeddingCache::refresh(const EmbeddingCacheArguments& a, const int64_t* keys, int64_t n, cudaStream_t stream) {
  if (n < 1) return;
  const CacheState& c = a.cache;
  cache_refresh_kernel<<<blocks_for(n, kWarpsPerBlock), kThreads, 0, stream>>>(
      keys, n, a.dim, a.backing, c.keys, c.values, c.geometry.sets, c.geometry.ways);
  PERFLAB_CUDA_CHECK_LAUNCH("cache_refresh_kernel");
}

LaunchList EmbeddingCache::lookup_launches(const EmbeddingCacheArguments& a) {
  const double slots = static_cast<double>(a.batch * a.num_tables);
  const double row = static_cast<double>(a.dim) * sizeof(float);
  // Every slot reads its id, its set's keys and a row, and writes a row.
  return {{"cache_lookup_kernel", "hot-row cache lookup (hits from the cache, misses from host memory)", "",
           {slots * (sizeof(int32_t) + a.cache.geometry.ways * sizeof(int64_t) + 2 * row), 0, ""}}};
}

LaunchList EmbeddingCache::insert_launches(const EmbeddingCacheArguments& a) {
  if (a.cache.policy == CachePolicy::kStatic) return {};
  const double n = static_cast<double>(a.batch * a.num_tables);
  const double pair = sizeof(Key) + sizeof(int32_t);
  return {{"DeviceRadixSort", "sort the missed rows with their slots", "", {2 * n * pair, 0, ""}},
          {"memset", "zero the run counts", "", {n * sizeof(int32_t), 0, ""}},
          {"DeviceRunLengthEncode", "distinct missed rows and their counts", "", {n * (2 * sizeof(Key) + 4), 0, ""}},
          {"DeviceScan", "each distinct row's first slot", "", {2 * n * sizeof(int32_t), 0, ""}},
          {"cache_set_keys_kernel", "each distinct row's set", "", {n * (2 * sizeof(Key) + 4), 0, ""}},
          {"DeviceRadixSort", "sort the distinct rows by set", "", {2 * n * pair, 0, ""}},
          {"cache_insert_kernel", "insert each set's rows in order (victims by policy)", "",
           {n * (pair + 3 * sizeof(int32_t)), 0, ""}}};
}

}  // namespace perflab::kernels::cuda
