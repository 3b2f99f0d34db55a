// The cuda backend of the dlrm workload: one seed's training run on one GPU
// (CudaModel), or on this rank's GPU of an NCCL run (exchange=nccl: this
// rank's tables, its slice of the batch; cuda_model.h), with a
// double-buffered input pipeline from pinned host memory,
// its iteration a DeviceStep the harness runs (and captures as CUDA graphs),
// and a correctness gate against the CPU reference. Only CUDA builds see it (PERFLAB_DLRM_CUDA).
#pragma once

#ifdef PERFLAB_DLRM_CUDA

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/toggles.h"
#include "harness/workload.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_nccl.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/dlrm_benchmark.h"

namespace perflab::dlrm {

/// A CUDA training run plus what tests want to know about it. Its iteration
/// is a DeviceStep (device_step()): the harness drives it.
class DlrmCudaRun : public TrainableModel {
 public:
  /// The fp32 master value of dense parameter `index` (CpuModel order) and
  /// an embedding row, after the iterations issued so far (synchronises).
  virtual std::vector<float> dense_parameter(size_t index) = 0;
  virtual std::vector<float> embedding_row(int table, int64_t row) = 0;
};

/// A training model's options from the setup and the toggles in effect,
/// as the run builds its model (no communicator: the run adds the NCCL
/// path's). Host-only.
CudaModelOptions cuda_model_options(const DlrmSetup& setup, const ToggleSet& toggles);

/// The cuda backend's run for `seed`: toggles fused and sync_free as in
/// effect in `toggles` (cuda_graphs is the harness's: it captures the
/// step); precision from setup.precision. `train` and `eval` must
/// outlive the run. With nccl.comm the model is this rank's part of the
/// model-parallel one: every call is collective, rank 0 computes the AUC
/// over the whole held-out set (the logits gathered) and every rank returns
/// it; losses are summed over the ranks' shares; --sharp's outcome and the
/// NCCL facts are the step's. Throws UsageError when the shape cannot run
/// on the GPU.
std::unique_ptr<DlrmCudaRun> make_dlrm_cuda_run(const DlrmSetup& setup, const Dataset& train,
                                                const Dataset& eval, uint64_t seed,
                                                const ToggleSet& toggles, const DlrmNccl& nccl = {});

}  // namespace perflab::dlrm

#endif  // PERFLAB_DLRM_CUDA
