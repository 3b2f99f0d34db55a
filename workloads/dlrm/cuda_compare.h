// The CUDA DLRM checked against the CPU reference: one SGD step on the same
// batch from the same seed on a fresh CpuModel and a fresh CudaModel, then
// the losses and the parameter updates compared. The gate of the cuda
// backend's throughput mode and the core of its GPU tests.
//
// What is compared, and how:
//   loss      |loss_gpu - loss_cpu| / |loss_cpu|                  <= loss tolerance
//   updates   per tensor (each dense weight and bias; each embedding table's
//             sampled rows), Δ = value after the step - value before:
//             ||Δ_gpu - Δ_cpu||₂ / ||Δ_cpu||₂                      <= update tolerance
//             (rows the batch does not touch are included: Δ_cpu = 0 there).
// Updates rather than values: the step changes a weight by lr·g, far less
// than the weight itself, so comparing values would hide a wrong gradient.
// Why norms and not elements, and why the update tolerance grows for small
// batches: a ReLU input within rounding distance of 0 (TF32: ~1e-3 of its
// scale, bf16: ~1e-2) can be decided the other way on the GPU, and then that
// sample's whole contribution through that unit differs. A sample is about
// 1/sqrt(batch) of a gradient's norm, and over a large batch such flips
// add up to a few percent of it; real bugs (a wrong index, mask, sign or
// learning rate) move the updates by tens of percent or more.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cuda/linear.h"
#include "workloads/dlrm/batch.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// Tolerances of the comparison, per precision.
struct StepTolerance {
  double loss = 0;    ///< Relative error of the loss.
  double update = 0;  ///< Normwise error of a tensor's update relative to the CPU's.
};

/// TF32: loss 1e-3, updates 0.05 + 2/sqrt(batch) (GEMM inputs rounded to
/// 10-bit mantissas). bf16: loss 3e-2, updates 0.15 + 2/sqrt(batch) (8-bit
/// mantissas, every Linear tensor rounded). See the file comment.
StepTolerance step_tolerance(kernels::cuda::Precision precision, int64_t batch);

/// The outcome of compare_one_step.
struct StepComparison {
  bool passed = false;
  double loss_cpu = 0, loss_gpu = 0;
  double loss_error = 0;       ///< Relative.
  double dense_error = 0;      ///< Worst normwise update error over the dense tensors.
  double embedding_error = 0;  ///< Worst over the sampled embedding rows.
  std::string detail;          ///< One paragraph: what ran, the worst errors and where.
};

/// Runs one step of `batch` (options.batch samples) at `learning_rate` on a
/// CpuModel(shape, seed) and on a CudaModel built from its dense parameters
/// with its tables drawn on the device from `seed` (table_seed, as a run's
/// model: a drawn table unlike the CPU's fails), and compares (see
/// the file comment). Every dense parameter is compared; for each table, up
/// to 64 distinct rows the batch reads plus its first and last rows.
/// Synchronises with the device (untimed use only). `gpu_lr_factor` other
/// than 1 scales the GPU's learning rate, making its step wrong on purpose
/// (tests use it to show that the comparison fails). With options.comm the
/// GPU model is this rank's part of the model-parallel one (every rank
/// calls it, collective): the loss is the ranks' shares summed, the dense
/// parameters (all-reduced, the same everywhere) and this rank's tables are
/// compared against the whole CPU model's step.
StepComparison compare_one_step(const ModelShape& shape, uint64_t seed,
                                const CudaModelOptions& options, const BatchView& batch,
                                float learning_rate, float gpu_lr_factor = 1.0f);

}  // namespace perflab::dlrm
