// DLRM serving on the CPU (issue 28): the model's forward pass as the
// engine MLPerf Inference's LoadGen drives (harness/inference_run.h). The
// sample library is a dataset. Each batch the harness's batcher forms:
//   1. the queued row updates are applied (row_updates.h);
//   2. its dense features and ids are gathered into contiguous rows (copies);
//   3. its embedding rows are looked up as the placement says
//      (serve_options.h): from the tables, or through the hot-row cache
//      with misses read from the tables (lookup), then the misses inserted;
//   4. CpuModel::predict_external gives σ(logit), the click probability (dense).
// Every placement computes the same predictions bit for bit (the rows are
// copied, never recomputed). report() gives the engine's counts and times.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/inference_run.h"
#include "kernels/cpu/embedding_cache.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"
#include "workloads/dlrm/serve/row_updates.h"
#include "workloads/dlrm/serve/serve_options.h"

namespace perflab::dlrm {

/// Counts and seconds an engine keeps over a test (both backends).
struct ServeCounters {
  int64_t batches = 0;
  int64_t samples = 0;
  int64_t lookups = 0;                ///< Embedding rows looked up (samples x tables).
  int64_t hits = 0;                   ///< Of them, served from the cache.
  std::vector<int64_t> table_lookups;  ///< Per table.
  std::vector<int64_t> table_hits;
  int64_t inserted = 0;               ///< Rows inserted into the cache.
  double host_embedding_bytes = 0;    ///< Embedding bytes read from the host tables.
  double input_bytes = 0;             ///< Dense features and ids copied per batch.
  int64_t updates = 0;                ///< Row updates applied.
  int64_t updates_left = 0;           ///< Queued after the last batch began: never applied.
  double max_update_staleness_s = 0;  ///< Longest wait from queued to applied.
  double updates_s = 0, copies_s = 0, lookup_s = 0, insert_s = 0, dense_s = 0;
};

/// The counters as a result's engine record: hit rates, bytes per sample,
/// time per part (totals and per batch).
nlohmann::json serve_counters_json(const ServeCounters& c, int64_t embed_dim);

/// What both DLRM engines (this CPU one and cuda_engine.h's) offer beside
/// LoadGen's interface.
class DlrmServeEngine : public InferenceEngine {
 public:
  /// The update stream (null when update_rate is 0); tests push to it.
  virtual RowUpdateStream* updates() = 0;
};

class DlrmCpuEngine final : public DlrmServeEngine {
 public:
  /// Serves `samples` (validated: ids inside the model's tables, the model's
  /// dense width) with `model`, in batches of at most `max_batch` samples
  /// (reserved now: predict never allocates), the embeddings placed as
  /// `options` say; a hot_cache is prefilled from `train`'s most frequent
  /// rows when options.warm. `samples` and `train` must outlive the engine.
  /// UsageError, one line, when the dataset does not fit the model.
  DlrmCpuEngine(std::unique_ptr<CpuModel> model, const Dataset& samples, const Dataset& train,
                const ServeOptions& options, int64_t max_batch, uint64_t seed);
  // The update stream's picker holds `this`: the engine stays where it was made.
  DlrmCpuEngine(const DlrmCpuEngine&) = delete;
  DlrmCpuEngine& operator=(const DlrmCpuEngine&) = delete;
  DlrmCpuEngine(DlrmCpuEngine&&) = delete;
  DlrmCpuEngine& operator=(DlrmCpuEngine&&) = delete;

  std::string name() const override { return "perflab-dlrm-cpu"; }
  size_t total_samples() const override { return static_cast<size_t>(samples_.size()); }
  /// Every sample: the dataset is in memory already.
  size_t performance_samples() const override { return static_cast<size_t>(samples_.size()); }
  void predict(const std::vector<size_t>& indices, float* out) override;
  void begin_test() override;
  void end_test() override;
  nlohmann::json report() const override;

  RowUpdateStream* updates() override { return updates_.get(); }
  /// The cache (null unless hot_cache).
  const kernels::cpu::EmbeddingCache* cache() const { return cache_ ? &*cache_ : nullptr; }
  const ServeCounters& counters() const { return counters_; }
  CpuModel& model() { return *model_; }

 private:
  const float* row(int64_t key) const;
  float* row(int64_t key);
  void apply_updates();
  void gather(int64_t n, float* emb);

  std::unique_ptr<CpuModel> model_;
  const Dataset& samples_;
  ServeOptions options_;
  int64_t max_batch_;
  std::vector<int64_t> offsets_;  ///< First global row of each table.
  std::vector<float*> tables_;    ///< Each table's rows (the model's).
  std::optional<kernels::cpu::EmbeddingCache> cache_;
  int64_t prefilled_ = 0;
  std::unique_ptr<RowUpdateStream> updates_;
  std::vector<PendingUpdate> pending_;
  std::vector<float> dense_;
  std::vector<int32_t> categorical_;
  std::vector<int64_t> keys_;
  std::vector<uint8_t> hit_;
  ServeCounters counters_;
};

}  // namespace perflab::dlrm
