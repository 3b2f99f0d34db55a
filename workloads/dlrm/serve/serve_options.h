// How DLRM serves (--mode inference, issue 28): where the embedding tables
// live, the hot-row cache in front of them, and a stream of row updates
// while serving. Parsed from the dlrm workload's parameters and checked in
// one line each before anything is served.
//
// Placements:
//   all_device  every table in the serving device's memory (cuda: GPU
//               memory; cpu: host memory, the same work as host);
//   host        every table in host memory (cuda: pinned and mapped, rows
//               gathered by the GPU over PCIe/C2C; cpu: gathered by the engine
//               into the batch's embedding buffer);
//   hot_cache   host tables as above behind a set-associative cache of the
//               hot rows (kernels/cpu/embedding_cache.h; cuda: in GPU memory,
//               kernels/cuda/embedding_cache.h), filled by frequency from the
//               training data (cache_warm=frequency) and, unless its policy is
//               static, learnt online (lru, lfu): misses are read from the
//               host tables in the same request and inserted (cuda: on a
//               second stream beside the dense network; cpu: before it, on
//               the request's path).
// The cache_* parameters apply to hot_cache only (refused otherwise).
// On the cpu backend every placement is host memory: they differ in the
// work done per request (the cache's lookups and inserts run for real, its
// hit rates are the ones a GPU cache of that capacity sees on the same
// requests), not in where the bytes are; the result says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/params.h"
#include "harness/workload.h"
#include "kernels/cpu/embedding_cache.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

enum class Placement { kAllDevice, kHost, kHotCache };

const char* placement_name(Placement p);

struct ServeOptions {
  Placement placement = Placement::kAllDevice;
  kernels::CachePolicy policy = kernels::CachePolicy::kLfu;
  /// hot_cache: the capacity in rows (cache_capacity resolved against the
  /// tables and the row size) and the text it came from.
  int64_t cache_rows = 0;
  std::string cache_capacity;
  /// Prefill the cache with the training data's most frequent rows.
  bool warm = true;
  /// Rows per second updated while a LoadGen test runs (0: none).
  double update_rate = 0;
  /// A checkpoint to serve (dlrm's save_model writes one); "": the model
  /// initialised from the seed.
  std::string model_path;
};

/// The serving parameters of the dlrm workload.
std::vector<ParamSpec> serve_params();

/// Reads and checks them for `shape` (cache_capacity: rows "250000", bytes
/// "64MiB"/"1GiB"/"4096B", or a share of all rows "5%"). UsageError, one
/// line, for a bad value; with `serving` false (a training run), for any
/// serving parameter set away from its default.
ServeOptions parse_serve_options(const ParamValues& p, const ModelShape& shape, bool serving);

/// The options as the result records them: requested placement and what
/// is in effect on `backend`, the cache's geometry, the update rate.
nlohmann::json serve_options_json(const ServeOptions& o, Backend backend);

/// The training data's rows by how often they are looked up: global keys
/// (table_row_offsets[t] + id), most frequent first (ties: smaller key),
/// with their counts. At most `limit` of them.
struct RowFrequency {
  std::vector<int64_t> keys;
  std::vector<uint64_t> counts;
};
RowFrequency most_frequent_rows(const Dataset& train, int64_t limit);

/// First global row of each table: table t's row r is key offsets[t] + r.
std::vector<int64_t> table_row_offsets(const std::vector<int64_t>& table_sizes);

}  // namespace perflab::dlrm
