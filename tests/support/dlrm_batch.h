// A DLRM batch that owns its storage, for tests that make their own.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/dlrm/batch.h"

namespace perflab::test_support {

struct DlrmBatch {
  std::vector<float> dense;          ///< [size, num_dense]
  std::vector<int32_t> categorical;  ///< [size, tables]
  std::vector<float> labels;         ///< [size]
  dlrm::BatchView view() const {
    return {static_cast<int64_t>(labels.size()), dense.data(), categorical.data(), labels.data()};
  }
};

}  // namespace perflab::test_support
