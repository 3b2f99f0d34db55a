#include "workloads/dlrm/serve/serve_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/error.h"

namespace perflab::dlrm {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

nlohmann::json serve_counters_json(const ServeCounters& c, int64_t embed_dim) {
  const auto samples = static_cast<double>(c.samples);
  const auto batches = static_cast<double>(c.batches);
  nlohmann::json j;
  j["batches"] = c.batches;
  j["samples"] = c.samples;
  j["lookups"] = c.lookups;
  j["hits"] = c.hits;
  j["hit_rate"] = ratio(static_cast<double>(c.hits), static_cast<double>(c.lookups));
  nlohmann::json per_table = nlohmann::json::array();
  for (size_t t = 0; t < c.table_lookups.size(); ++t) {
    per_table.push_back(ratio(static_cast<double>(c.table_hits[t]), static_cast<double>(c.table_lookups[t])));
  }
  j["table_hit_rate"] = per_table;
  j["inserted"] = c.inserted;
  j["host_embedding_bytes_per_sample"] = ratio(c.host_embedding_bytes, samples);
  j["input_bytes_per_sample"] = ratio(c.input_bytes, samples);
  j["row_bytes"] = embed_dim * static_cast<int64_t>(sizeof(float));
  j["updates"] = {{"applied", c.updates},
                  {"max_staleness_ms", c.max_update_staleness_s * 1e3},
                  {"left_unapplied", c.updates_left}};
  const std::pair<const char*, double> parts[] = {
      {"updates", c.updates_s}, {"copies", c.copies_s}, {"lookup", c.lookup_s},
      {"insert", c.insert_s},   {"dense", c.dense_s}};
  nlohmann::json total, per_batch;
  for (const auto& [name, s] : parts) {
    total[name] = s;
    per_batch[name] = ratio(s, batches) * 1e3;
  }
  j["time_s"] = total;
  j["time_per_batch_ms"] = per_batch;
  return j;
}

DlrmCpuEngine::DlrmCpuEngine(std::unique_ptr<CpuModel> model, const Dataset& samples, const Dataset& train,
                             const ServeOptions& options, int64_t max_batch, uint64_t seed)
    : model_(std::move(model)), samples_(samples), options_(options), max_batch_(max_batch) {
  const ModelShape& shape = model_->shape();
  if (max_batch < 1) throw UsageError(fmt::format("dlrm serving: max_batch must be at least 1, got {}", max_batch));
  if (samples.size() < 1) throw UsageError("dlrm serving: the sample library is empty");
  if (samples.num_dense != shape.num_dense || samples.table_sizes != shape.table_sizes) {
    throw UsageError(fmt::format(
        "dlrm serving: the samples do not fit the model ({} dense features and {} tables, the model has {} and {})",
        samples.num_dense, samples.num_tables(), shape.num_dense, shape.table_sizes.size()));
  }
  samples.validate();
  if (options.placement == Placement::kHotCache && options.warm && train.table_sizes != shape.table_sizes) {
    throw UsageError("dlrm serving: the training data (the cache's prefill) does not fit the model's tables");
  }
  const auto tables = shape.table_sizes.size();
  offsets_ = table_row_offsets(shape.table_sizes);
  for (size_t t = 0; t < tables; ++t) tables_.push_back(model_->embedding_row(static_cast<int>(t), 0));
  dense_.resize(static_cast<size_t>(max_batch * shape.num_dense));
  categorical_.resize(static_cast<size_t>(max_batch) * tables);
  keys_.resize(categorical_.size());
  hit_.resize(categorical_.size());
  model_->reserve_batch(max_batch);
  counters_.table_lookups.assign(tables, 0);
  counters_.table_hits.assign(tables, 0);
  if (options.placement == Placement::kHotCache) {
    cache_.emplace(options.cache_rows, shape.embed_dim, options.policy);
    if (options.warm) {
      // Twice the capacity in candidates: a set that is full skips the rest.
      const RowFrequency hot = most_frequent_rows(train, 2 * cache_->geometry().slots());
      prefilled_ = cache_->prefill(hot.keys, hot.counts, [this](int64_t key) { return row(key); });
    }
  }
  if (options.update_rate > 0) {
    // Rows drawn as the served samples draw them: hot rows more often.
    const auto n = static_cast<uint64_t>(samples.categorical.size());
    updates_ = std::make_unique<RowUpdateStream>(options.update_rate, seed, [this, n, tables](uint64_t draw) {
      const uint64_t i = draw % n;
      return offsets_[i % tables] + samples_.categorical[i];
    });
  }
}

const float* DlrmCpuEngine::row(int64_t key) const {
  const auto t = static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), key) - offsets_.begin() - 1);
  return tables_[t] + (key - offsets_[t]) * model_->shape().embed_dim;
}

float* DlrmCpuEngine::row(int64_t key) {
  return const_cast<float*>(static_cast<const DlrmCpuEngine*>(this)->row(key));
}

void DlrmCpuEngine::begin_test() {
  if (updates_) updates_->start();
}

void DlrmCpuEngine::end_test() {
  if (!updates_) return;
  updates_->stop();
  counters_.updates_left = static_cast<int64_t>(updates_->queued());  // arrived after the last batch
}

void DlrmCpuEngine::apply_updates() {
  if (!updates_) return;
  updates_->take(pending_);
  if (pending_.empty()) return;
  const int64_t dim = model_->shape().embed_dim;
  const bool bf16 = model_->precision() == CpuPrecision::kBf16;
  const int64_t total_rows = offsets_.back() + model_->shape().table_sizes.back();
  for (const PendingUpdate& u : pending_) {
    check_update_key(u, total_rows);
    float* r = row(u.key);
    const double waited = apply_update(u, updates_->seed(), r, dim, bf16);
    if (cache_) cache_->update(u.key, r);
    counters_.max_update_staleness_s = std::max(counters_.max_update_staleness_s, waited);
  }
  counters_.updates += static_cast<int64_t>(pending_.size());
}

void DlrmCpuEngine::gather(int64_t n, float* emb) {
  const auto tables = offsets_.size();
  const auto lookups = static_cast<size_t>(n) * tables;
  const int64_t dim = model_->shape().embed_dim;
  const double row_bytes = static_cast<double>(dim) * sizeof(float);
  for (size_t i = 0; i < lookups; ++i) keys_[i] = offsets_[i % tables] + categorical_[i];
  counters_.lookups += static_cast<int64_t>(lookups);
  for (size_t i = 0; i < lookups; ++i) ++counters_.table_lookups[i % tables];
  auto t0 = Clock::now();
  if (!cache_) {
    for (size_t i = 0; i < lookups; ++i) {
      std::memcpy(emb + static_cast<int64_t>(i) * dim, row(keys_[i]), static_cast<size_t>(dim) * sizeof(float));
    }
    counters_.host_embedding_bytes += static_cast<double>(lookups) * row_bytes;
    counters_.lookup_s += since(t0);
    return;
  }
  auto from_tables = [this](int64_t key) { return static_cast<const float*>(row(key)); };
  const kernels::cpu::CacheLookupStats s =
      cache_->lookup(static_cast<int64_t>(lookups), keys_.data(), emb, from_tables, hit_.data());
  counters_.lookup_s += since(t0);
  counters_.hits += s.hits;
  counters_.host_embedding_bytes += static_cast<double>(s.misses) * row_bytes;
  for (size_t i = 0; i < lookups; ++i) counters_.table_hits[i % tables] += hit_[i];
  t0 = Clock::now();
  counters_.inserted += cache_->insert_misses(from_tables);
  counters_.insert_s += since(t0);
}

void DlrmCpuEngine::predict(const std::vector<size_t>& indices, float* out) {
  const auto n = static_cast<int64_t>(indices.size());
  if (n == 0) return;
  if (n > max_batch_) {
    throw Error(fmt::format("dlrm serving: a batch of {} samples, above max_batch {}", n, max_batch_));
  }
  auto t0 = Clock::now();
  apply_updates();
  counters_.updates_s += since(t0);
  t0 = Clock::now();
  const auto dense = static_cast<size_t>(samples_.num_dense);
  const auto tables = static_cast<size_t>(samples_.num_tables());
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t s = indices[i];
    if (s >= static_cast<size_t>(samples_.size())) {
      throw Error(fmt::format("dlrm serving: sample {} is outside the library of {}", s, samples_.size()));
    }
    std::copy_n(samples_.dense.begin() + static_cast<std::ptrdiff_t>(s * dense), dense,
                dense_.begin() + static_cast<std::ptrdiff_t>(i * dense));
    std::copy_n(samples_.categorical.begin() + static_cast<std::ptrdiff_t>(s * tables), tables,
                categorical_.begin() + static_cast<std::ptrdiff_t>(i * tables));
  }
  counters_.input_bytes += static_cast<double>(n) * static_cast<double>(dense * sizeof(float) + tables * sizeof(int32_t));
  counters_.copies_s += since(t0);
  gather(n, model_->embeddings_buffer(n));
  t0 = Clock::now();
  model_->predict_external(BatchView{n, dense_.data(), categorical_.data(), nullptr}, out);
  counters_.dense_s += since(t0);
  ++counters_.batches;
  counters_.samples += n;
}

nlohmann::json DlrmCpuEngine::report() const {
  nlohmann::json j = serve_options_json(options_, Backend::kCpu);
  j["counters"] = serve_counters_json(counters_, model_->shape().embed_dim);
  if (cache_) {
    j["cache"]["prefilled"] = prefilled_;
    j["cache"]["occupied_at_end"] = cache_->occupied();
  }
  return j;
}

}  // namespace perflab::dlrm
