// The cuda backend of the dlrm workload: one seed's training run on one GPU
// (CudaModel), with a double-buffered input pipeline from pinned host memory,
// optional whole-iteration CUDA graphs, and a correctness gate against the
// CPU reference. Only CUDA builds see it (PERFLAB_DLRM_CUDA).
#pragma once

#ifdef PERFLAB_DLRM_CUDA

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/toggles.h"
#include "harness/workload.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/dlrm_benchmark.h"

namespace perflab::dlrm {

/// Host synchronisations counted (kernels/cuda/host_sync.h) inside
/// train_iteration, over the iterations run so far.
struct HostSyncStats {
  int64_t iterations = 0;
  int64_t total = 0;
  int64_t min_per_iteration = 0;
  int64_t max_per_iteration = 0;
};

/// A CUDA training run plus what tests and the gate want to know about it.
class DlrmCudaRun : public TrainingRun {
 public:
  /// Host syncs counted inside train_iteration so far.
  virtual HostSyncStats host_syncs() const = 0;
  /// Whether iterations are replayed from captured CUDA graphs (after the
  /// eager warm-up), and why not when cuda_graphs was requested but is off.
  virtual bool graphs_in_use() const = 0;
  virtual std::string graphs_note() const = 0;
  /// The fp32 master value of dense parameter `index` (CpuModel order) and
  /// an embedding row, after the iterations issued so far (synchronises).
  virtual std::vector<float> dense_parameter(size_t index) = 0;
  virtual std::vector<float> embedding_row(int table, int64_t row) = 0;
};

/// The cuda backend's run for `seed`: toggles fused, sync_free and
/// cuda_graphs as in effect in `toggles` (graphs are used only together with
/// sync-free); precision from setup.precision. `train` and `eval` must
/// outlive the run. Throws UsageError when the shape cannot run on the GPU.
std::unique_ptr<DlrmCudaRun> make_dlrm_cuda_run(const DlrmSetup& setup, const Dataset& train,
                                                const Dataset& eval, uint64_t seed,
                                                const ToggleSet& toggles);

}  // namespace perflab::dlrm

#endif  // PERFLAB_DLRM_CUDA
