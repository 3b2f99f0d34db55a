// The GPU hot-row cache (kernels/cuda/embedding_cache.h) against its CPU
// reference (kernels/cpu/embedding_cache.h): over a sequence of batches with
// skewed, duplicated ids at odd sizes, every lookup's output and, after each
// insert, every slot's key, stamp, count and values equal the reference's
// exactly (the rows are copies and the inserts follow the same order), for
// lru, lfu and a prefilled static cache, a cache of one row and one larger
// than every table; backing rows in pinned, mapped host memory, as the
// serving engine keeps them. A refresh re-reads exactly the cached rows
// that changed. Skipped without a device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/embedding_cache.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding_cache.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

struct Case {
  std::string name;
  int64_t capacity;
  CachePolicy policy;
  bool prefill;
};

TEST(EmbeddingCacheCuda, MatchesTheCpuReferenceBatchByBatch) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const std::vector<int64_t> table_sizes = {37, 5, 301, 1};  // odd sizes, a one-row table
  const int num_tables = static_cast<int>(table_sizes.size());
  const int64_t dim = 5, batch = 23;
  std::vector<int64_t> offsets(table_sizes.size(), 0);
  for (size_t t = 1; t < table_sizes.size(); ++t) offsets[t] = offsets[t - 1] + table_sizes[t - 1];
  const int64_t total_rows = offsets.back() + table_sizes.back();
  PinnedBuffer<float> backing(static_cast<size_t>(total_rows * dim));
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (size_t i = 0; i < backing.size(); ++i) backing.data()[i] = value(gen);
  float* mapped = nullptr;
  PERFLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), backing.data(), 0));
  auto row = [&](int64_t key) { return static_cast<const float*>(backing.data() + key * dim); };
  // Ids skewed toward small ones (a Zipf-like square), duplicates within a batch.
  auto batch_ids = [&](int b) {
    std::vector<int32_t> ids(static_cast<size_t>(batch * num_tables));
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t rows = table_sizes[i % table_sizes.size()];
      const double u = std::uniform_real_distribution<double>(0, 1)(gen);
      ids[i] = static_cast<int32_t>(static_cast<int64_t>(u * u * static_cast<double>(rows)) % rows);
      if (b % 4 == 3) ids[i] = 0;  // a batch of one hot row per table
    }
    return ids;
  };
  const Case cases[] = {{"lru 64", 64, CachePolicy::kLru, false},
                        {"lfu 70 prefilled", 70, CachePolicy::kLfu, true},
                        {"static 50 prefilled", 50, CachePolicy::kStatic, true},
                        {"lru 1", 1, CachePolicy::kLru, false},
                        {"lfu larger than the tables", 4 * total_rows, CachePolicy::kLfu, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cpu::EmbeddingCache ref(c.capacity, dim, c.policy);
    if (c.prefill) {
      std::vector<int64_t> hot;
      std::vector<uint64_t> counts;
      for (int64_t k = 0; k < total_rows; k += 3) {
        hot.push_back(k);
        counts.push_back(static_cast<uint64_t>(1000 - k));
      }
      ref.prefill(hot, counts, row);
    }
    DeviceBuffer<int64_t> keys(ref.keys());
    DeviceBuffer<uint32_t> stamps(ref.stamps());
    DeviceBuffer<uint64_t> counts(ref.counts());
    DeviceBuffer<float> values(ref.values());
    DeviceBuffer<int64_t> offsets_dev(offsets);
    DeviceBuffer<int32_t> ids_dev(static_cast<size_t>(batch * num_tables));
    DeviceBuffer<float> out(static_cast<size_t>(batch * num_tables * dim));
    DeviceBuffer<uint64_t> table_hits(static_cast<size_t>(num_tables));
    table_hits.zero();
    EmbeddingCacheArguments a;
    a.batch = batch;
    a.num_tables = num_tables;
    a.dim = dim;
    a.total_rows = total_rows;
    a.table_row_offsets = offsets_dev.data();
    a.ids = ids_dev.data();
    a.backing = mapped;
    a.cache = {ref.geometry(), c.policy, keys.data(), stamps.data(), counts.data(), values.data()};
    a.out = out.data();
    a.table_hits = table_hits.data();
    ASSERT_TRUE(EmbeddingCache::can_implement(a)) << EmbeddingCache::can_implement(a).reason();
    DeviceBuffer<unsigned char> workspace(EmbeddingCache::workspace_bytes(a));
    std::vector<uint64_t> expect_hits(table_sizes.size(), 0);
    for (int b = 0; b < 12; ++b) {
      const std::vector<int32_t> ids = batch_ids(b);
      ids_dev.upload(ids);
      std::vector<int64_t> keys_host(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) keys_host[i] = offsets[i % table_sizes.size()] + ids[i];
      std::vector<float> expect(static_cast<size_t>(batch * num_tables * dim));
      std::vector<uint8_t> hit(ids.size());
      ref.lookup(static_cast<int64_t>(keys_host.size()), keys_host.data(), expect.data(), row, hit.data());
      for (size_t i = 0; i < hit.size(); ++i) expect_hits[i % table_sizes.size()] += hit[i];
      a.clock = ref.clock();
      EmbeddingCache::lookup(a, workspace.data(), nullptr);
      ASSERT_EQ(out.download(), expect) << "batch " << b << ": a row served differs";
      ref.insert_misses(row);
      EmbeddingCache::insert(a, workspace.data(), nullptr);
      ASSERT_EQ(keys.download(), ref.keys()) << "batch " << b;
      ASSERT_EQ(stamps.download(), ref.stamps()) << "batch " << b;
      ASSERT_EQ(counts.download(), ref.counts()) << "batch " << b;
      ASSERT_EQ(values.download(), ref.values()) << "batch " << b;
    }
    EXPECT_EQ(table_hits.download(), expect_hits);
    EXPECT_GT(ref.occupied(), 0);
  }
}

TEST(EmbeddingCacheCuda, ARefreshReReadsTheChangedCachedRowsOnly) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t dim = 3, total_rows = 40;
  PinnedBuffer<float> backing(static_cast<size_t>(total_rows * dim));
  for (size_t i = 0; i < backing.size(); ++i) backing.data()[i] = static_cast<float>(i);
  float* mapped = nullptr;
  PERFLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), backing.data(), 0));
  cpu::EmbeddingCache ref(8, dim, CachePolicy::kStatic);
  ref.prefill({1, 2, 3}, {3, 2, 1}, [&](int64_t k) { return static_cast<const float*>(backing.data() + k * dim); });
  DeviceBuffer<int64_t> keys(ref.keys());
  DeviceBuffer<uint32_t> stamps(ref.stamps());
  DeviceBuffer<uint64_t> counts(ref.counts());
  DeviceBuffer<float> values(ref.values());
  EmbeddingCacheArguments a;
  a.dim = dim;
  a.total_rows = total_rows;
  a.backing = mapped;
  a.cache = {ref.geometry(), CachePolicy::kStatic, keys.data(), stamps.data(), counts.data(), values.data()};
  for (int64_t k : {2, 9}) {
    for (int64_t c = 0; c < dim; ++c) backing.data()[k * dim + c] = -1.0f;
    ref.update(k, backing.data() + k * dim);
  }
  DeviceBuffer<int64_t> changed(std::vector<int64_t>{2, 9});
  EmbeddingCache::refresh(a, changed.data(), 2, nullptr);
  EXPECT_EQ(values.download(), ref.values());
}

}  // namespace
}  // namespace perflab::kernels::cuda
