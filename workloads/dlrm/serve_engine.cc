#include "workloads/dlrm/serve_engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace perflab::dlrm {

DlrmCpuEngine::DlrmCpuEngine(CpuModel& model, const Dataset& samples, int64_t max_batch)
    : model_(model), samples_(samples), max_batch_(max_batch) {
  const ModelShape& shape = model.shape();
  if (max_batch < 1) throw UsageError(fmt::format("dlrm serving: max_batch must be at least 1, got {}", max_batch));
  if (samples.size() < 1) throw UsageError("dlrm serving: the sample library is empty");
  if (samples.num_dense != shape.num_dense || samples.table_sizes != shape.table_sizes) {
    throw UsageError(fmt::format(
        "dlrm serving: the samples do not fit the model ({} dense features and {} tables, the model has {} and {})",
        samples.num_dense, samples.num_tables(), shape.num_dense, shape.table_sizes.size()));
  }
  samples.validate();
  dense_.resize(static_cast<size_t>(max_batch * shape.num_dense));
  categorical_.resize(static_cast<size_t>(max_batch) * shape.table_sizes.size());
  model_.reserve_batch(max_batch);
}

DlrmCpuEngine::DlrmCpuEngine(std::unique_ptr<CpuModel> model, const Dataset& samples, int64_t max_batch)
    : DlrmCpuEngine(*model, samples, max_batch) {
  owned_ = std::move(model);
}

void DlrmCpuEngine::predict(const std::vector<size_t>& indices, float* out) {
  const auto n = static_cast<int64_t>(indices.size());
  if (n == 0) return;
  if (n > max_batch_) {
    throw Error(fmt::format("dlrm serving: a batch of {} samples, above max_batch {}", n, max_batch_));
  }
  const auto dense = static_cast<size_t>(samples_.num_dense);
  const auto tables = static_cast<size_t>(samples_.num_tables());
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t s = indices[i];
    if (s >= static_cast<size_t>(samples_.size())) {
      throw Error(fmt::format("dlrm serving: sample {} is outside the library of {}", s, samples_.size()));
    }
    std::copy_n(samples_.dense.begin() + static_cast<std::ptrdiff_t>(s * dense), dense,
                dense_.begin() + static_cast<std::ptrdiff_t>(i * dense));
    std::copy_n(samples_.categorical.begin() + static_cast<std::ptrdiff_t>(s * tables), tables,
                categorical_.begin() + static_cast<std::ptrdiff_t>(i * tables));
  }
  model_.predict(BatchView{n, dense_.data(), categorical_.data(), nullptr}, out);
}

}  // namespace perflab::dlrm
