// The cuda backend's training run (see cuda_run.h).
//
// Streams: `compute` runs every step, evaluation and loss read-back; `copy`
// runs the host-to-device copies of the input batches.
// Input pipeline: the training set is copied once into pinned host memory;
// two device input slots alternate. While step i runs on `compute` from one
// slot, the batch of step i+1 is copied into the other slot on `copy`
// (waiting on the `consumed` event of the step that last read that slot);
// step i+1 then waits on that slot's `copied` event. Only stream-ordered
// waits: the host never blocks.
// Learning rate: written to the device float by a one-thread kernel whose
// argument is the value, on `compute` before the step, so a graph replay
// reads the current value and no host buffer has to outlive the copy.
// The iteration is a DeviceStep (harness/device_step.h): begin() waits for
// the slot's input and writes the learning rate, enqueue(slot) is the
// training step reading that slot (one variant per input slot: what the
// harness captures as a CUDA graph when --cuda-graphs is in effect), end()
// records the slot's `consumed` event and prefetches the next batch. The
// harness counts host syncs around the whole iteration: the synchronising
// embedding update makes one, the sync-free one none.
#include "workloads/dlrm/cuda_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness/device_step.h"
#include "harness/error.h"
#include "kernels/cpu/auc.h"
#include "kernels/cpu/bce.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/cuda_model.h"

namespace perflab::dlrm {
namespace {

namespace kc = perflab::kernels::cuda;

size_t count(int64_t n) { return static_cast<size_t>(n); }

/// One device input buffer of the double-buffered pipeline.
struct InputSlot {
  kc::DeviceBuffer<float> dense;
  kc::DeviceBuffer<int32_t> ids;
  kc::DeviceBuffer<float> labels;
  kc::Event copied;    // recorded on `copy` after the batch landed
  kc::Event consumed;  // recorded on `compute` after the step that read it
  int64_t batch_index = -1;  // which batch of the epoch the slot holds (or is receiving)
};

template <typename T>
std::vector<T> padded(const std::vector<T>& values, size_t size) {
  std::vector<T> out(size, T{0});
  std::copy(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(std::min(size, values.size())),
            out.begin());
  return out;
}

class CudaRun final : public DlrmCudaRun, public DeviceStep {
 public:
  CudaRun(const DlrmSetup& setup, const Dataset& train, const Dataset& eval, uint64_t seed,
          const ToggleSet& toggles)
      : setup_(setup),
        train_(train),
        eval_(eval),
        seed_(seed),
        options_(options_for(setup, toggles)),
        model_(make_model(setup, seed, options_)),
        dense_(train.dense),
        ids_(train.categorical),
        labels_(train.labels) {
    const int64_t b = options_.batch;
    const int tables = train.num_tables();
    for (InputSlot& slot : slots_) {
      slot.dense = kc::DeviceBuffer<float>(count(b * train.num_dense));
      slot.ids = kc::DeviceBuffer<int32_t>(count(b * tables));
      slot.labels = kc::DeviceBuffer<float>(count(b));
    }
    // The held-out set lives on the device, padded to whole batches (zero
    // features, id 0: valid rows whose outputs are ignored).
    eval_chunks_ = (eval.size() + b - 1) / b;
    const int64_t rows = eval_chunks_ * b;
    eval_dense_ = kc::DeviceBuffer<float>(padded(eval.dense, count(rows * eval.num_dense)));
    eval_ids_ = kc::DeviceBuffer<int32_t>(padded(eval.categorical, count(rows * tables)));
    eval_stage_ = kc::DeviceBuffer<float>(count(b * eval.num_dense));
    eval_logits_ = kc::DeviceBuffer<float>(count(rows));
    // The uploads above ran on the legacy default stream, which the
    // non-blocking compute stream does not wait for: finish them (setup).
    kc::counted_stream_synchronize(nullptr);
  }

  ~CudaRun() override {
    // Let pending copies and steps finish before their buffers go.
    cudaStreamSynchronize(copy_.get());  // sync outside the iteration: destructor
    cudaStreamSynchronize(compute_.get());  // sync outside the iteration: destructor
  }

  DeviceStep* device_step() override { return this; }
  void* stream() override { return compute_.get(); }
  int variants() const override { return 2; }  // one step per input slot
  int expected_host_syncs() const override {
    return options_.update_mode == kc::EmbeddingUpdateMode::kSyncFree ? 0 : 1;
  }

  int begin(int64_t iteration) override {
    NvtxRange range("data");
    const int64_t index = iteration % setup_.training.iterations_per_epoch;
    int s = slots_[0].batch_index == index ? 0 : slots_[1].batch_index == index ? 1 : -1;
    if (s < 0) {  // not prefetched (first iteration, or an iteration out of order)
      s = last_slot_ ^ 1;
      enqueue_copy(s, index);
    }
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), slots_[s].copied.get(), 0));
    set_device_float(model_->learning_rate(), static_cast<float>(setup_.schedule.at(iteration)),
                     compute_.get());
    return s;
  }

  void enqueue(int slot) override { model_->train_step(input(slot), compute_.get()); }

  void end(int64_t iteration, int s) override {
    PERFLAB_CUDA_CHECK(cudaEventRecord(slots_[s].consumed.get(), compute_.get()));
    last_slot_ = s;
    if (pending_losses_++ == 0) first_pending_ = iteration;
    NvtxRange range("data");
    const int64_t next = (iteration + 1) % setup_.training.iterations_per_epoch;
    const int other = s ^ 1;
    if (slots_[s].batch_index != next && slots_[other].batch_index != next) {
      enqueue_copy(other, next);
    }
  }

  double take_loss() override {
    if (pending_losses_ == 0) return 0.0;
    const DeviceLoss loss = model_->take_loss(compute_.get());
    const double mean = loss.nonfinite ? std::numeric_limits<double>::quiet_NaN()
                                       : loss.sum / static_cast<double>(pending_losses_);
    if (loss.nonfinite && first_nonfinite_ < 0) first_nonfinite_ = first_pending_ + std::max<int64_t>(0, loss.first_nonfinite);
    pending_losses_ = 0;
    return mean;
  }

  /// The first iteration whose loss was not finite (counted on the device,
  /// read with the loss: no host sync in a step), and the first parameter
  /// tensor holding a NaN or an infinity (read back now, after the divergence).
  std::string nonfinite_detail() override {
    wait();
    std::string out = first_nonfinite_ >= 0
                          ? fmt::format("first non-finite loss at iteration {} (flagged on the device)", first_nonfinite_)
                          : std::string();
    const std::string tensor = model_->first_nonfinite_tensor();
    if (!tensor.empty()) out += (out.empty() ? "" : "; ") + ("first non-finite parameter: " + tensor);
    return out;
  }

  double evaluate() override {
    NvtxRange range("eval");
    const int64_t b = options_.batch;
    const int64_t num_dense = eval_.num_dense;
    const int64_t tables = eval_.num_tables();
    for (int64_t chunk = 0; chunk < eval_chunks_; ++chunk) {
      const int64_t first = chunk * b;
      // Staged so the first layer's input is 16-byte aligned (cuBLASLt).
      PERFLAB_CUDA_CHECK(cudaMemcpyAsync(eval_stage_.data(), eval_dense_.data() + first * num_dense,
                                         count(b * num_dense) * sizeof(float),
                                         cudaMemcpyDeviceToDevice, compute_.get()));
      model_->forward_logits({eval_stage_.data(), eval_ids_.data() + first * tables, nullptr},
                             eval_logits_.data() + first, compute_.get());
    }
    std::vector<float> probabilities(count(eval_.size()));
    if (!probabilities.empty()) {
      kc::counted_copy_to_host(probabilities.data(), eval_logits_.data(),
                               probabilities.size() * sizeof(float), compute_.get());
    }
    kernels::cpu::sigmoid(eval_.size(), probabilities.data(), probabilities.data());
    return kernels::cpu::roc_auc(probabilities.data(), eval_.labels.data(), eval_.size());
  }

  /// The gate: one step on the CPU model and on the GPU model from the same
  /// seed (the harness adds the host-sync and graph record).
  CorrectnessReport check_correctness() override {
    const BatchView batch = train_.batch(0, options_.batch);
    const StepComparison step = compare_one_step(setup_.shape, seed_, options_, batch,
                                                 static_cast<float>(setup_.schedule.at(0)));
    return {step.passed, (step.passed ? "" : "MISMATCH: ") + step.detail};
  }

  std::vector<float> dense_parameter(size_t index) override {
    wait();
    return model_->dense_parameter(index);
  }
  std::vector<float> embedding_row(int table, int64_t row) override {
    wait();
    return model_->embedding_row(table, row);
  }

 private:
  static CudaModelOptions options_for(const DlrmSetup& setup, const ToggleSet& toggles) {
    PERFLAB_CUDA_CHECK(cudaSetDevice(0));
    CudaModelOptions o;
    o.batch = setup.batch_size;
    o.precision = setup.precision == "bf16" ? kc::Precision::kBf16 : kc::Precision::kTf32;
    o.fused = toggles[Toggle::kFused].in_effect;
    o.update_mode = toggles[Toggle::kSyncFree].in_effect ? kc::EmbeddingUpdateMode::kSyncFree
                                                         : kc::EmbeddingUpdateMode::kSynchronising;
    return o;
  }

  static std::unique_ptr<CudaModel> make_model(const DlrmSetup& setup, uint64_t seed,
                                               const CudaModelOptions& options) {
    CpuModel init(setup.shape, seed);  // the same initial parameters as the cpu backend
    return std::make_unique<CudaModel>(init, options);
  }

  DeviceBatch input(int s) const {
    return {slots_[s].dense.data(), slots_[s].ids.data(), slots_[s].labels.data()};
  }

  /// Copies batch `index` of the epoch into slot `s` on the copy stream,
  /// after the last step that read the slot.
  void enqueue_copy(int s, int64_t index) {
    InputSlot& slot = slots_[s];
    const int64_t b = options_.batch;
    const int64_t num_dense = train_.num_dense;
    const int64_t tables = train_.num_tables();
    cudaStream_t copy = copy_.get();
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy, slot.consumed.get(), 0));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.dense.data(), dense_.data() + index * b * num_dense,
                                       slot.dense.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.ids.data(), ids_.data() + index * b * tables,
                                       slot.ids.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.labels.data(), labels_.data() + index * b,
                                       slot.labels.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaEventRecord(slot.copied.get(), copy));
    slot.batch_index = index;
  }

  /// Waits for every step issued so far (outside the iterations: tests and the gate).
  void wait() { PERFLAB_CUDA_CHECK(cudaStreamSynchronize(compute_.get())); }  // sync outside the iteration: reading parameters back

  const DlrmSetup& setup_;
  const Dataset& train_;
  const Dataset& eval_;
  uint64_t seed_;
  CudaModelOptions options_;
  kc::Stream compute_, copy_;  // declared before everything that enqueues on them
  std::unique_ptr<CudaModel> model_;
  kc::PinnedBuffer<float> dense_;
  kc::PinnedBuffer<int32_t> ids_;
  kc::PinnedBuffer<float> labels_;
  std::array<InputSlot, 2> slots_;
  int last_slot_ = 1;  // the first batch goes to slot 0
  int64_t pending_losses_ = 0;
  int64_t first_pending_ = 0;     ///< Iteration of the first step since the last take_loss.
  int64_t first_nonfinite_ = -1;  ///< First iteration whose loss was not finite.
  int64_t eval_chunks_ = 0;
  kc::DeviceBuffer<float> eval_dense_;
  kc::DeviceBuffer<int32_t> eval_ids_;
  kc::DeviceBuffer<float> eval_stage_;
  kc::DeviceBuffer<float> eval_logits_;
};

}  // namespace

std::unique_ptr<DlrmCudaRun> make_dlrm_cuda_run(const DlrmSetup& setup, const Dataset& train,
                                                const Dataset& eval, uint64_t seed,
                                                const ToggleSet& toggles) {
  // The GPU reads ids unchecked: validate both splits once, on the host.
  train.validate();
  eval.validate();
  if (setup.batch_size < 1 || setup.training.iterations_per_epoch < 1 ||
      setup.batch_size * setup.training.iterations_per_epoch > train.size()) {
    throw UsageError(fmt::format("dlrm cuda: {} batches of {} do not fit the {} training samples",
                                 setup.training.iterations_per_epoch, setup.batch_size, train.size()));
  }
  return std::make_unique<CudaRun>(setup, train, eval, seed, toggles);
}

}  // namespace perflab::dlrm
