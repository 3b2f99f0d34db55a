// What the dlrm cuda tests share (dlrm_cuda_test.cc, dlrm_nccl_cuda_test.cc):
// a tiny model at odd sizes (tables of 5, 7 and 3 rows; 5 dense features),
// seeded data for it, its setup, a run driven as the harness drives it, and
// every parameter of a model or run read back per tensor. CUDA builds only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/device_step.h"
#include "harness/step_driver.h"
#include "workloads/dlrm/cuda_run.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/dlrm_benchmark.h"
#include "tests/workloads/dlrm/tiny_dlrm.h"

namespace perflab::dlrm {

/// tiny_shape(dim) trained at `batch` with a learning rate that changes
/// between iterations (warm-up of 2 steps).
inline DlrmSetup tiny_setup(int dim, const std::string& precision, const Dataset& train, int64_t batch) {
  DlrmSetup s;
  s.shape = tiny_shape(dim);
  s.batch_size = batch;
  s.precision = precision;
  // As a run with the defaults (epilogues=auto, interaction=auto,
  // dgrad_weights=auto) at a batch
  // where auto picks tensor cores for bf16: these tiny batches are below
  // kTensorCoreInteractionMinBatch, where auto would leave every GPU step
  // test on CUDA cores, and the bf16 tensor-core step is the one dle runs.
  s.epilogues = auto_epilogues();
  s.interaction_tensor_cores =
      auto_interaction_tensor_cores(Backend::kCuda, precision, s.shape, false, kTensorCoreInteractionMinBatch);
  s.dgrad_weights_transposed = auto_dgrad_weights_transposed(precision, s.epilogues, kTransposedDgradMinBatch);
  s.wgrad_streams = auto_wgrad_streams(batch);  // two at these batches, as auto
  s.schedule.base = 0.5;
  s.schedule.warmup_steps = 2;
  s.training.iterations_per_epoch = train.size() / batch;
  s.step.batch_size = batch;
  return s;
}

/// One training step's mode in the step tests (dlrm_step_cuda_test.cc,
/// dlrm_nccl_cuda_test.cc): embed dim, precision, fused, sync-free.
using StepParam = std::tuple<int, kernels::cuda::Precision, bool, bool>;

/// Every mode those tests run: dims 4 and 16, TF32 and bf16, fused or not,
/// sync-free or not.
inline auto all_step_params() {
  return ::testing::Combine(::testing::Values(4, 16),
                            ::testing::Values(kernels::cuda::Precision::kTf32, kernels::cuda::Precision::kBf16),
                            ::testing::Bool(), ::testing::Bool());
}

/// A step mode's test name: "dim16_bf16_fused_syncfree".
inline std::string step_name(const ::testing::TestParamInfo<StepParam>& p) {
  const auto [dim, precision, fused, sync_free] = p.param;
  return "dim" + std::to_string(dim) + (precision == kernels::cuda::Precision::kBf16 ? "_bf16" : "_tf32") +
         (fused ? "_fused" : "_unfused") + (sync_free ? "_syncfree" : "_sync");
}

/// The toggles a run is built with, each in effect as asked.
inline ToggleSet run_toggles(bool fused, bool sync_free, bool graphs, bool sharp = false) {
  ToggleSet t;
  t[Toggle::kFused] = {fused, fused, ""};
  t[Toggle::kSyncFree] = {sync_free, sync_free, ""};
  t[Toggle::kCudaGraphs] = {graphs, graphs, ""};
  t[Toggle::kSharp] = {sharp, sharp, ""};
  return t;
}

/// A run driven as the harness drives it: its DeviceStep through a
/// StepDriver on the real CUDA calls, graphs as the toggle says.
struct Driven {
  Driven(std::unique_ptr<DlrmCudaRun> r, bool graphs)
      : run(std::move(r)), ops(make_cuda_device_ops()), driver(*run->device_step(), *ops, graphs) {}
  std::unique_ptr<DlrmCudaRun> run;
  std::unique_ptr<DeviceOps> ops;
  StepDriver driver;
};

/// Every parameter of `m` (a CudaModel or a DlrmCudaRun), per tensor:
/// `dense_tensors` dense tensors, then one vector per table.
template <typename Model>
std::vector<std::vector<float>> parameter_state(Model& m, const ModelShape& shape, size_t dense_tensors) {
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < dense_tensors; ++i) out.push_back(m.dense_parameter(i));
  for (int t = 0; t < static_cast<int>(shape.table_sizes.size()); ++t) {
    std::vector<float> table;
    for (int64_t r = 0; r < shape.table_sizes[static_cast<size_t>(t)]; ++r) {
      const std::vector<float> row = m.embedding_row(t, r);
      table.insert(table.end(), row.begin(), row.end());
    }
    out.push_back(table);
  }
  return out;
}

}  // namespace perflab::dlrm
