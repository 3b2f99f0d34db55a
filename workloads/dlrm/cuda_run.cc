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
// CUDA graphs (only with sync-free, whose step makes no host sync): the
// first kEagerSteps iterations run eagerly (loading every kernel and
// letting cuBLASLt and CUB settle before capture; they run on the compute
// stream itself, as nothing here allocates during a step), then the step of
// each of the two input slots (everything after the input copy and the
// learning-rate write) is captured once, in global capture mode, and
// replayed with cudaGraphLaunch.
// Host syncs: counted (kernels/cuda/host_sync.h) around each train_iteration
// only; synchronize(), take_training_loss() and evaluate() are the runner's
// boundaries outside the timed iterations.
#include "workloads/dlrm/cuda_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness/cuda_event_timer.h"
#include "harness/error.h"
#include "kernels/cpu/auc.h"
#include "kernels/cpu/bce.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/cuda_model.h"

namespace perflab::dlrm {
namespace {

namespace kc = perflab::kernels::cuda;

/// Eager iterations before graph capture.
constexpr int64_t kEagerSteps = 2;

size_t count(int64_t n) { return static_cast<size_t>(n); }

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t event = nullptr;
  Event() { PERFLAB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct GraphExec {
  cudaGraphExec_t exec = nullptr;
  GraphExec() = default;
  ~GraphExec() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
};

/// A pinned host copy of an array (so async copies from it overlap compute).
template <typename T>
class Pinned {
 public:
  explicit Pinned(const std::vector<T>& source) : count_(source.size()) {
    if (count_ == 0) return;
    PERFLAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
    std::memcpy(data_, source.data(), count_ * sizeof(T));
  }
  ~Pinned() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  const T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

/// One device input buffer of the double-buffered pipeline.
struct InputSlot {
  kc::DeviceBuffer<float> dense;
  kc::DeviceBuffer<int32_t> ids;
  kc::DeviceBuffer<float> labels;
  Event copied;    // recorded on `copy` after the batch landed
  Event consumed;  // recorded on `compute` after the step that read it
  int64_t batch_index = -1;  // which batch of the epoch the slot holds (or is receiving)
};

template <typename T>
std::vector<T> padded(const std::vector<T>& values, size_t size) {
  std::vector<T> out(size, T{0});
  std::copy(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(std::min(size, values.size())),
            out.begin());
  return out;
}

class CudaRun final : public DlrmCudaRun {
 public:
  CudaRun(const DlrmSetup& setup, const Dataset& train, const Dataset& eval, uint64_t seed,
          const ToggleSet& toggles)
      : setup_(setup),
        train_(train),
        eval_(eval),
        seed_(seed),
        options_(options_for(setup, toggles)),
        model_(make_model(setup, seed, options_)),
        timer_(compute_.stream),
        dense_(train.dense),
        ids_(train.categorical),
        labels_(train.labels) {
    const bool sync_free = options_.update_mode == kc::EmbeddingUpdateMode::kSyncFree;
    const ToggleState& graphs = toggles[Toggle::kCudaGraphs];
    if (graphs.in_effect && sync_free) {
      graphs_ = true;
      graphs_note_ = fmt::format(
          "cuda graphs: in use (iterations after the first {} replay the captured step of their "
          "input buffer)",
          kEagerSteps);
    } else if (graphs.in_effect) {
      graphs_note_ =
          "cuda graphs: requested but not used: the synchronising embedding update reads the "
          "unique-row count back inside the iteration, which graph capture cannot hold; it needs "
          "sync-free";
    } else if (graphs.requested) {
      graphs_note_ = "cuda graphs: requested, not in effect: " + graphs.reason;
    } else {
      graphs_note_ = "cuda graphs: off";
    }
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
    cudaStreamSynchronize(copy_.stream);  // sync outside the iteration: destructor
    cudaStreamSynchronize(compute_.stream);  // sync outside the iteration: destructor
  }

  void train_iteration(int64_t iteration) override {
    const int64_t syncs_before = kc::host_sync_count();
    const int64_t per_epoch = setup_.plan.iterations_per_epoch;
    const int64_t index = iteration % per_epoch;
    int s = slots_[0].batch_index == index ? 0 : slots_[1].batch_index == index ? 1 : -1;
    {
      NvtxRange range("data");
      if (s < 0) {  // not prefetched (first iteration, or an iteration out of order)
        s = last_slot_ ^ 1;
        enqueue_copy(s, index);
      }
      PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(compute_.stream, slots_[s].copied.event, 0));
      set_device_float(model_->learning_rate(), static_cast<float>(setup_.schedule.at(iteration)),
                       compute_.stream);
    }
    if (graphs_ && steps_ >= kEagerSteps) {
      // Both slots' graphs at once, so only one iteration (a warm-up one with
      // the runner's default of 3) pays for capture and instantiation.
      if (graph_[s].exec == nullptr) {
        capture(0);
        capture(1);
      }
      PERFLAB_CUDA_CHECK(cudaGraphLaunch(graph_[s].exec, compute_.stream));
    } else {
      model_->train_step(input(s), compute_.stream);
    }
    PERFLAB_CUDA_CHECK(cudaEventRecord(slots_[s].consumed.event, compute_.stream));
    last_slot_ = s;
    ++steps_;
    ++pending_losses_;
    {
      NvtxRange range("data");
      const int64_t next = (iteration + 1) % per_epoch;
      const int other = s ^ 1;
      if (slots_[s].batch_index != next && slots_[other].batch_index != next) {
        enqueue_copy(other, next);
      }
    }
    const int64_t syncs = kc::host_sync_count() - syncs_before;
    syncs_.min_per_iteration = syncs_.iterations == 0 ? syncs : std::min(syncs_.min_per_iteration, syncs);
    syncs_.max_per_iteration = std::max(syncs_.max_per_iteration, syncs);
    syncs_.total += syncs;
    ++syncs_.iterations;
  }

  double take_training_loss() override {
    if (pending_losses_ == 0) return 0.0;
    const DeviceLoss loss = model_->take_loss(compute_.stream);
    const double mean = loss.nonfinite ? std::numeric_limits<double>::quiet_NaN()
                                       : loss.sum / static_cast<double>(pending_losses_);
    pending_losses_ = 0;
    return mean;
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
                                         cudaMemcpyDeviceToDevice, compute_.stream));
      model_->forward_logits({eval_stage_.data(), eval_ids_.data() + first * tables, nullptr},
                             eval_logits_.data() + first, compute_.stream);
    }
    std::vector<float> probabilities(count(eval_.size()));
    if (!probabilities.empty()) {
      kc::counted_copy_to_host(probabilities.data(), eval_logits_.data(),
                               probabilities.size() * sizeof(float), compute_.stream);
    }
    kernels::cpu::sigmoid(eval_.size(), probabilities.data(), probabilities.data());
    return kernels::cpu::roc_auc(probabilities.data(), eval_.labels.data(), eval_.size());
  }

  /// The runner's window boundary (never inside an iteration): a plain,
  /// uncounted wait for the compute stream, which has waited on every copy
  /// its steps read.
  void synchronize() override { PERFLAB_CUDA_CHECK(cudaStreamSynchronize(compute_.stream)); }  // sync outside the iteration: the runner's window boundary

  DeviceIterationTimer* device_timer() override { return &timer_; }

  CorrectnessReport check_correctness() override {
    const BatchView batch = train_.batch(0, options_.batch);
    const StepComparison step = compare_one_step(setup_.shape, seed_, options_, batch,
                                                 static_cast<float>(setup_.schedule.at(0)));
    const bool sync_free = options_.update_mode == kc::EmbeddingUpdateMode::kSyncFree;
    const int64_t expected = sync_free ? 0 : 1;
    const HostSyncStats& s = syncs_;
    const bool syncs_ok =
        s.iterations == 0 || (s.min_per_iteration == expected && s.max_per_iteration == expected);
    const std::string per_iteration =
        s.min_per_iteration == s.max_per_iteration
            ? fmt::format("{}", s.max_per_iteration)
            : fmt::format("{} to {}", s.min_per_iteration, s.max_per_iteration);
    CorrectnessReport r;
    r.passed = step.passed && syncs_ok;
    r.detail = fmt::format(
        "{}{}; host syncs per iteration: {} ({} in {} iterations; expected {} with the {} embedding "
        "update{}); {}",
        step.passed ? "" : "MISMATCH: ", step.detail, per_iteration, s.total, s.iterations,
        expected, sync_free ? "sync-free" : "synchronising", syncs_ok ? "" : ": VIOLATED",
        graphs_note_);
    return r;
  }

  HostSyncStats host_syncs() const override { return syncs_; }
  bool graphs_in_use() const override { return graphs_; }
  std::string graphs_note() const override { return graphs_note_; }

  std::vector<float> dense_parameter(size_t index) override {
    synchronize();
    return model_->dense_parameter(index);
  }
  std::vector<float> embedding_row(int table, int64_t row) override {
    synchronize();
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
    cudaStream_t copy = copy_.stream;
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy, slot.consumed.event, 0));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.dense.data(), dense_.data() + index * b * num_dense,
                                       slot.dense.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.ids.data(), ids_.data() + index * b * tables,
                                       slot.ids.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.labels.data(), labels_.data() + index * b,
                                       slot.labels.bytes(), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaEventRecord(slot.copied.event, copy));
    slot.batch_index = index;
  }

  /// Captures the step reading slot `s` into graph_[s] (nothing runs).
  void capture(int s) {
    struct Graph {
      cudaGraph_t graph = nullptr;
      ~Graph() {
        if (graph != nullptr) cudaGraphDestroy(graph);
      }
    } captured;
    PERFLAB_CUDA_CHECK(cudaStreamBeginCapture(compute_.stream, cudaStreamCaptureModeGlobal));
    try {
      model_->train_step(input(s), compute_.stream);
    } catch (...) {
      cudaStreamEndCapture(compute_.stream, &captured.graph);  // leave capture mode, then rethrow
      throw;
    }
    PERFLAB_CUDA_CHECK(cudaStreamEndCapture(compute_.stream, &captured.graph));
    PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&graph_[s].exec, captured.graph, 0));
  }

  const DlrmSetup& setup_;
  const Dataset& train_;
  const Dataset& eval_;
  uint64_t seed_;
  CudaModelOptions options_;
  Stream compute_, copy_;  // declared before everything that enqueues on them
  std::unique_ptr<CudaModel> model_;
  CudaEventTimer timer_;
  Pinned<float> dense_;
  Pinned<int32_t> ids_;
  Pinned<float> labels_;
  std::array<InputSlot, 2> slots_;
  int last_slot_ = 1;  // the first batch goes to slot 0
  std::array<GraphExec, 2> graph_;
  bool graphs_ = false;
  std::string graphs_note_;
  int64_t steps_ = 0;
  int64_t pending_losses_ = 0;
  HostSyncStats syncs_;
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
  if (setup.batch_size < 1 || setup.plan.iterations_per_epoch < 1 ||
      setup.batch_size * setup.plan.iterations_per_epoch > train.size()) {
    throw UsageError(fmt::format("dlrm cuda: {} batches of {} do not fit the {} training samples",
                                 setup.plan.iterations_per_epoch, setup.batch_size, train.size()));
  }
  return std::make_unique<CudaRun>(setup, train, eval, seed, toggles);
}

}  // namespace perflab::dlrm
