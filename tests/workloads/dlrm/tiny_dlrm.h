// A tiny DLRM at odd sizes for tests on any build: tables of 5, 7 and 3
// rows, 5 dense features, and seeded data for it (tiny_cuda_dlrm.h adds
// what the CUDA tests share).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

inline ModelShape tiny_shape(int dim) {
  ModelShape s;
  s.num_dense = 5;
  s.table_sizes = {5, 7, 3};
  s.embed_dim = dim;
  s.bottom_mlp = {8, dim};
  s.top_mlp = {6, 1};
  return s;
}

/// `samples` samples for tiny_shape: dense in [-1, 1), ids inside their
/// tables, labels 0 or 1, all from `seed`.
inline Dataset tiny_data(int64_t samples, uint32_t seed) {
  Dataset d;
  d.num_dense = 5;
  d.table_sizes = {5, 7, 3};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < samples; ++i) {
    for (int f = 0; f < d.num_dense; ++f) d.dense.push_back(value(gen));
    for (int64_t rows : d.table_sizes) {
      d.categorical.push_back(static_cast<int32_t>(gen() % static_cast<uint32_t>(rows)));
    }
    d.labels.push_back(gen() % 2 == 0 ? 0.0f : 1.0f);
  }
  return d;
}

/// `model`'s predictions of `indices` of `d` (tiny_shape data), gathered as one batch.
inline std::vector<float> tiny_predictions(CpuModel& model, const Dataset& d, const std::vector<size_t>& indices) {
  std::vector<float> dense, out(indices.size());
  std::vector<int32_t> ids;
  for (size_t s : indices) {
    dense.insert(dense.end(), d.dense.begin() + static_cast<std::ptrdiff_t>(s * 5),
                 d.dense.begin() + static_cast<std::ptrdiff_t>((s + 1) * 5));
    ids.insert(ids.end(), d.categorical.begin() + static_cast<std::ptrdiff_t>(s * 3),
               d.categorical.begin() + static_cast<std::ptrdiff_t>((s + 1) * 3));
  }
  model.predict(BatchView{static_cast<int64_t>(indices.size()), dense.data(), ids.data(), nullptr}, out.data());
  return out;
}

}  // namespace perflab::dlrm
