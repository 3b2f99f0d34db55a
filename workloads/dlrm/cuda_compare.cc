// One training step on the CPU reference and on the GPU, compared.
#include "workloads/dlrm/cuda_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/half_precision.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "workloads/dlrm/cuda_convert.h"

namespace perflab::dlrm {
namespace {

namespace kc = perflab::kernels::cuda;

/// A tensor whose CPU update has a smaller norm than this is compared
/// against this scale instead (a dead tensor: the GPU must not move it).
constexpr double kMinUpdateNorm = 1e-12;
constexpr size_t kRowsPerTable = 64;

/// The tensor with the largest update error so far, and its worst element.
struct Worst {
  double error = 0;  // ||Δgpu - Δcpu|| / ||Δcpu|| of that tensor
  bool any = false;
  std::string where = "nothing compared";
  double cpu = 0, gpu = 0;  // the updates of its element with the largest difference
};

/// Folds the update error of one tensor into `worst`: values before the step,
/// after it on the CPU and on the GPU, n each, elements named by where(i).
/// `scale`, when given, is a norm the difference may also be measured
/// against when larger than ||Δcpu||: lr·||Σ|g_b|||, for embedding rows whose
/// per-sample terms cancel (a hot row at a large batch), where rounding in the
/// terms is relative to their magnitudes, not to their small sum.
template <typename Where>
void compare_updates(const float* before, const float* cpu, const float* gpu, size_t n,
                     Where&& where, Worst& worst, double scale = 0) {
  double norm = 0, difference = 0, largest = -1;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d_cpu = static_cast<double>(cpu[i]) - before[i];
    const double d_gpu = static_cast<double>(gpu[i]) - before[i];
    const double e = std::isnan(d_gpu) ? std::numeric_limits<double>::infinity() : d_gpu - d_cpu;
    norm += d_cpu * d_cpu;
    difference += e * e;
    if (std::abs(e) > largest) {
      largest = std::abs(e);
      at = i;
    }
  }
  double error =
      std::sqrt(difference) / std::max({std::sqrt(norm), scale, kMinUpdateNorm});
  if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
  if (n > 0 && (!worst.any || error > worst.error)) {
    worst = {error, true, where(at), static_cast<double>(cpu[at]) - before[at],
             static_cast<double>(gpu[at]) - before[at]};
  }
}

/// A stream for the comparison, destroyed on every path.
struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

}  // namespace

StepTolerance step_tolerance(kc::Precision precision, int64_t batch) {
  const double flips = 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(batch, 1)));
  return precision == kc::Precision::kBf16 ? StepTolerance{3e-2, 0.15 + flips}
                                           : StepTolerance{1e-3, 0.05 + flips};
}

StepComparison compare_one_step(const ModelShape& shape, uint64_t seed,
                                const CudaModelOptions& options, const BatchView& batch,
                                float learning_rate, float gpu_lr_factor) {
  if (batch.size != options.batch) {
    throw UsageError(fmt::format("dlrm cuda check: batch of {} samples for a model planned for {}",
                                 batch.size, options.batch));
  }
  const int tables = static_cast<int>(shape.table_sizes.size());
  const auto dim = static_cast<size_t>(shape.embed_dim);
  const auto samples = static_cast<size_t>(batch.size);
  CpuModel cpu(shape, seed);

  // Snapshots before the step: every dense tensor, and the sampled rows.
  std::vector<DenseParameter> params = cpu.dense_parameters();
  std::vector<std::vector<float>> dense_before;
  for (const DenseParameter& p : params) {
    dense_before.emplace_back(p.value, p.value + p.size);
  }
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(tables));
  std::vector<std::vector<float>> rows_before(static_cast<size_t>(tables));
  for (int t = 0; t < tables; ++t) {
    std::vector<int64_t>& r = rows[static_cast<size_t>(t)];
    const int64_t last = shape.table_sizes[static_cast<size_t>(t)] - 1;
    for (size_t b = 0; b < samples && r.size() < kRowsPerTable; ++b) {
      const int64_t id = batch.categorical[b * static_cast<size_t>(tables) + static_cast<size_t>(t)];
      if (std::find(r.begin(), r.end(), id) == r.end()) r.push_back(id);
    }
    for (int64_t extra : {int64_t{0}, last}) {
      if (std::find(r.begin(), r.end(), extra) == r.end()) r.push_back(extra);
    }
    for (int64_t row : r) {
      const float* v = cpu.embedding_row(t, row);
      rows_before[static_cast<size_t>(t)].insert(rows_before[static_cast<size_t>(t)].end(), v, v + dim);
    }
  }

  // The GPU step, from the untouched CPU model's dense parameters and, as a
  // run's model draws them (cuda_run.cc), tables drawn on the device from
  // the seed: each compared row's update is taken against the CPU's row
  // before the step, so a drawn table that is not the CPU's fails the gate.
  CudaModelOptions drawn = options;
  drawn.table_seed = seed;
  CudaModel gpu(cpu, drawn);
  StepComparison out;
  {
    // Across ranks the GPU model reads this rank's slice of the dense
    // features and labels (every id), and its loss is this rank's share.
    const auto first = static_cast<size_t>(gpu.first_sample());
    const auto local = static_cast<size_t>(gpu.local_batch());
    const auto num_dense = static_cast<size_t>(shape.num_dense);
    kc::DeviceBuffer<float> dense(
        std::vector<float>(batch.dense + first * num_dense, batch.dense + (first + local) * num_dense));
    // A run that packs its dense rows in bf16 (dense_input_bf16) hands its
    // model those; the gate gives this one the same: its rows rounded as
    // pack_batch rounds them, padded to the model's input width.
    const bool bf16_rows = drawn.dense_input_bf16 && drawn.precision == kc::Precision::kBf16;
    const auto width = static_cast<size_t>(gpu.dense_input_width());
    std::vector<uint16_t> rows_bf16(bf16_rows ? local * width : 1, 0);
    for (size_t r = 0; bf16_rows && r < local; ++r) {
      for (size_t c = 0; c < num_dense; ++c) rows_bf16[r * width + c] = to_bf16(batch.dense[(first + r) * num_dense + c]);
    }
    kc::DeviceBuffer<uint16_t> dense_bf16(rows_bf16);
    kc::DeviceBuffer<int32_t> ids(std::vector<int32_t>(
        batch.categorical, batch.categorical + samples * static_cast<size_t>(tables)));
    kc::DeviceBuffer<float> labels(std::vector<float>(batch.labels + first, batch.labels + first + local));
    kc::counted_stream_synchronize(nullptr);  // the uploads (legacy stream) have landed
    Stream s;
    set_device_float(gpu.learning_rate(), learning_rate * gpu_lr_factor, s.stream);
    DeviceBatch step_batch{dense.data(), ids.data(), labels.data()};
    if (bf16_rows) {
      step_batch.dense = nullptr;
      step_batch.dense_bf16 = dense_bf16.data();
      step_batch.dense_stride = gpu.dense_input_width();
    }
    gpu.train_step(step_batch, s.stream);
    const DeviceLoss loss = gpu.take_loss(s.stream);  // synchronises the stream
    double share[2] = {loss.sum, loss.nonfinite ? 1.0 : 0.0};
    if (options.comm != nullptr) options.comm->all_reduce_host(share, 2, collectives::ReduceOp::kSum);
    out.loss_gpu = share[1] != 0 ? std::numeric_limits<double>::quiet_NaN() : share[0];
  }
  out.loss_cpu = cpu.forward_backward(batch);
  // Per table, lr·||Σ_b |g_b||| over the compared rows (see compare_updates).
  std::vector<double> embedding_scale(static_cast<size_t>(tables), 0.0);
  {
    std::vector<float> gradient(dim), magnitude(dim);
    for (int t = 0; t < tables; ++t) {
      double sum_sq = 0;
      for (int64_t row : rows[static_cast<size_t>(t)]) {
        cpu.embedding_row_gradient(t, row, gradient.data(), magnitude.data());
        for (float m : magnitude) sum_sq += double{m} * m;
      }
      embedding_scale[static_cast<size_t>(t)] = learning_rate * std::sqrt(sum_sq);
    }
  }
  cpu.apply_gradients(learning_rate);

  const StepTolerance tol = step_tolerance(options.precision, batch.size);
  out.loss_error = std::abs(out.loss_gpu - out.loss_cpu) / std::max(std::abs(out.loss_cpu), 1e-12);
  if (std::isnan(out.loss_error)) out.loss_error = std::numeric_limits<double>::infinity();

  Worst dense;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<float> gpu_after = gpu.dense_parameter(i);
    const std::string& name = params[i].name;
    compare_updates(dense_before[i].data(), params[i].value, gpu_after.data(), gpu_after.size(),
                    [&](size_t k) { return fmt::format("{}[{}]", name, k); }, dense);
  }
  out.dense_error = dense.error;

  Worst emb;
  size_t compared_rows = 0;
  for (int t = 0; t < tables; ++t) {
    if (!gpu.owns(t)) continue;  // another rank's table: that rank compares it
    const std::vector<int64_t>& r = rows[static_cast<size_t>(t)];
    std::vector<float> cpu_after, gpu_after;
    for (int64_t row : r) {
      const float* v = cpu.embedding_row(t, row);
      cpu_after.insert(cpu_after.end(), v, v + dim);
      const std::vector<float> g = gpu.embedding_row(t, row);
      gpu_after.insert(gpu_after.end(), g.begin(), g.end());
    }
    compare_updates(rows_before[static_cast<size_t>(t)].data(), cpu_after.data(), gpu_after.data(),
                    cpu_after.size(),
                    [&](size_t k) { return fmt::format("table {} row {} [{}]", t, r[k / dim], k % dim); },
                    emb, embedding_scale[static_cast<size_t>(t)]);
    compared_rows += r.size();
  }
  out.embedding_error = emb.error;
  int owned = 0;
  for (int t = 0; t < tables; ++t) owned += gpu.owns(t) ? 1 : 0;

  out.passed = out.loss_error <= tol.loss && out.dense_error <= tol.update &&
               out.embedding_error <= tol.update;
  out.detail = fmt::format(
      "one SGD step (batch {}, lr {:g}, seed {}) on the CPU reference and on the GPU ({}): "
      "{}loss cpu {:.6f} gpu {:.6f} (relative error {:.2e}, tolerance {:.0e}); "
      "dense updates of {} tensors: worst |Δgpu - Δcpu| / |Δcpu| {:.2e} (largest difference at {}: "
      "cpu Δ {:.3e}, gpu Δ {:.3e}; tolerance {:.2f}); "
      "embedding updates of {} rows in {} tables: worst |Δgpu - Δcpu| / max(|Δcpu|, lr·Σ|g|) "
      "{:.2e} (at {}: cpu Δ {:.3e}, gpu Δ {:.3e})",
      batch.size, learning_rate, seed, describe(options),
      options.comm == nullptr
          ? std::string()
          : fmt::format("embeddings over {} NCCL rank(s), this rank {} holding {} table(s); ", options.comm->size(),
                        options.comm->rank(), owned),
      out.loss_cpu, out.loss_gpu,
      out.loss_error, tol.loss, params.size(), dense.error, dense.where, dense.cpu, dense.gpu,
      tol.update, compared_rows, owned, emb.error, emb.where, emb.cpu, emb.gpu);
  return out;
}

}  // namespace perflab::dlrm
