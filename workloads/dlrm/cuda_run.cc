// The cuda backend's training run (see cuda_run.h).
//
// Streams: `compute` runs every step, evaluation and loss read-back, at the
// device's most urgent priority (the model's side streams are at the
// default, the least urgent); `copy` runs the host-to-device copies of the
// input batches.
// Input pipeline: the training set is packed once into pinned host memory,
// a block a batch (workloads/dlrm/input_pack.h: dense rows, ids, labels),
// so a batch is one copy; two device input slots alternate. While step i runs on `compute` from one
// slot, the batch of step i+1 is copied into the other slot on `copy`
// (waiting on the `consumed` event of the step that last read that slot);
// step i+1 then waits on that slot's `copied` event. Only stream-ordered
// waits: the host never blocks.
// Learning rate: the step's first kernel (scheduled_learning_rate) writes
// the schedule's rate at a step counter kept on the device and advances
// it, so a graph replay takes the next step's rate and nothing runs
// between two replays for it (a kernel there, the rate as its argument,
// sat between the graphs: a launch and its gap more at each step
// boundary). The counter starts at 0; begin() sets it only when an
// iteration does not follow the last one (one out of order).
// The iteration is a DeviceStep (harness/device_step.h): begin() waits for
// the slot's input (and sets the step counter when needed), enqueue(slot) is the
// training step reading that slot (one variant per input slot: what the
// harness captures as a CUDA graph when --cuda-graphs is in effect), end()
// records the slot's `consumed` event and prefetches the next batch. The
// harness counts host syncs around the whole iteration: the synchronising
// embedding update makes one, the sync-free one none.
// Across ranks (exchange=nccl): a slot holds the global batch's ids and
// this rank's slice of dense features and labels; evaluation runs every
// held-out chunk through the model-parallel forward (each rank its slice's
// logits), then one grouped NCCL send/receive gathers the logits on rank 0,
// which computes the AUC and hands it to the others.
#include "workloads/dlrm/cuda_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness/phase.h"
#include "harness/device_step.h"
#include "base/error.h"
#include "kernels/cpu/auc.h"
#include "kernels/cpu/bce.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "workloads/dlrm/cuda_compare.h"
#include "workloads/dlrm/cuda_convert.h"
#include "workloads/dlrm/checkpoint.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/input_pack.h"

#ifdef PERFLAB_HAVE_NCCL
#include "collectives/nccl.h"
#endif

namespace perflab::dlrm {
namespace {

namespace kc = perflab::kernels::cuda;

size_t count(int64_t n) { return static_cast<size_t>(n); }

#ifdef PERFLAB_HAVE_NCCL
/// Across ranks, how long a host wait on NCCL work may take before the
/// communicator is aborted (a peer that died never completes its part).
constexpr double kNcclWaitS = 300;
#endif

/// One device input buffer of the double-buffered pipeline: a packed block
/// (PackedBatchLayout).
struct InputSlot {
  kc::DeviceBuffer<std::byte> block;
  kc::Event copied;    // recorded on `copy` after the batch landed
  kc::Event consumed;  // recorded on `compute` after the step that read it
  int64_t batch_index = -1;  // which batch of the epoch the slot holds (or is receiving)
};

/// Rows of `cols` values into rows of `width` (zero past cols): the dense
/// features as the model's first layer reads them in place
/// (CudaModel::dense_input_width), so a step copies none.
std::vector<float> padded_rows(const std::vector<float>& values, int64_t cols, int64_t width) {
  const auto rows = static_cast<int64_t>(values.size()) / cols;
  std::vector<float> out(static_cast<size_t>(rows * width), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(values.begin() + r * cols, values.begin() + (r + 1) * cols, out.begin() + r * width);
  }
  return out;
}

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
          const ToggleSet& toggles, const DlrmNccl& nccl)
      : setup_(setup),
        train_(train),
        eval_(eval),
        seed_(seed),
        nccl_(starting_run(nccl)),
        sharp_(toggles[Toggle::kSharp].in_effect),
        options_(options_for(setup, toggles, nccl)),
        model_(make_model(setup, seed, options_)),
        layout_(packed_batch_layout(model_->local_batch(), model_->dense_input_width(), options_.batch,
                                    train.num_tables(), options_.dense_input_bf16)),
        packed_(count(setup.training.iterations_per_epoch * layout_.bytes)) {
    const int64_t b = options_.batch;
    const int64_t n = model_->local_batch();  // b on one GPU
    const int tables = train.num_tables();
    const int64_t width = model_->dense_input_width();
    for (int64_t index = 0; index < setup.training.iterations_per_epoch; ++index) {
      pack_batch(train, index, model_->first_sample(), layout_, packed_.data() + index * layout_.bytes);
    }
    for (InputSlot& slot : slots_) slot.block = kc::DeviceBuffer<std::byte>(count(layout_.bytes));
    // The held-out set lives on the device, padded to whole batches (zero
    // features, id 0: valid rows whose outputs are ignored).
    eval_chunks_ = (eval.size() + b - 1) / b;
    const int64_t rows = eval_chunks_ * b;
    eval_dense_ = kc::DeviceBuffer<float>(padded(padded_rows(eval.dense, eval.num_dense, width), count(rows * width)));
    eval_ids_ = kc::DeviceBuffer<int32_t>(padded(eval.categorical, count(rows * tables)));
    eval_logits_ = kc::DeviceBuffer<float>(count(eval_chunks_ * n));  // chunk by chunk, this rank's samples
    if (nccl_.comm != nullptr) gather_setup();
    // The schedule's step counter starts at 0 (next_lr_step_): a run's
    // first iteration writes nothing in begin(), so a launch count taken
    // there sees the step alone, as declared.
    PERFLAB_CUDA_CHECK(cudaMemset(lr_step_.data(), 0, sizeof(int64_t)));
    // The uploads above ran on the legacy default stream, which the
    // non-blocking compute stream does not wait for: finish them (setup).
    kc::counted_stream_synchronize(nullptr);
    if (setup.dependent_launch) {
      int device = 0;
      PERFLAB_CUDA_CHECK(cudaGetDevice(&device));
      dependent_launch_ = kc::device_supports_dependent_launch(device);
    }
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
    ScopedPhase range("data");
    const int64_t index = iteration % setup_.training.iterations_per_epoch;
    int s = slots_[0].batch_index == index ? 0 : slots_[1].batch_index == index ? 1 : -1;
    if (s < 0) {  // not prefetched (first iteration, or an iteration out of order)
      s = last_slot_ ^ 1;
      enqueue_copy(s, index);
    }
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), slots_[s].copied.get(), 0));
    // The step that follows runs once (eagerly or replayed) and advances
    // the counter: consecutive iterations need no write here.
    if (iteration != next_lr_step_) set_device_int64(lr_step_.data(), iteration, compute_.get());
    next_lr_step_ = iteration + 1;
    return s;
  }

  void enqueue(int slot) override {
    // Captured with the step under graphs: its kernels' programmatic edges too.
    const kc::DependentLaunches dependent(dependent_launch_);
    scheduled_learning_rate(setup_.schedule, lr_step_.data(), model_->learning_rate(), compute_.get());
    model_->train_step(input(slot), compute_.get());
  }

  /// The learning rate, then the model's step (both slots alike). begin()'s
  /// counter write is left out: consecutive iterations make none.
  LaunchPlan launch_plan(int) override {
    LaunchPlan plan;
    kernels::append_launches(plan, scheduled_learning_rate_launches(), "learning rate");
    for (DeclaredKernel& k : model_->step_launches()) plan.push_back(std::move(k));
    return plan;
  }

  /// --sharp on the NCCL path: whether the gradient all-reduce was reduced
  /// in the network (NCCL's log); on one GPU there is nothing to reduce.
  std::vector<std::pair<Toggle, ToggleState>> toggle_outcomes() override {
    if (!sharp_) return {};
    return {{Toggle::kSharp, dlrm_sharp_outcome(nccl_)}};
  }

  /// The NCCL path's facts (debug log, ranks, the all-reduce's algorithm);
  /// with gemm_algorithms=tuned, every GEMM's timed candidates and choice.
  nlohmann::json run_facts() override {
    nlohmann::json facts = nccl_.comm == nullptr ? nlohmann::json::object()
                                                 : dlrm_nccl_facts(nccl_, model_->gradient_all_reduce_bytes());
    if (!model_->gemm_choices().empty()) {
      nlohmann::json gemms = nlohmann::json::array();
      for (const GemmTuning& t : model_->gemm_choices()) {
        nlohmann::json times = nlohmann::json::array();
        for (double ms : t.choice.median_ms) times.push_back(std::isnan(ms) ? nlohmann::json() : nlohmann::json(ms));
        gemms.push_back({{"layer", t.layer}, {"gemm", t.choice.gemm}, {"chosen", t.choice.chosen},
                         {"kept", t.choice.kept}, {"candidate_median_ms", times}});
      }
      facts["gemm_algorithms"] = gemms;
    }
    // dependent_launch: asked for, and whether this GPU could.
    facts["dependent_launch"] = {{"requested", setup_.dependent_launch}, {"in_effect", dependent_launch_}};
    if (setup_.dependent_launch && !dependent_launch_) {
      facts["dependent_launch"]["reason"] =
          "this GPU's compute capability is below 9.0, or this build's kernels were compiled for an architecture "
          "below compute_90 (their wait compiled out): no programmatic dependent launch";
    }
    return facts;
  }

  void end(int64_t iteration, int s) override {
    PERFLAB_CUDA_CHECK(cudaEventRecord(slots_[s].consumed.get(), compute_.get()));
    last_slot_ = s;
    if (pending_losses_++ == 0) first_pending_ = iteration;
    ScopedPhase range("data");
    const int64_t next = (iteration + 1) % setup_.training.iterations_per_epoch;
    const int other = s ^ 1;
    if (slots_[s].batch_index != next && slots_[other].batch_index != next) {
      enqueue_copy(other, next);
    }
  }

  double take_loss() override {
    if (pending_losses_ == 0) return 0.0;
    drain();
    const DeviceLoss loss = model_->take_loss(compute_.get());
    // Across ranks each holds its shares of the batches' means: summed. The
    // first non-finite step is the earliest any rank saw (a rank that did
    // not diverge says "never").
    const double never = std::numeric_limits<double>::max();
    double total[2] = {loss.sum, loss.nonfinite ? 1.0 : 0.0};
    double first = loss.nonfinite ? static_cast<double>(std::max<int64_t>(0, loss.first_nonfinite)) : never;
    if (nccl_.comm != nullptr) {
      nccl_.comm->all_reduce_host(total, 2, collectives::ReduceOp::kSum);
      nccl_.comm->all_reduce_host(&first, 1, collectives::ReduceOp::kMin);
    }
    const double mean = total[1] != 0 ? std::numeric_limits<double>::quiet_NaN()
                                      : total[0] / static_cast<double>(pending_losses_);
    if (total[1] != 0 && first_nonfinite_ < 0 && first != never) {
      first_nonfinite_ = first_pending_ + static_cast<int64_t>(first);
    }
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
    ScopedPhase range("evaluation");
    const int64_t b = options_.batch;
    const int64_t n = model_->local_batch();
    const int64_t width = model_->dense_input_width();  // padded rows (padded_rows)
    const int64_t tables = eval_.num_tables();
    for (int64_t chunk = 0; chunk < eval_chunks_; ++chunk) {
      const int64_t first = chunk * b;
      // Read in place: rows of `width` floats (a multiple of 8) keep every
      // chunk 16-byte aligned, as cuBLASLt's algorithms need.
      model_->forward_logits({eval_dense_.data() + (first + model_->first_sample()) * width,
                              eval_ids_.data() + first * tables, nullptr, width},
                             eval_logits_.data() + chunk * n, compute_.get());
    }
    if (nccl_.comm == nullptr) return auc_of(eval_logits_.data());
    nccl_.comm->set_stream(compute_.get());
    nccl_.comm->send_recv(eval_transfers_.data(), eval_transfers_.size(), collectives::DataType::kFloat32);
    drain();
    double auc = nccl_.comm->rank() == 0 ? auc_of(eval_gathered_.data()) : 0.0;
    nccl_.comm->broadcast_host(&auc, sizeof(auc), 0);
    return auc;
  }

  /// The gate: one step on the CPU model and on the GPU model from the same
  /// seed (the harness adds the host-sync and graph record).
  CorrectnessReport check_correctness() override {
    // The comparison's model uses the same NCCL communicator on its own
    // stream: nothing of this run's may still be in flight on it.
    if (nccl_.comm != nullptr) wait();
    const BatchView batch = train_.batch(0, options_.batch);
    // The step compared is launched as the run's is (dependent_launch).
    const kc::DependentLaunches dependent(dependent_launch_);
    const StepComparison step = compare_one_step(setup_.shape, seed_, options_, batch,
                                                 static_cast<float>(setup_.schedule.at(0)));
    // Across ranks each compares its own tables: every rank passes or none.
    double failed = step.passed ? 0.0 : 1.0;
    if (nccl_.comm != nullptr) nccl_.comm->all_reduce_host(&failed, 1, collectives::ReduceOp::kMax);
    const bool passed = failed == 0;
    std::string detail = step.detail;
    if (passed != step.passed) detail = "another rank's comparison failed; this rank's: " + detail;
    return {passed, (passed ? "" : "MISMATCH: ") + detail};
  }

  /// save_model: the trained model, downloaded into a CpuModel, to its
  /// checkpoint (one GPU: the setup refuses several ranks).
  void end_of_run() override {
    if (setup_.save_model.empty()) return;
    wait();
    CpuModel host(setup_.shape, seed_, EmbeddingStorage::kTables,
                  setup_.precision == "bf16" ? CpuPrecision::kBf16 : CpuPrecision::kFp32);
    model_->copy_to(host);
    save_checkpoint(host, seed_, checkpoint_path(setup_.save_model, seed_));
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
  static CudaModelOptions options_for(const DlrmSetup& setup, const ToggleSet& toggles, const DlrmNccl& nccl) {
    PERFLAB_CUDA_CHECK(cudaSetDevice(nccl.device));
    CudaModelOptions o = cuda_model_options(setup, toggles);
    o.comm = nccl.comm;
    o.overlap = nccl.comm != nullptr && setup.sharding.overlap;
    return o;
  }

  static std::unique_ptr<CudaModel> make_model(const DlrmSetup& setup, uint64_t seed,
                                               const CudaModelOptions& options) {
    // The same initial parameters as the cpu backend: the MLPs' from a
    // CpuModel without tables, the tables drawn on the GPU from the seed
    // (no host tables to fill and upload; the gate's CPU model has them).
    CpuModel init(setup.shape, seed, EmbeddingStorage::kExternal);
    CudaModelOptions o = options;
    o.table_seed = seed;
    return std::make_unique<CudaModel>(init, o);
  }

  /// The logit gather of evaluation: every rank sends its chunks' logits
  /// ([chunks, n_r]) to rank 0, which keeps rank j's at chunks × first_j.
  void gather_setup() {
    collectives::Communicator& comm = *nccl_.comm;
    const int64_t b = options_.batch;
    eval_transfers_.push_back({0, eval_logits_.data(), nullptr, count(eval_chunks_ * model_->local_batch())});
    if (comm.rank() != 0) return;
    eval_gathered_ = kc::DeviceBuffer<float>(count(eval_chunks_ * b));
    for (int j = 0; j < comm.size(); ++j) {
      const int64_t first = slice_first(b, comm.size(), j);
      const int64_t n = slice_first(b, comm.size(), j + 1) - first;
      eval_transfers_.push_back({j, nullptr, eval_gathered_.data() + eval_chunks_ * first, count(eval_chunks_ * n)});
    }
  }

  /// The ROC AUC of the held-out set from its logits on the device: in
  /// sample order on one GPU, in per-rank blocks ([chunks, n_j] from
  /// chunks × first_j) when gathered on rank 0.
  double auc_of(const float* logits) {
    const int64_t b = options_.batch;
    const int64_t stored = nccl_.comm == nullptr ? eval_.size() : eval_chunks_ * b;
    std::vector<float> host(count(stored));
    if (!host.empty()) {
      kc::counted_copy_to_host(host.data(), logits, host.size() * sizeof(float), compute_.get());
    }
    std::vector<float> probabilities(count(eval_.size()));
    if (nccl_.comm == nullptr) {
      std::copy(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(probabilities.size()), probabilities.begin());
    } else {
      const int ranks = nccl_.comm->size();
      for (int j = 0; j < ranks; ++j) {
        const int64_t first = slice_first(b, ranks, j);
        const int64_t n = slice_first(b, ranks, j + 1) - first;
        for (int64_t chunk = 0; chunk < eval_chunks_; ++chunk) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t sample = chunk * b + first + i;
            if (sample < eval_.size()) probabilities[count(sample)] = host[count(eval_chunks_ * first + chunk * n + i)];
          }
        }
      }
    }
    kernels::cpu::sigmoid(eval_.size(), probabilities.data(), probabilities.data());
    return kernels::cpu::roc_auc(probabilities.data(), eval_.labels.data(), eval_.size());
  }

  DeviceBatch input(int s) const {
    const std::byte* block = slots_[s].block.data();
    DeviceBatch batch{nullptr, reinterpret_cast<const int32_t*>(block + layout_.ids_offset),
                      reinterpret_cast<const float*>(block + layout_.labels_offset), model_->dense_input_width()};
    if (layout_.dense_bf16) {
      batch.dense_bf16 = block + layout_.dense_offset;
    } else {
      batch.dense = reinterpret_cast<const float*>(block + layout_.dense_offset);
    }
    return batch;
  }

  /// Copies batch `index` of the epoch into slot `s` on the copy stream,
  /// after the last step that read the slot: one packed block.
  void enqueue_copy(int s, int64_t index) {
    InputSlot& slot = slots_[s];
    cudaStream_t copy = copy_.get();
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy, slot.consumed.get(), 0));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slot.block.data(), packed_.data() + index * layout_.bytes,
                                       count(layout_.bytes), cudaMemcpyHostToDevice, copy));
    PERFLAB_CUDA_CHECK(cudaEventRecord(slot.copied.get(), copy));
    slot.batch_index = index;
  }

  /// Waits for every step issued so far (outside the iterations: tests and the gate).
  void wait() {
    drain();
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));  // sync outside the iteration: reading parameters back
  }
  /// Across ranks: the compute stream's NCCL work finished, polled against
  /// NCCL's error state with a timeout, so a rank whose peer died stops with
  /// one line (communicator aborted) instead of hanging in a host sync.
  void drain() {
#ifdef PERFLAB_HAVE_NCCL
    if (nccl_.comm != nullptr) collectives::nccl_wait(*nccl_.comm, compute_.get(), kNcclWaitS);
#endif
  }

  const DlrmSetup& setup_;
  const Dataset& train_;
  const Dataset& eval_;
  uint64_t seed_;
  DlrmNccl nccl_;   // null comm: one GPU
  bool sharp_ = false;  // --sharp requested (the step says whether it took effect)
  /// dependent_launch=on on a GPU that has it: enqueue()'s kernels launched so.
  bool dependent_launch_ = false;
  CudaModelOptions options_;
  // Declared before everything that enqueues on them. The step's own
  // stream is the most urgent: with side streams, the kernels on it (the
  // forward and the data-gradient chain, the step's critical path) take
  // SMs before the weight gradients, the sort and the update beside them.
  kc::Stream compute_{kc::greatest_stream_priority()}, copy_;
  std::unique_ptr<CudaModel> model_;
  PackedBatchLayout layout_;
  kc::PinnedBuffer<std::byte> packed_;  // the epoch's batches, a block each
  std::array<InputSlot, 2> slots_;
  int last_slot_ = 1;  // the first batch goes to slot 0
  kc::DeviceBuffer<int64_t> lr_step_{1};  ///< The schedule step the next step's rate is taken at.
  int64_t next_lr_step_ = 0;              ///< What lr_step_ holds once the steps enqueued so far ran.
  int64_t pending_losses_ = 0;
  int64_t first_pending_ = 0;     ///< Iteration of the first step since the last take_loss.
  int64_t first_nonfinite_ = -1;  ///< First iteration whose loss was not finite.
  int64_t eval_chunks_ = 0;
  kc::DeviceBuffer<float> eval_dense_;
  kc::DeviceBuffer<int32_t> eval_ids_;
  kc::DeviceBuffer<float> eval_logits_;
  kc::DeviceBuffer<float> eval_gathered_;  // rank 0 of an NCCL run: every rank's logits
  std::vector<collectives::PeerTransfer> eval_transfers_;
};

}  // namespace

CudaModelOptions cuda_model_options(const DlrmSetup& setup, const ToggleSet& toggles) {
  CudaModelOptions o;
  o.tune_gemms = setup.tune_gemms;
  o.search_gemms = setup.search_gemms;
  o.interaction_tensor_cores = setup.interaction_tensor_cores;
  o.side_streams = setup.side_streams;
  o.wgrad_streams = setup.wgrad_streams;
  o.dgrad_weights_transposed = setup.dgrad_weights_transposed;
  o.wgrad_dy_transposed = setup.wgrad_dy_transposed;
  o.batch = setup.batch_size;
  o.precision = setup.precision == "bf16" ? kc::Precision::kBf16 : kc::Precision::kTf32;
  // A bf16 model's batches are packed with bf16 dense rows: no cast a step.
  o.dense_input_bf16 = o.precision == kc::Precision::kBf16;
  o.fused = toggles[Toggle::kFused].in_effect;
  for (kc::Epilogues e : {kc::Epilogues::kCublasLt, kc::Epilogues::kOwnBackward, kc::Epilogues::kOwn}) {
    if (setup.epilogues == kc::epilogues_name(e)) o.epilogues = e;  // the parameter's values are these names
  }
  o.update_mode = toggles[Toggle::kSyncFree].in_effect ? kc::EmbeddingUpdateMode::kSyncFree
                                                       : kc::EmbeddingUpdateMode::kSynchronising;
  return o;
}

std::unique_ptr<DlrmCudaRun> make_dlrm_cuda_run(const DlrmSetup& setup, const Dataset& train,
                                                const Dataset& eval, uint64_t seed,
                                                const ToggleSet& toggles, const DlrmNccl& nccl) {
  // The GPU reads ids unchecked: validate both splits once, on the host.
  train.validate();
  eval.validate();
  if (setup.batch_size < 1 || setup.training.iterations_per_epoch < 1 ||
      setup.batch_size * setup.training.iterations_per_epoch > train.size()) {
    throw UsageError(fmt::format("dlrm cuda: {} batches of {} do not fit the {} training samples",
                                 setup.training.iterations_per_epoch, setup.batch_size, train.size()));
  }
  return std::make_unique<CudaRun>(setup, train, eval, seed, toggles, nccl);
}

}  // namespace perflab::dlrm
