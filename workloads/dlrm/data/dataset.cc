// Batch views and consistency checks for the in-memory DLRM dataset.
#include "workloads/dlrm/data/dataset.h"

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::dlrm {

BatchView Dataset::batch(int64_t first, int64_t count) const {
  if (first < 0 || count < 0 || first > size() || count > size() - first) {
    throw UsageError(fmt::format("batch [{}, {}) lies outside the dataset of {} samples", first,
                                 first + count, size()));
  }
  BatchView view;
  view.size = count;
  view.dense = dense.data() + first * num_dense;
  view.categorical = categorical.data() + first * num_tables();
  view.labels = labels.data() + first;
  return view;
}

void Dataset::validate() const {
  const int64_t n = size();
  if (num_dense < 0 || static_cast<int64_t>(dense.size()) != n * num_dense) {
    throw UsageError(fmt::format("dataset has {} dense values, expected {} samples x {}",
                                 dense.size(), n, num_dense));
  }
  if (static_cast<int64_t>(categorical.size()) != n * num_tables()) {
    throw UsageError(fmt::format("dataset has {} categorical ids, expected {} samples x {}",
                                 categorical.size(), n, num_tables()));
  }
  for (int t = 0; t < num_tables(); ++t) {
    if (table_sizes[t] <= 0) {
      throw UsageError(fmt::format("table {} has size {}, expected at least 1", t, table_sizes[t]));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] != 0.0f && labels[i] != 1.0f) {
      throw UsageError(fmt::format("sample {}: label {} is not 0 or 1", i, labels[i]));
    }
    for (int t = 0; t < num_tables(); ++t) {
      const int32_t id = categorical[i * num_tables() + t];
      if (id < 0 || id >= table_sizes[t]) {
        throw UsageError(fmt::format("sample {}: id {} of table {} lies outside [0, {})", i, id, t,
                                     table_sizes[t]));
      }
    }
  }
}

}  // namespace perflab::dlrm
