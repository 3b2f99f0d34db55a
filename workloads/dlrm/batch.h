// A batch of Criteo-like samples, as the DLRM model consumes it.
#pragma once

#include <cstdint>

namespace perflab::dlrm {

/// Row-major views into a dataset; nothing is owned.
struct BatchView {
  int64_t size = 0;                       ///< Samples in the batch.
  const float* dense = nullptr;           ///< [size, num_dense], already log-transformed.
  const int32_t* categorical = nullptr;   ///< [size, num_tables], ids in [0, table_size).
  const float* labels = nullptr;          ///< [size], 0 or 1.
};

}  // namespace perflab::dlrm
