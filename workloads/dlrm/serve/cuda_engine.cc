#include "workloads/dlrm/serve/cuda_engine.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "kernels/cpu/embedding_cache.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_cache.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/serve/row_updates.h"
#include "workloads/dlrm/serve/serve_engine.h"

namespace perflab::dlrm {
namespace {

namespace kc = kernels::cuda;
using Clock = std::chrono::steady_clock;

size_t as_size(int64_t n) { return static_cast<size_t>(n); }

float elapsed_ms(const kc::Event& from, const kc::Event& to) {
  float ms = 0;
  PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}

class DlrmCudaEngine final : public DlrmServeEngine {
 public:
  DlrmCudaEngine(std::unique_ptr<CpuModel> init, const Dataset& samples, const Dataset& train,
                 const ServeOptions& options, int64_t max_batch, uint64_t seed, const CudaServeSettings& settings)
      : samples_(samples),
        options_(options),
        shape_(init->shape()),
        max_batch_(max_batch),
        dim_(shape_.embed_dim),
        tables_(static_cast<int>(shape_.table_sizes.size())) {
    if (max_batch < 1) throw UsageError(fmt::format("dlrm serving: max_batch must be at least 1, got {}", max_batch));
    if (samples.size() < 1) throw UsageError("dlrm serving: the sample library is empty");
    if (samples.num_dense != shape_.num_dense || samples.table_sizes != shape_.table_sizes) {
      throw UsageError("dlrm serving: the samples do not fit the model");
    }
    samples.validate();
    offsets_ = table_row_offsets(shape_.table_sizes);
    total_rows_ = offsets_.back() + shape_.table_sizes.back();

    CudaModelOptions mo;
    mo.batch = max_batch;
    mo.precision = settings.bf16 ? kc::Precision::kBf16 : kc::Precision::kTf32;
    mo.fused = settings.fused;
    mo.external_embeddings = true;
    mo.interaction_tensor_cores = settings.interaction_tensor_cores;
    // One dense network per plan size (max_batch, then a quarter at a time
    // down to 1): a batch runs on the smallest that holds it, so a Server
    // batch of 3 does not pay for a full max_batch pass. They share nothing
    // but their initial parameters (serving never changes them).
    for (int64_t b = max_batch;; b = (b + 3) / 4) {
      mo.batch = b;
      models_.push_back(std::make_unique<CudaModel>(*init, mo));
      if (b == 1) break;
    }

    // The tables: on the GPU, or pinned (and mapped) in host memory.
    const auto floats = as_size(total_rows_ * dim_);
    host_tables_ = kc::PinnedBuffer<float>(floats);
    for (int t = 0; t < tables_; ++t) {
      std::memcpy(host_tables_.data() + offsets_[as_size(t)] * dim_, init->embedding_row(t, 0),
                  as_size(shape_.table_sizes[as_size(t)] * dim_) * sizeof(float));
    }
    init.reset();  // the parameters live on the GPU and in pinned memory now
    PERFLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_tables_), host_tables_.data(), 0));
    if (options.placement == Placement::kAllDevice) {
      device_tables_ = kc::DeviceBuffer<float>(floats);
      PERFLAB_CUDA_CHECK(cudaMemcpy(device_tables_.data(), host_tables_.data(), floats * sizeof(float),  // sync outside the iteration: setup
                                    cudaMemcpyHostToDevice));
    }
    offsets_dev_ = kc::DeviceBuffer<int64_t>(offsets_);
    dense_host_ = kc::PinnedBuffer<float>(as_size(max_batch * shape_.num_dense));
    ids_host_ = kc::PinnedBuffer<int32_t>(as_size(max_batch * tables_));
    logits_host_ = kc::PinnedBuffer<float>(as_size(max_batch));
    dense_dev_ = kc::DeviceBuffer<float>(as_size(max_batch * shape_.num_dense));
    dense_dev_.zero();  // padding rows: finite inputs whose outputs are dropped
    ids_dev_ = kc::DeviceBuffer<int32_t>(as_size(max_batch * tables_));
    ids_dev_.zero();
    logits_dev_ = kc::DeviceBuffer<float>(as_size(max_batch));
    table_hits_dev_ = kc::DeviceBuffer<uint64_t>(as_size(tables_));
    table_hits_dev_.zero();
    inserted_dev_ = kc::DeviceBuffer<uint64_t>(1);
    inserted_dev_.zero();
    bf16_ = settings.bf16;
    counters_.table_lookups.assign(as_size(tables_), 0);
    counters_.table_hits.assign(as_size(tables_), 0);

    if (options.placement == Placement::kHotCache) make_cache(train);
    if (options.update_rate > 0) {
      const auto n = static_cast<uint64_t>(samples.categorical.size());
      const auto t = static_cast<uint64_t>(tables_);
      updates_ = std::make_unique<RowUpdateStream>(options.update_rate, seed, [this, n, t](uint64_t draw) {
        const uint64_t i = draw % n;
        return offsets_[i % t] + samples_.categorical[i];
      });
      update_keys_host_ = kc::PinnedBuffer<int64_t>(kUpdateChunk);
      update_keys_dev_ = kc::DeviceBuffer<int64_t>(kUpdateChunk);
    }
    kc::counted_stream_synchronize(nullptr);  // setup: the uploads on the legacy stream are done
  }

  ~DlrmCudaEngine() override {
    cudaStreamSynchronize(side_.get());     // sync outside the iteration: destructor
    cudaStreamSynchronize(compute_.get());  // sync outside the iteration: destructor
  }

  std::string name() const override { return "perflab-dlrm-cuda"; }
  size_t total_samples() const override { return static_cast<size_t>(samples_.size()); }
  size_t performance_samples() const override { return static_cast<size_t>(samples_.size()); }
  RowUpdateStream* updates() override { return updates_.get(); }
  void begin_test() override {
    if (updates_) updates_->start();
  }
  void end_test() override {
    if (updates_) {
      updates_->stop();
      counters_.updates_left = static_cast<int64_t>(updates_->queued());  // arrived after the last batch
    }
    drain_insert();  // the last batch's insert, so its time is counted
  }

  void predict(const std::vector<size_t>& indices, float* out) override {
    const auto n = static_cast<int64_t>(indices.size());
    if (n == 0) return;
    if (n > max_batch_) throw Error(fmt::format("dlrm serving: a batch of {} samples, above max_batch {}", n, max_batch_));
    cudaStream_t s = compute_.get();
    // The previous batch's insert (off its critical path) must finish
    // before this batch's updates and lookup.
    drain_insert();
    auto t0 = Clock::now();
    PERFLAB_CUDA_CHECK(cudaEventRecord(update_start_.get(), s));
    const bool updated = apply_updates();
    PERFLAB_CUDA_CHECK(cudaEventRecord(update_end_.get(), s));
    counters_.updates_s += std::chrono::duration<double>(Clock::now() - t0).count();

    const auto dense = as_size(shape_.num_dense);
    const auto tables = as_size(tables_);
    for (size_t i = 0; i < indices.size(); ++i) {
      const size_t smp = indices[i];
      if (smp >= static_cast<size_t>(samples_.size())) {
        throw Error(fmt::format("dlrm serving: sample {} is outside the library of {}", smp, samples_.size()));
      }
      std::memcpy(dense_host_.data() + i * dense, samples_.dense.data() + smp * dense, dense * sizeof(float));
      std::memcpy(ids_host_.data() + i * tables, samples_.categorical.data() + smp * tables, tables * sizeof(int32_t));
      for (size_t t = 0; t < tables; ++t) ++counters_.table_lookups[t];
    }
    PERFLAB_CUDA_CHECK(cudaEventRecord(ev_[0].get(), s));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(dense_dev_.data(), dense_host_.data(), as_size(n) * dense * sizeof(float),
                                       cudaMemcpyHostToDevice, s));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(ids_dev_.data(), ids_host_.data(), as_size(n) * tables * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, s));
    PERFLAB_CUDA_CHECK(cudaEventRecord(ev_[1].get(), s));
    lookup(n, s);
    PERFLAB_CUDA_CHECK(cudaEventRecord(ev_[2].get(), s));
    if (cache_) {
      // Inserts on the side stream, overlapping the dense network: they read
      // the lookup's output, which the next lookup rewrites after waiting.
      PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), ev_[2].get(), 0));
      PERFLAB_CUDA_CHECK(cudaEventRecord(insert_start_.get(), side_.get()));
      kc::EmbeddingCache::insert(cache_args(n), cache_workspace_.data(), side_.get());
      PERFLAB_CUDA_CHECK(cudaEventRecord(insert_end_.get(), side_.get()));
      insert_pending_ = true;  // the next predict waits for insert_end_ before its lookup
    }
    model_for(n).forward_logits(DeviceBatch{dense_dev_.data(), ids_dev_.data(), nullptr}, logits_dev_.data(), s);
    PERFLAB_CUDA_CHECK(cudaEventRecord(ev_[3].get(), s));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(logits_host_.data(), logits_dev_.data(), as_size(n) * sizeof(float),
                                       cudaMemcpyDeviceToHost, s));
    PERFLAB_CUDA_CHECK(cudaEventRecord(ev_[4].get(), s));
    PERFLAB_CUDA_CHECK(cudaEventSynchronize(ev_[4].get()));  // sync outside the iteration: the answer of this request
    for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-logits_host_.data()[i]));
    counters_.copies_s += (elapsed_ms(ev_[0], ev_[1]) + elapsed_ms(ev_[3], ev_[4])) / 1e3;
    if (updated) counters_.updates_s += elapsed_ms(update_start_, update_end_) / 1e3;  // their copies on the GPU
    counters_.lookup_s += elapsed_ms(ev_[1], ev_[2]) / 1e3;
    counters_.dense_s += elapsed_ms(ev_[2], ev_[3]) / 1e3;
    counters_.input_bytes += static_cast<double>(n) * static_cast<double>(dense * sizeof(float) + tables * sizeof(int32_t));
    counters_.lookups += n * tables_;
    ++counters_.batches;
    counters_.samples += n;
  }

  nlohmann::json report() const override {
    ServeCounters c = counters_;
    const std::vector<uint64_t> hits = table_hits_dev_.download();  // after the test
    c.hits = 0;
    c.inserted = static_cast<int64_t>(inserted_dev_.download().at(0));
    for (size_t t = 0; t < hits.size(); ++t) {
      c.table_hits[t] = static_cast<int64_t>(hits[t]);
      c.hits += c.table_hits[t];
    }
    const double row = static_cast<double>(dim_) * sizeof(float);
    c.host_embedding_bytes = options_.placement == Placement::kAllDevice ? 0.0 : static_cast<double>(c.lookups - c.hits) * row;
    nlohmann::json j = serve_options_json(options_, Backend::kCuda);
    j["counters"] = serve_counters_json(c, dim_);
    if (cache_) {
      j["cache"]["prefilled"] = prefilled_;
      const std::vector<int64_t> keys = cache_keys_.download();
      j["cache"]["occupied_at_end"] =
          std::count_if(keys.begin(), keys.end(), [](int64_t k) { return k != kernels::kCacheEmpty; });
    }
    return j;
  }

 private:
  static constexpr int64_t kUpdateChunk = 4096;

  void make_cache(const Dataset& train) {
    // The prefill is the CPU reference's (the same geometry and order), uploaded.
    kernels::cpu::EmbeddingCache ref(options_.cache_rows, dim_, options_.policy);
    if (options_.warm) {
      const RowFrequency hot = most_frequent_rows(train, 2 * ref.geometry().slots());
      prefilled_ = ref.prefill(hot.keys, hot.counts,
                               [this](int64_t key) { return static_cast<const float*>(host_tables_.data() + key * dim_); });
    }
    cache_keys_ = kc::DeviceBuffer<int64_t>(ref.keys());
    cache_stamps_ = kc::DeviceBuffer<uint32_t>(ref.stamps());
    cache_counts_ = kc::DeviceBuffer<uint64_t>(ref.counts());
    cache_values_ = kc::DeviceBuffer<float>(ref.values());
    cache_ = kc::CacheState{ref.geometry(), options_.policy, cache_keys_.data(), cache_stamps_.data(),
                            cache_counts_.data(), cache_values_.data()};
    const kc::EmbeddingCacheArguments a = cache_args(max_batch_);
    if (const kc::Status st = kc::EmbeddingCache::can_implement(a); !st) throw UsageError("dlrm serving: " + st.reason());
    cache_workspace_ = kc::DeviceBuffer<unsigned char>(kc::EmbeddingCache::workspace_bytes(a));
  }

  kc::EmbeddingCacheArguments cache_args(int64_t n) {
    kc::EmbeddingCacheArguments a;
    a.batch = n;
    a.num_tables = tables_;
    a.dim = dim_;
    a.total_rows = total_rows_;
    a.table_row_offsets = offsets_dev_.data();
    a.ids = ids_dev_.data();
    a.backing = mapped_tables_;
    a.cache = *cache_;
    a.clock = clock_;
    a.out = model_for(n).embedding_input();
    a.table_hits = table_hits_dev_.data();
    a.inserted = inserted_dev_.data();
    a.workspace_batch = max_batch_;
    return a;
  }

  void lookup(int64_t n, cudaStream_t s) {
    if (cache_) {
      ++clock_;
      kc::EmbeddingCache::lookup(cache_args(n), cache_workspace_.data(), s);
      return;
    }
    kc::EmbeddingArguments a;
    a.batch = n;
    a.num_tables = tables_;
    a.dim = dim_;
    a.total_rows = total_rows_;
    a.tables = options_.placement == Placement::kAllDevice ? device_tables_.data() : mapped_tables_;
    a.table_row_offsets = offsets_dev_.data();
    a.ids = ids_dev_.data();
    a.out = model_for(n).embedding_input();
    kc::EmbeddingForward::run(a, nullptr, s);
  }

  void drain_insert() {
    if (!insert_pending_) return;
    PERFLAB_CUDA_CHECK(cudaEventSynchronize(insert_end_.get()));  // sync outside the iteration: between requests (the next lookup needs the insert done)
    counters_.insert_s += elapsed_ms(insert_start_, insert_end_) / 1e3;
    insert_pending_ = false;
  }

  /// Writes the queued updates to the host tables and to the GPU's copies;
  /// whether there were any. Runs between batches: no kernel of this engine
  /// reads the tables then.
  bool apply_updates() {
    if (!updates_) return false;
    updates_->take(pending_);
    cudaStream_t s = compute_.get();
    for (size_t first = 0; first < pending_.size(); first += kUpdateChunk) {
      const size_t n = std::min(pending_.size() - first, static_cast<size_t>(kUpdateChunk));
      // The previous chunk's refresh reads update_keys_host_: wait for it.
      if (first > 0 && cache_) PERFLAB_CUDA_CHECK(cudaStreamSynchronize(s));  // sync outside the iteration: between requests, more than 4096 updates queued
      for (size_t k = 0; k < n; ++k) {
        const PendingUpdate& u = pending_[first + k];
        check_update_key(u, total_rows_);
        float* row = host_tables_.data() + u.key * dim_;
        const double waited = apply_update(u, updates_->seed(), row, dim_, bf16_);  // as the CPU engine does
        update_keys_host_.data()[k] = u.key;
        if (options_.placement == Placement::kAllDevice) {
          PERFLAB_CUDA_CHECK(cudaMemcpyAsync(device_tables_.data() + u.key * dim_, row, as_size(dim_) * sizeof(float),
                                             cudaMemcpyHostToDevice, s));
        }
        counters_.max_update_staleness_s = std::max(counters_.max_update_staleness_s, waited);
      }
      if (cache_) {
        PERFLAB_CUDA_CHECK(cudaMemcpyAsync(update_keys_dev_.data(), update_keys_host_.data(), n * sizeof(int64_t),
                                           cudaMemcpyHostToDevice, s));
        kc::EmbeddingCache::refresh(cache_args(0), update_keys_dev_.data(), static_cast<int64_t>(n), s);
      }
    }
    counters_.updates += static_cast<int64_t>(pending_.size());
    return !pending_.empty();
  }

  const Dataset& samples_;
  ServeOptions options_;
  ModelShape shape_;
  int64_t max_batch_;
  int64_t dim_;
  int tables_;
  std::vector<int64_t> offsets_;
  int64_t total_rows_ = 0;
  /// The dense network whose plan holds `n` samples: the smallest.
  CudaModel& model_for(int64_t n) {
    CudaModel* best = models_.front().get();
    for (const auto& m : models_) {
      if (m->options().batch >= n && m->options().batch < best->options().batch) best = m.get();
    }
    return *best;
  }

  std::vector<std::unique_ptr<CudaModel>> models_;  ///< Plans for max_batch, max_batch/4, ... 1.
  kc::PinnedBuffer<float> host_tables_;
  float* mapped_tables_ = nullptr;
  kc::DeviceBuffer<float> device_tables_;
  kc::DeviceBuffer<int64_t> offsets_dev_;
  kc::PinnedBuffer<float> dense_host_;
  kc::PinnedBuffer<int32_t> ids_host_;
  kc::PinnedBuffer<float> logits_host_;
  kc::DeviceBuffer<float> dense_dev_;
  kc::DeviceBuffer<int32_t> ids_dev_;
  kc::DeviceBuffer<float> logits_dev_;
  kc::DeviceBuffer<uint64_t> table_hits_dev_;
  kc::DeviceBuffer<uint64_t> inserted_dev_;
  bool bf16_ = false;
  std::optional<kc::CacheState> cache_;
  kc::DeviceBuffer<int64_t> cache_keys_;
  kc::DeviceBuffer<uint32_t> cache_stamps_;
  kc::DeviceBuffer<uint64_t> cache_counts_;
  kc::DeviceBuffer<float> cache_values_;
  kc::DeviceBuffer<unsigned char> cache_workspace_;
  int64_t prefilled_ = 0;
  uint32_t clock_ = 0;
  std::unique_ptr<RowUpdateStream> updates_;
  std::vector<PendingUpdate> pending_;
  kc::PinnedBuffer<int64_t> update_keys_host_;
  kc::DeviceBuffer<int64_t> update_keys_dev_;
  kc::Stream compute_, side_;
  kc::Event ev_[5] = {kc::Event(true), kc::Event(true), kc::Event(true), kc::Event(true), kc::Event(true)};
  kc::Event insert_start_{true}, insert_end_{true}, update_start_{true}, update_end_{true};
  bool insert_pending_ = false;
  ServeCounters counters_;
};

}  // namespace

std::unique_ptr<DlrmServeEngine> make_dlrm_cuda_engine(std::unique_ptr<CpuModel> model, const Dataset& samples,
                                                       const Dataset& train, const ServeOptions& options,
                                                       int64_t max_batch, uint64_t seed,
                                                       const CudaServeSettings& settings) {
  return std::make_unique<DlrmCudaEngine>(std::move(model), samples, train, options, max_batch, seed, settings);
}

double dlrm_serving_device_bytes(const ModelShape& shape, const ServeOptions& options, int64_t max_batch) {
  double rows = 0;
  for (int64_t r : shape.table_sizes) rows += static_cast<double>(r);
  const double row_bytes = static_cast<double>(shape.embed_dim) * sizeof(float);
  const auto tables = static_cast<double>(shape.table_sizes.size());
  // One model per plan size (max_batch, a quarter of it, ... 1): each holds
  // the dense parameters and their gradients; their batches add up to 4/3
  // of max_batch.
  int plans = 1;
  for (int64_t b = max_batch; b > 1; b = (b + 3) / 4) ++plans;
  const double batches = 4.0 / 3.0 * static_cast<double>(max_batch) + plans;
  double bytes = plans * 2.0 * static_cast<double>(dense_parameter_count(shape)) * sizeof(float);
  bytes += batches * tables * row_bytes * 2;  // embeddings and their gradient
  bytes += batches * 64 * 1024;               // activations of the MLPs (generous)
  if (options.placement == Placement::kAllDevice) bytes += rows * row_bytes;
  if (options.placement == Placement::kHotCache) {
    const double slots = static_cast<double>(kernels::cache_geometry(options.cache_rows).slots());
    bytes += slots * (row_bytes + sizeof(int64_t) + sizeof(uint32_t) + sizeof(uint64_t));
    // The insert's workspace: eleven per-slot arrays (64 B) and CUB's
    // temporary storage (double buffers of the sorted pairs), with slack.
    bytes += static_cast<double>(max_batch) * tables * 128 + (1 << 20);
  }
  return bytes;
}

}  // namespace perflab::dlrm
