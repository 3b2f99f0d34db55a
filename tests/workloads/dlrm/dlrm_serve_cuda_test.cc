// DLRM serving on the GPU (workloads/dlrm/serve/cuda_engine.h), skipped
// without a device: every placement (all_device, host, hot_cache lru, lfu,
// static, of one row and larger than the tables) predicts the same bits as
// every other (the rows are copies; the dense network is the same), and
// agrees with the CPU model within TF32's rounding; the GPU cache hits
// exactly as often, per table, as the CPU engine's cache on the same batches
// (same geometry, victims and insert order); an update queued before a
// batch is in its predictions on every placement.
//
// Tolerance against the CPU: |p_gpu - p_cpu| <= 2e-3. The logit goes
// through 4 TF32 GEMMs (inputs rounded to 10-bit mantissas, unit roundoff
// 2^-11, i.e. ~5e-4 relative per product) over sums of at most 16 terms
// of magnitude below 1 in this tiny model (a bound of ~4 x 2 x 5e-4 = 4e-3
// on the logit), and σ's slope is at most 1/4: 1e-3, doubled for the
// interaction's products, which are not rounded on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tests/workloads/dlrm/tiny_dlrm.h"
#include "workloads/dlrm/serve/serve_engine.h"
#include "workloads/dlrm/serve/serve_options.h"

#ifdef PERFLAB_DLRM_CUDA
#include "tests/support/cuda_device.h"
#include "workloads/dlrm/serve/cuda_engine.h"
#endif

namespace perflab::dlrm {
namespace {

#ifndef PERFLAB_DLRM_CUDA

TEST(DlrmServeCuda, Skipped) { GTEST_SKIP() << "built without CUDA"; }

#else

constexpr int kDim = 5;
constexpr uint64_t kSeed = 9;
constexpr double kTolerance = 2e-3;

ServeOptions placed(Placement p, int64_t rows = 0, kernels::CachePolicy policy = kernels::CachePolicy::kLru,
                    bool warm = true) {
  ServeOptions o;
  o.placement = p;
  o.cache_rows = rows;
  o.cache_capacity = std::to_string(rows);
  o.policy = policy;
  o.warm = warm;
  return o;
}

std::unique_ptr<CpuModel> tiny_model() { return std::make_unique<CpuModel>(tiny_shape(kDim), kSeed); }

const std::vector<std::vector<size_t>>& batches() {
  static const std::vector<std::vector<size_t>> b = {
      {7, 3, 3, 60, 0}, {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {5, 5, 5, 5}, {59, 31, 2, 44, 17, 8, 8}};
  return b;
}

TEST(DlrmServeCuda, EveryPlacementPredictsTheSameBitsAndHitsAsTheCpuCache) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  using kernels::CachePolicy;
  const Dataset samples = tiny_data(61, 3);
  const Dataset train = tiny_data(64, 21);
  const int total_rows = 5 + 7 + 3;
  const std::vector<std::pair<std::string, ServeOptions>> placements = {
      {"all_device", placed(Placement::kAllDevice)},
      {"host", placed(Placement::kHost)},
      {"lru 1 row", placed(Placement::kHotCache, 1, CachePolicy::kLru)},
      {"lfu 7 rows cold", placed(Placement::kHotCache, 7, CachePolicy::kLfu, false)},
      {"static 4 rows", placed(Placement::kHotCache, 4, CachePolicy::kStatic)},
      {"lfu larger than the tables", placed(Placement::kHotCache, 10 * total_rows, CachePolicy::kLfu)},
  };
  CpuModel model(tiny_shape(kDim), kSeed);
  std::vector<std::vector<float>> first;  // the first placement's predictions, batch by batch
  for (const auto& [name, options] : placements) {
    SCOPED_TRACE(name);
    auto gpu = make_dlrm_cuda_engine(tiny_model(), samples, train, options, 13, kSeed, CudaServeSettings{});
    DlrmCpuEngine cpu(tiny_model(), samples, train, options, 13, kSeed);
    size_t k = 0;
    for (int round = 0; round < 3; ++round) {
      for (const std::vector<size_t>& batch : batches()) {
        std::vector<float> got(batch.size()), cpu_got(batch.size());
        gpu->predict(batch, got.data());
        cpu.predict(batch, cpu_got.data());
        const std::vector<float> want = tiny_predictions(model, samples, batch);
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], kTolerance) << "sample " << batch[i];
        if (first.size() <= k) first.push_back(got);
        EXPECT_EQ(got, first[k]) << "placements disagree on batch " << k;
        ++k;
      }
    }
    const nlohmann::json g = gpu->report()["counters"];
    const nlohmann::json c = cpu.report()["counters"];
    EXPECT_EQ(g["lookups"], c["lookups"]);
    EXPECT_EQ(g["hits"], c["hits"]);
    EXPECT_EQ(g["table_hit_rate"], c["table_hit_rate"]);
    EXPECT_EQ(g["inserted"], c["inserted"]);
    if (options.placement == Placement::kAllDevice) {
      EXPECT_EQ(g["host_embedding_bytes_per_sample"], 0.0);
    }
  }
}

TEST(DlrmServeCuda, AnUpdateQueuedBeforeABatchIsInItsPredictions) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Dataset samples = tiny_data(40, 4);
  for (const ServeOptions& base : {placed(Placement::kAllDevice), placed(Placement::kHost),
                                   placed(Placement::kHotCache, 15, kernels::CachePolicy::kLru)}) {
    SCOPED_TRACE(placement_name(base.placement));
    ServeOptions options = base;
    options.update_rate = 1;
    auto gpu = make_dlrm_cuda_engine(tiny_model(), samples, samples, options, 8, kSeed, CudaServeSettings{});
    DlrmCpuEngine cpu(tiny_model(), samples, samples, options, 8, kSeed);
    const std::vector<size_t> batch = {0, 1, 2, 3};
    std::vector<float> before(batch.size()), got(batch.size()), want(batch.size());
    gpu->predict(batch, before.data());
    cpu.predict(batch, want.data());
    const int64_t key = 5 + samples.categorical[1];  // sample 0's row of table 1
    // The same update (sequence 0 of the same seed) to both engines.
    cpu.updates()->push(key);
    gpu->updates()->push(key);
    gpu->predict(batch, got.data());
    cpu.predict(batch, want.data());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], kTolerance);
    EXPECT_NE(got[0], before[0]) << "the update changed sample 0's prediction";
    EXPECT_EQ(gpu->report()["counters"]["updates"]["applied"], 1);
  }
}

#endif

}  // namespace
}  // namespace perflab::dlrm
