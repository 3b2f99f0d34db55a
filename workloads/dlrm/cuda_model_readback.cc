// CudaModel's read-backs (cuda_model.h): parameters downloaded for tests,
// the gate, a divergence's diagnosis and a trained model's checkpoint, all
// outside any step; each waits for the whole device before it reads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

namespace perflab::dlrm {

using model_parts::count;

std::string CudaModel::first_nonfinite_tensor() const {
  auto finite = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
  };
  for (size_t i = 0; i < layout_.slots.size(); ++i) {
    if (!finite(dense_parameter(i))) return layout_.slots[i].name;
  }
  const std::vector<float> tables = tables_.download();  // synchronous: after a divergence
  for (int t : mine_) {
    const float* first = tables.data() + own_first_row(t) * shape_.embed_dim;
    const float* last = first + shape_.table_sizes[static_cast<size_t>(t)] * shape_.embed_dim;
    if (!std::all_of(first, last, [](float x) { return std::isfinite(x); })) return fmt::format("embedding table {}", t);
  }
  return "";
}

std::vector<float> CudaModel::dense_parameter(size_t index) const {
  const DenseSlot& s = layout_.slots.at(index);
  std::vector<float> out(count(s.values()));
  // The copy runs on the legacy stream, which does not wait for the model's
  // non-blocking streams: wait for the whole device, so a caller that did
  // not synchronise still reads the last step's values.
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: read-back for tests and the gate
  // Rows `ld` apart on the device (the padded top weight), packed here.
  PERFLAB_CUDA_CHECK(cudaMemcpy2D(out.data(), count(s.cols) * sizeof(float), dense_.data() + s.offset,  // sync outside the iteration: read-back for tests and the gate
                                  count(s.ld) * sizeof(float), count(s.cols) * sizeof(float), count(s.rows),
                                  cudaMemcpyDeviceToHost));
  return out;
}

void CudaModel::copy_to(CpuModel& out) const {
  if (options_.external_embeddings) throw std::logic_error("CudaModel::copy_to: a serving model holds no tables");
  if (options_.comm != nullptr) throw std::logic_error("CudaModel::copy_to: a model across ranks holds only its own tables");
  std::vector<DenseParameter> dense = out.dense_parameters();
  for (size_t i = 0; i < dense.size(); ++i) {
    const std::vector<float> values = dense_parameter(i);
    std::copy(values.begin(), values.end(), dense[i].value);
  }
  out.dense_parameters_changed();
  const std::vector<float> tables = tables_.download();  // synchronous: after training
  for (int t : mine_) {
    const float* first = tables.data() + own_first_row(t) * shape_.embed_dim;
    std::copy(first, first + shape_.table_sizes[static_cast<size_t>(t)] * shape_.embed_dim, out.embedding_row(t, 0));
  }
}

int64_t CudaModel::own_first_row(int table) const {
  int64_t first = 0;
  for (int t : mine_) {
    if (t == table) return first;
    first += shape_.table_sizes[static_cast<size_t>(t)];
  }
  throw std::out_of_range(fmt::format("dlrm cuda: table {} is not on this GPU", table));
}

std::vector<float> CudaModel::embedding_row(int table, int64_t row) const {
  if (options_.external_embeddings) throw std::logic_error("CudaModel::embedding_row: a serving model holds no tables");
  const int64_t first = own_first_row(table);
  std::vector<float> out(count(shape_.embed_dim));
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: as dense_parameter's
  PERFLAB_CUDA_CHECK(cudaMemcpy(out.data(), tables_.data() + (first + row) * shape_.embed_dim,  // sync outside the iteration: read-back for tests and the gate
                                out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace perflab::dlrm
