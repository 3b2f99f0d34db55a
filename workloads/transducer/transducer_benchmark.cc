#include "workloads/transducer/transducer_benchmark.h"

#include <fmt/format.h>

#include "base/error.h"
#include "harness/host_memory.h"

namespace perflab::transducer {
namespace {

/// Host bytes the CPU run needs: inputs plus outputs of the worst-case size.
double cpu_bytes_needed(const Problem& pr) {
  const double values = static_cast<double>(pr.padded_rows()) * static_cast<double>(pr.row_width());
  return values * 4.0 * 2.0 + (pr.op == Op::kLoss ? static_cast<double>(pr.padded_rows()) * 3 * 8 : 0);
}

/// Device memory of the CUDA run: inputs and outputs at the rows the layout
/// stores (`stored`: padded, or the most a length set packs), and the loss
/// workspace (log-probabilities when unfused, five floats per row for the
/// statistics and alpha/beta).
double cuda_bytes_needed(const Problem& pr, bool fused, int64_t stored) {
  const auto rows = static_cast<double>(stored);
  if (pr.op == Op::kLoss) {
    const double value = pr.dtype == "fp32" ? 4 : 2;
    const auto v = static_cast<double>(pr.vocab);
    return 2 * rows * v * value + (fused ? 0 : rows * v * 4) + rows * 5 * 4;
  }
  const auto h = static_cast<double>(pr.hidden), b = static_cast<double>(pr.batch);
  const double frames = b * static_cast<double>(pr.max_time), steps = b * static_cast<double>(pr.max_labels + 1);
  return 4 * h * (2 * rows + 2 * frames + 2 * steps);  // dh, h; f, df; g, dg
}

}  // namespace

TransducerBenchmark::TransducerBenchmark(const RunContext& ctx)
    : backend_(ctx.backend()), toggles_(ctx.toggles()), problem_(parse_problem(ctx.params())) {
  if (backend_ == Backend::kCpu) {
    if (problem_.dtype != "fp32") {
      throw UsageError(fmt::format("transducer: the cpu backend computes fp32 {} only (dtype={}); use "
                                   "--backend cuda or --set dtype=fp32",
                                   problem_.op == Op::kLoss ? "logits" : "activations", problem_.dtype));
    }
    check_host_memory("transducer: this problem on the cpu backend", cpu_bytes_needed(problem_), "reduce batch");
  }
  // The cuda run draws its large inputs on the device (cuda_run.cc).
  TensorsOn tensors = TensorsOn::kHost;
#ifdef PERFLAB_TRANSDUCER_CUDA
  if (backend_ == Backend::kCuda) tensors = TensorsOn::kDevice;
#endif
  data_ = shared_problem_data(problem_, tensors);

  plan_.batch_size = problem_.batch;
  plan_.sample_unit = "sequences";
  plan_.precision = problem_.dtype;
  plan_.hyperparameters = {
      {"perflab_transducer_op", problem_.op == Op::kLoss ? "loss" : "joint"},
      {"perflab_transducer_layout", problem_.layout == Layout::kPacked ? "packed" : "padded"},
  };
  double mean_rows = 0;
  for (const LengthSet& s : data_->sets) mean_rows += static_cast<double>(s.packed_rows);
  mean_rows /= static_cast<double>(data_->sets.size());
  plan_.data = {{"batch", problem_.batch},
                {"max_time", problem_.max_time},
                {"max_labels", problem_.max_labels},
                {"vocab", problem_.vocab},
                {"hidden", problem_.hidden},
                {"dtype", problem_.dtype},
                {"length_sets", problem_.length_sets},
                {"padded_rows", problem_.padded_rows()},
                {"stored_rows", stored_rows(problem_, data_->sets)},
                {"mean_valid_rows", mean_rows}};
  plan_.work = iteration_work(problem_, *data_);
  if (backend_ == Backend::kCuda) {
    plan_.device_bytes =
        cuda_bytes_needed(problem_, toggles_[Toggle::kFused].in_effect, stored_rows(problem_, data_->sets));
    plan_.device_bytes_advice = "reduce batch, max_time, max_labels or vocab";
  }
}

std::unique_ptr<TimedStep> TransducerBenchmark::start_step(uint64_t /*seed*/) {
  // The inputs are the invocation's (data_seed); seeds repeat the measurement.
#ifdef PERFLAB_TRANSDUCER_CUDA
  if (backend_ == Backend::kCuda) return make_cuda_run(problem_, *data_, toggles_);
#endif
  return make_cpu_run(problem_, *data_);
}

}  // namespace perflab::transducer
