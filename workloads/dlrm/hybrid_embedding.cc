// The hybrid embedding's frequency threshold, frequent set and in-batch
// deduplication (see hybrid_embedding.h).
#include "workloads/dlrm/hybrid_embedding.h"

#include <algorithm>
#include <stdexcept>

namespace perflab::dlrm {

int64_t frequency_threshold(int64_t train_samples, int64_t global_batch) {
  return std::max<int64_t>(1, train_samples / std::max<int64_t>(1, global_batch));
}

FrequentCategories find_frequent(const int32_t* categorical, int64_t samples,
                                 const std::vector<int64_t>& table_sizes, int64_t threshold) {
  const auto tables = static_cast<int64_t>(table_sizes.size());
  FrequentCategories f;
  f.threshold = threshold;
  f.ids.resize(table_sizes.size());
  f.index.resize(table_sizes.size());
  int64_t hits = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : hits)
  for (int64_t t = 0; t < tables; ++t) {
    std::vector<int64_t> counts(static_cast<size_t>(table_sizes[t]), 0);
    for (int64_t s = 0; s < samples; ++s) ++counts[static_cast<size_t>(categorical[s * tables + t])];
    std::vector<int32_t>& index = f.index[t];
    index.assign(counts.size(), -1);
    for (size_t id = 0; id < counts.size(); ++id) {
      if (counts[id] < threshold) continue;
      index[id] = static_cast<int32_t>(f.ids[t].size());
      f.ids[t].push_back(static_cast<int32_t>(id));
      hits += counts[id];
    }
  }
  for (const auto& ids : f.ids) f.count += static_cast<int64_t>(ids.size());
  const double lookups = static_cast<double>(samples) * static_cast<double>(tables);
  f.lookup_share = lookups > 0 ? static_cast<double>(hits) / lookups : 0.0;
  return f;
}

nlohmann::json frequent_json(const FrequentCategories& frequent) {
  std::vector<int64_t> per_table;
  for (const auto& ids : frequent.ids) per_table.push_back(static_cast<int64_t>(ids.size()));
  return {{"threshold_count", frequent.threshold},
          {"rule", "frequent when seen at least once per global batch on average: count >= train samples / batch"},
          {"frequent_categories", frequent.count},
          {"frequent_per_table", per_table},
          {"frequent_lookup_share", frequent.lookup_share}};
}

void unique_infrequent_rows(const BatchView& batch, int64_t first, int64_t n, const std::vector<int>& tables,
                            const FrequentCategories& frequent, RowList& rows) {
  rows.clear();
  const auto width = static_cast<int64_t>(frequent.index.size());
  for (int64_t b = first; b < first + n; ++b) {
    for (int t : tables) {
      const int32_t id = batch.categorical[b * width + t];
      if (!frequent.frequent(t, id)) rows.emplace_back(t, id);
    }
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
}

int64_t position_of(const RowList& rows, std::pair<int, int32_t> row) {
  const auto it = std::lower_bound(rows.begin(), rows.end(), row);
  if (it == rows.end() || *it != row) throw std::logic_error("hybrid embedding: a row missing from its exchange list");
  return it - rows.begin();
}

}  // namespace perflab::dlrm
