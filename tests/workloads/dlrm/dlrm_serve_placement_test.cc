// DLRM serving's placements on the CPU (workloads/dlrm/serve/): every
// placement predicts what the model predicts, bit for bit (rows are copied,
// never recomputed), at odd sizes, with ids the training data never holds,
// duplicate ids within a batch, a cache of one row and a cache larger than
// every table; the counters add up; an update queued before a batch is in
// that batch's predictions, cached or not; the serving parameters refuse
// bad values in one line.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "harness/params.h"
#include "tests/workloads/dlrm/tiny_dlrm.h"
#include "workloads/dlrm/serve/row_updates.h"
#include "workloads/dlrm/serve/serve_engine.h"
#include "workloads/dlrm/serve/serve_options.h"

namespace perflab::dlrm {
namespace {

constexpr int kDim = 5;  // odd: no vector width divides it
constexpr uint64_t kSeed = 9;

std::unique_ptr<CpuModel> tiny_model() { return std::make_unique<CpuModel>(tiny_shape(kDim), kSeed); }


ServeOptions cached(int64_t rows, kernels::CachePolicy policy, bool warm = true) {
  ServeOptions o;
  o.placement = Placement::kHotCache;
  o.cache_rows = rows;
  o.cache_capacity = std::to_string(rows);
  o.policy = policy;
  o.warm = warm;
  return o;
}

/// Training data that never looks up row 4 of table 0 or row 6 of table 1.
Dataset train_without_some_ids() {
  Dataset d = tiny_data(64, 21);
  for (size_t i = 0; i < d.categorical.size(); i += 3) {
    if (d.categorical[i] == 4) d.categorical[i] = 0;
    if (d.categorical[i + 1] == 6) d.categorical[i + 1] = 1;
  }
  return d;
}

TEST(DlrmServePlacement, EveryPlacementPredictsWhatTheModelPredictsBitForBit) {
  using kernels::CachePolicy;
  const Dataset samples = tiny_data(61, 3);
  const Dataset train = train_without_some_ids();
  const int total_rows = 5 + 7 + 3;
  std::vector<std::pair<std::string, ServeOptions>> placements = {
      {"all_device", ServeOptions{}},
      {"host", [] { ServeOptions o; o.placement = Placement::kHost; return o; }()},
      {"lru 1 row", cached(1, CachePolicy::kLru)},
      {"lfu 1 row cold", cached(1, CachePolicy::kLfu, false)},
      {"static 4 rows", cached(4, CachePolicy::kStatic)},
      {"lru 7 rows cold", cached(7, CachePolicy::kLru, false)},
      {"lfu larger than the tables", cached(10 * total_rows, CachePolicy::kLfu)},
  };
  CpuModel model(tiny_shape(kDim), kSeed);
  for (const auto& [name, options] : placements) {
    DlrmCpuEngine engine(tiny_model(), samples, train, options, 13, kSeed);
    // Odd batch sizes, duplicates, the unseen ids (samples hold every id of these tiny tables).
    const std::vector<std::vector<size_t>> batches = {
        {7, 3, 3, 60, 0}, {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {5, 5, 5, 5}, {59, 31, 2, 44, 17, 8, 8}};
    for (int round = 0; round < 3; ++round) {
      for (const std::vector<size_t>& batch : batches) {
        std::vector<float> got(batch.size());
        engine.predict(batch, got.data());
        ASSERT_EQ(got, tiny_predictions(model, samples, batch)) << name << ", round " << round;
      }
    }
    const ServeCounters& c = engine.counters();
    EXPECT_EQ(c.batches, 15) << name;
    EXPECT_EQ(c.lookups, c.samples * 3) << name;
    int64_t table_lookups = 0, table_hits = 0;
    for (size_t t = 0; t < 3; ++t) {
      table_lookups += c.table_lookups[t];
      table_hits += c.table_hits[t];
    }
    EXPECT_EQ(table_lookups, c.lookups) << name;
    EXPECT_EQ(table_hits, c.hits) << name;
    if (options.placement != Placement::kHotCache) {
      EXPECT_EQ(c.hits, 0) << name;
      EXPECT_EQ(c.host_embedding_bytes, static_cast<double>(c.lookups) * kDim * 4) << name;
    } else {
      EXPECT_EQ(c.host_embedding_bytes, static_cast<double>(c.lookups - c.hits) * kDim * 4) << name;
      EXPECT_GT(c.hits, 0) << name;
    }
    if (name == "lfu larger than the tables") {
      // Every row fits: after the first batch only the rows first seen miss, and each misses once.
      EXPECT_LE(c.lookups - c.hits, total_rows) << name;
    }
    const nlohmann::json report = engine.report();
    EXPECT_EQ(report["placement"], placement_name(options.placement));
    EXPECT_EQ(report["counters"]["table_hit_rate"].size(), 3u);
  }
}

TEST(DlrmServePlacement, AnUpdateQueuedBeforeABatchIsInItsPredictions) {
  const Dataset samples = tiny_data(40, 4);
  for (const ServeOptions& base : {ServeOptions{}, cached(15, kernels::CachePolicy::kLru)}) {
    ServeOptions options = base;
    options.update_rate = 1;  // the stream exists; the test pushes by hand and never starts its thread
    DlrmCpuEngine engine(tiny_model(), samples, samples, options, 8, kSeed);
    CpuModel model(tiny_shape(kDim), kSeed);
    const std::vector<size_t> batch = {0, 1, 2, 3};
    std::vector<float> got(batch.size());
    engine.predict(batch, got.data());  // the rows are cached now (hot_cache)
    ASSERT_EQ(got, tiny_predictions(model, samples, batch));
    // Update the row sample 0 reads in table 1 (key 5 + id) twice.
    const int32_t id = samples.categorical[1];
    RowUpdateStream& stream = *engine.updates();
    stream.push(5 + id);
    stream.push(5 + id);
    float* row = model.embedding_row(1, id);
    for (uint64_t sequence = 0; sequence < 2; ++sequence) {
      for (int64_t c = 0; c < kDim; ++c) row[c] += update_delta(stream.seed(), sequence, c);
    }
    engine.predict(batch, got.data());
    EXPECT_EQ(got, tiny_predictions(model, samples, batch)) << placement_name(options.placement);
    EXPECT_NE(got[0], tiny_predictions(*tiny_model(), samples, batch)[0]) << "the update changed sample 0's prediction";
    EXPECT_EQ(engine.counters().updates, 2);
  }
}

TEST(DlrmServePlacement, TheUpdateStreamQueuesAtItsRate) {
  RowUpdateStream stream(1e6, 3, [](uint64_t draw) { return static_cast<int64_t>(draw % 10); });
  const auto t0 = std::chrono::steady_clock::now();
  stream.start();
  std::vector<PendingUpdate> got;
  // Until the first update arrives; the deadline only bounds a hang (a
  // loaded machine may starve the producer thread for seconds).
  const auto deadline = t0 + std::chrono::seconds(60);
  while (got.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stream.take(got);
  }
  stream.stop();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(got.empty()) << "no update in 60 s at a million rows per second";
  EXPECT_LE(static_cast<double>(got.size()), 1e6 * elapsed + 1) << "more updates than the rate allows";
  for (const PendingUpdate& u : got) {
    EXPECT_GE(u.queued, t0) << "stamped with the time it was due, never before the start";
  }
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].sequence, i);
    EXPECT_GE(got[i].key, 0);
    EXPECT_LT(got[i].key, 10);
  }
  EXPECT_EQ(update_delta(3, 7, 2), update_delta(3, 7, 2));
  EXPECT_NE(update_delta(3, 7, 2), update_delta(3, 8, 2));
  EXPECT_LT(std::abs(update_delta(3, 7, 2)), 0.01f);
}

TEST(DlrmServePlacement, TheMostFrequentRowsComeByCountThenKey) {
  const Dataset train = tiny_data(200, 8);  // tables of 5, 7 and 3 rows: keys 0-4, 5-11, 12-14
  std::map<int64_t, uint64_t> counted;
  for (size_t i = 0; i < train.categorical.size(); ++i) {
    ++counted[table_row_offsets(train.table_sizes)[i % 3] + train.categorical[i]];
  }
  const RowFrequency all = most_frequent_rows(train, 100);
  ASSERT_EQ(all.keys.size(), counted.size()) << "every row looked up, once";
  for (size_t i = 0; i < all.keys.size(); ++i) {
    EXPECT_EQ(all.counts[i], counted.at(all.keys[i])) << "key " << all.keys[i];
    if (i > 0) {
      EXPECT_TRUE(all.counts[i - 1] > all.counts[i] || (all.counts[i - 1] == all.counts[i] && all.keys[i - 1] < all.keys[i]))
          << "position " << i;
    }
  }
  const RowFrequency top = most_frequent_rows(train, 4);
  ASSERT_EQ(top.keys.size(), 4u);
  EXPECT_EQ(std::vector<int64_t>(all.keys.begin(), all.keys.begin() + 4), top.keys);
}

ParamValues params(const std::map<std::string, std::string>& overrides) {
  return resolve_params("dlrm", serve_params(), nullptr, overrides);
}

TEST(DlrmServePlacement, CacheCapacityIsReadAsRowsBytesOrAShare) {
  const ModelShape shape = tiny_shape(4);  // 15 rows of 16 bytes
  const struct {
    const char* text;
    int64_t rows;
  } cases[] = {{"7", 7}, {"160B", 10}, {"1KiB", 64}, {"20%", 3}, {"100%", 15}, {"1e3", 1000}};
  for (const auto& c : cases) {
    const ServeOptions o = parse_serve_options(params({{"placement", "hot_cache"}, {"cache_capacity", c.text}}), shape, true);
    EXPECT_EQ(o.cache_rows, c.rows) << c.text;
  }
}

TEST(DlrmServePlacement, BadServingParametersAreRefusedInOneLine) {
  const ModelShape shape = tiny_shape(4);
  const struct {
    std::map<std::string, std::string> set;
    bool serving;
    const char* expect;
  } cases[] = {
      {{{"placement", "hot_cache"}, {"cache_capacity", "0"}}, true, "not a positive number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "-3"}}, true, "not a positive number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "2.5"}}, true, "whole number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "4XB"}}, true, "unknown unit"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "8B"}}, true, "smaller than one row"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "150%"}}, true, "above 100%"},
      {{{"placement", "hot_cache"}, {"cache_policy", "static"}, {"cache_warm", "empty"}}, true, "static never inserts"},
      {{{"placement", "host"}}, false, "placement applies to --mode inference"},
      {{{"update_rate", "10"}}, false, "update_rate applies to --mode inference"},
      {{{"save_model", "/tmp/x"}}, true, "save_model writes a trained model"},
      {{{"placement", "host"}, {"cache_capacity", "10%"}}, true, "cache_capacity applies to placement=hot_cache, not host"},
      {{{"cache_policy", "lru"}}, true, "cache_policy applies to placement=hot_cache, not all_device"},
      {{{"placement", "hot_cache"}, {"cache_capacity", " 7"}}, true, "not a positive number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "+7"}}, true, "not a positive number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "0x10"}}, true, "not a decimal number"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "1e400"}}, true, "too large"},
      {{{"placement", "hot_cache"}, {"cache_capacity", "nan"}}, true, "not a positive number"},
  };
  for (const auto& c : cases) {
    try {
      parse_serve_options(params(c.set), shape, c.serving);
      FAIL() << "accepted: " << c.expect;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(params({{"cache_policy", "fifo"}}), UsageError) << "an unknown policy";
  EXPECT_THROW(params({{"placement", "gpu"}}), UsageError) << "an unknown placement";
}

}  // namespace
}  // namespace perflab::dlrm
