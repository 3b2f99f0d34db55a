// An in-memory Criteo-like dataset: dense features, categorical ids and click
// labels, row-major, from which the DLRM workload takes batches.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/dlrm/batch.h"

namespace perflab::dlrm {

/// Samples stored row-major. Dense values are already log-transformed;
/// categorical ids of table t lie in [0, table_sizes[t]); labels are 0 or 1.
struct Dataset {
  int num_dense = 13;                ///< Dense features per sample.
  std::vector<int64_t> table_sizes;  ///< Rows of each embedding table, one per categorical feature.
  std::vector<float> dense;          ///< [size(), num_dense].
  std::vector<int32_t> categorical;  ///< [size(), num_tables()].
  std::vector<float> labels;         ///< [size()], 0 or 1.

  /// Number of samples.
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  /// Number of categorical features (embedding tables).
  int num_tables() const { return static_cast<int>(table_sizes.size()); }

  /// Views samples [first, first + count). Throws UsageError when the range
  /// does not lie inside the dataset.
  BatchView batch(int64_t first, int64_t count) const;

  /// Checks that the arrays have consistent sizes, every id lies inside its
  /// table and every label is 0 or 1; throws UsageError naming the first
  /// offending sample otherwise.
  void validate() const;
};

}  // namespace perflab::dlrm
