// DLRM serving on the CPU (issue 28): the model's forward pass as the
// engine MLPerf Inference's LoadGen drives (harness/inference_run.h). The
// sample library is a dataset; each batch the harness's batcher forms is
// gathered into contiguous rows and predicted by CpuModel::predict (σ of
// the logit, the click probability).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/inference_run.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

class DlrmCpuEngine final : public InferenceEngine {
 public:
  /// Serves `samples` (validated: ids inside the model's tables, the model's
  /// dense width) with `model`, in batches of at most `max_batch` samples
  /// (reserved now: predict never allocates). Both must outlive the engine.
  /// UsageError, one line, when the dataset does not fit the model.
  DlrmCpuEngine(CpuModel& model, const Dataset& samples, int64_t max_batch);
  /// The same, owning its model (one seed's run of --mode inference).
  DlrmCpuEngine(std::unique_ptr<CpuModel> model, const Dataset& samples, int64_t max_batch);

  std::string name() const override { return "perflab-dlrm-cpu"; }
  size_t total_samples() const override { return static_cast<size_t>(samples_.size()); }
  /// Every sample: the dataset is in memory already.
  size_t performance_samples() const override { return static_cast<size_t>(samples_.size()); }
  void predict(const std::vector<size_t>& indices, float* out) override;

 private:
  std::unique_ptr<CpuModel> owned_;
  CpuModel& model_;
  const Dataset& samples_;
  int64_t max_batch_;
  std::vector<float> dense_;
  std::vector<int32_t> categorical_;
};

}  // namespace perflab::dlrm
