// The DLRM model on the host behind one seed's run: the whole model in this
// process (CpuModel), or this rank's part of it (ShardedModel), with its
// running loss and the held-out evaluation every rank agrees on.
#include "workloads/dlrm/host_run.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "kernels/cpu/auc.h"
#include "workloads/dlrm/checkpoint.h"
#include "workloads/dlrm/sharded_model.h"

namespace perflab::dlrm {
namespace {

constexpr int64_t kEvalChunk = 16384;

// The two host models behind one run: the whole model in this process, or
// its part on this rank (sharded_model.h). The run below uses these few
// calls only.
void reserve(CpuModel& m, int64_t batch) { m.reserve_batch(batch); }
void reserve(ShardedModel& m, int64_t batch) { m.reserve_batch(batch); }
std::vector<DenseParameter> dense_parameters(CpuModel& m) { return m.dense_parameters(); }
std::vector<DenseParameter> dense_parameters(ShardedModel& m) { return m.dense().dense_parameters(); }
void save_trained(CpuModel& m, uint64_t seed, const std::filesystem::path& path) { save_checkpoint(m, seed, path); }
void save_trained(ShardedModel& /*m*/, uint64_t /*seed*/, const std::filesystem::path& /*path*/) {
  throw Error("internal: save_model on several ranks passed the setup's check");
}
bool holds_table(const CpuModel& /*m*/, int /*table*/) { return true; }
bool holds_table(const ShardedModel& m, int table) { return m.owns(table); }
nlohmann::json step_facts(const CpuModel& /*m*/) { return nlohmann::json::object(); }
nlohmann::json step_facts(const ShardedModel& m) { return m.step_facts(); }
void time_step_parts(PartTimer& /*parts*/, const CpuModel& /*m*/) {}
/// Several ranks: the host time blocked in communication, per step.
void time_step_parts(PartTimer& parts, const ShardedModel& m) {
  parts.samples("exposed communication", m.exposed_communication().ms_per_iteration());
}

/// One seed's model on the host and its running loss. With several ranks
/// every call is collective: the loss is summed over the ranks' shares and
/// rank 0 computes the AUC over the whole held-out set and hands it to the
/// others, so every rank decides the same. On one rank the communicator's
/// calls change nothing.
template <typename Model>
class HostRun final : public TrainableModel {
 public:
  template <typename... ModelArgs>
  HostRun(const DlrmSetup& setup, const Dataset& train, const Dataset& eval, collectives::Communicator& comm,
          uint64_t seed, ModelArgs&&... model_args)
      : setup_(setup), train_(train), eval_(eval), comm_(comm), seed_(seed),
        model_(std::forward<ModelArgs>(model_args)...) {
    reserve(model_, std::max(setup.batch_size, std::min(kEvalChunk, eval.size())));
    probabilities_.resize(static_cast<size_t>(eval.size()));
  }

  void run_iteration(int64_t iteration) override {
    int64_t index = iteration % setup_.training.iterations_per_epoch;
    BatchView batch = train_.batch(index * setup_.batch_size, setup_.batch_size);
    auto lr = static_cast<float>(setup_.schedule.at(iteration));
    const double loss = model_.train_step(batch, lr);
    if (first_nonfinite_ < 0 && !std::isfinite(loss)) first_nonfinite_ = iteration;
    losses_.add(loss);
  }

  /// The mean loss of the global batches since the last call: each rank's
  /// mean share, summed over the ranks.
  double take_loss() override {
    double loss = losses_.take();
    comm_.all_reduce_host(&loss, 1, collectives::ReduceOp::kSum);
    return loss;
  }

  /// The first iteration whose loss (this rank's share) was not finite, and
  /// the first parameter tensor (dense, then this rank's embedding tables)
  /// holding a non-finite value.
  std::string nonfinite_detail() override {
    std::string out = first_nonfinite_ >= 0 ? fmt::format("first non-finite loss at iteration {}", first_nonfinite_)
                                            : std::string();
    auto finite = [](const float* v, int64_t n) {
      return std::all_of(v, v + n, [](float x) { return std::isfinite(x); });
    };
    std::string tensor;
    for (const DenseParameter& p : dense_parameters(model_)) {
      if (!finite(p.value, p.size)) {
        tensor = p.name;
        break;
      }
    }
    const ModelShape& shape = model_.shape();
    for (size_t t = 0; tensor.empty() && t < shape.table_sizes.size(); ++t) {
      const int table = static_cast<int>(t);
      if (holds_table(model_, table) &&
          !finite(model_.embedding_row(table, 0), shape.table_sizes[t] * shape.embed_dim)) {
        tensor = fmt::format("embedding table {}", t);
      }
    }
    if (!tensor.empty()) out += (out.empty() ? "" : "; ") + ("first non-finite parameter: " + tensor);
    return out;
  }

  double evaluate() override { return evaluate_and_check().first; }

  /// Several ranks: the overlap and this rank's exposed communication time
  /// (recorded in throughput mode); nothing on one rank.
  nlohmann::json run_facts() override { return step_facts(model_); }
  void time_parts(PartTimer& parts) override { time_step_parts(parts, model_); }

  /// save_model: the trained model to its checkpoint (one rank only: see the constructor).
  void end_of_run() override {
    if (!setup_.save_model.empty()) save_trained(model_, seed_, checkpoint_path(setup_.save_model, seed_));
  }

  /// Throughput mode's gate on the CPU (the reference itself): the model
  /// still predicts finite probabilities and ranks the held-out set (AUC
  /// is a number); a diverged model fails it.
  CorrectnessReport check_correctness() override {
    const auto [auc, finite] = evaluate_and_check();
    CorrectnessReport r;
    r.passed = std::isfinite(auc) && finite;
    r.detail = fmt::format("predictions on {} held-out samples finite: {}; AUC {:.4f}", eval_.size(),
                           r.passed ? "yes" : "no", auc);
    return r;
  }

 private:
  /// The AUC on the held-out set and whether every prediction was finite,
  /// computed on rank 0 and the same on every rank.
  std::pair<double, bool> evaluate_and_check() {
    for (int64_t first = 0; first < eval_.size(); first += kEvalChunk) {
      int64_t count = std::min(kEvalChunk, eval_.size() - first);
      model_.predict(eval_.batch(first, count), probabilities_.data() + first);
    }
    double verdict[2] = {0, 0};  // AUC, every prediction finite
    if (comm_.rank() == 0) {
      verdict[0] = kernels::cpu::roc_auc(probabilities_.data(), eval_.labels.data(), eval_.size());
      verdict[1] = std::all_of(probabilities_.begin(), probabilities_.end(), [](float p) { return std::isfinite(p); });
    }
    comm_.broadcast_host(verdict, sizeof(verdict), 0);
    return {verdict[0], verdict[1] != 0};
  }

  const DlrmSetup& setup_;
  const Dataset& train_;
  const Dataset& eval_;
  collectives::Communicator& comm_;
  uint64_t seed_;
  Model model_;
  std::vector<float> probabilities_;
  LossMean losses_;
  int64_t first_nonfinite_ = -1;  ///< First iteration whose loss was not finite.
};

}  // namespace

std::unique_ptr<TrainableModel> make_host_run(const DlrmSetup& setup, const Dataset& train, const Dataset& eval,
                                              collectives::Communicator& comm, uint64_t seed) {
  if (comm.size() > 1) {
    return std::make_unique<HostRun<ShardedModel>>(setup, train, eval, comm, seed, setup.shape, seed, comm,
                                                   setup.batch_size, setup.sharding);
  }
  return std::make_unique<HostRun<CpuModel>>(setup, train, eval, comm, seed, setup.shape, seed,
                                             EmbeddingStorage::kTables,
                                             setup.precision == "bf16" ? CpuPrecision::kBf16 : CpuPrecision::kFp32);
}

}  // namespace perflab::dlrm
