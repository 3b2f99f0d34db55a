// halo_conv on the cuda backend: the CUDA layer (cuda_layer.h) as the
// harness's DeviceStep, so warm-up, CUDA-event timing, graph capture
// (--cuda-graphs, with --sync-free) and the host-sync count are the
// harness's. Several ranks: one GPU each (the local rank), NCCL created over
// the run's MPI communicator for the halo send/receive and the weight
// gradient's all-reduce. The gate downloads the results and compares them
// with the CPU's unpartitioned convolution at TF32's tolerance, or bf16's
// (precision=bf16: gate.h says why each).
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "harness/device_step.h"
#include "harness/part_timer.h"
#include "base/error.h"
#include "kernels/cuda/check.h"
#include "workloads/halo_conv/cuda_layer.h"
#include "workloads/halo_conv/halo_conv_benchmark.h"
#ifdef PERFLAB_HAVE_NCCL
#include "collectives/nccl.h"
#endif

namespace perflab::halo_conv {
namespace {

class CudaHaloStep final : public TimedStep, public DeviceStep {
 public:
  CudaHaloStep(const HaloConvConfig& config, collectives::Communicator& host, collectives::Communicator* device,
               bool sync_free, uint64_t seed)
      : config_(config), host_(host), seed_(seed), layer_(config.layer, host, device, sync_free) {
    layer_.fill(seed);
  }

  DeviceStep* device_step() override { return this; }
  void* stream() override { return layer_.stream(); }
  int begin(int64_t /*iteration*/) override { return 0; }
  void enqueue(int /*variant*/) override { layer_.enqueue(); }
  int expected_host_syncs() const override { return layer_.expected_host_syncs(); }

  CorrectnessReport check_correctness() override {
    return check_against_whole(layer_.download(), host_, seed_,
                               config_.layer.bf16 ? bf16_tolerance(config_.ranks * config_.layer.per_rank)
                                                  : kTf32Tolerance);
  }

  nlohmann::json run_facts() override {
    nlohmann::json facts =
        halo_facts(config_, host_, layer_.halo_bytes_per_step(), config_.layer.bf16 ? "bf16" : "tf32");
    const auto [calls, via_forward] = layer_.data_gradient_calls();
    if (calls > 0) {
      facts["data_gradient"] =
          via_forward == 0 ? "cuDNN's backward-data pass"
                           : fmt::format("{} of {} calls as forward convolutions with flipped weights (cuDNN had no "
                                         "backward-data algorithm for their shape)",
                                         via_forward, calls);
      if (via_forward > 0) facts["data_gradient_fallback"] = layer_.data_gradient_fallback();
    }
    const auto [convolutions, staged] = layer_.staged_calls();
    facts["convolution_calls"] = convolutions;
    facts["staged_calls"] = staged;
    return facts;
  }

  /// The parts alone, between CUDA events on the step's stream.
  void time_parts(PartTimer& parts) override {
    parts.device(kTransferPart, layer_.stream(), [&] { layer_.enqueue_exchange_alone(); });
    parts.device(kComputePart, layer_.stream(), [&] { layer_.enqueue_compute_alone(); });
    if (config_.layer.backward) {
      parts.device(kAllReducePart, layer_.stream(), [&] { layer_.enqueue_all_reduce_alone(); });
    }
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& host_;
  uint64_t seed_;
  CudaHaloLayer layer_;
};

class CudaHaloBenchmark final : public Benchmark {
 public:
  explicit CudaHaloBenchmark(const RunContext& ctx)
      : config_(resolve_config(ctx.params(), ctx.size())),
        host_(ctx.comm),
        sync_free_(ctx.toggles()[Toggle::kSyncFree].in_effect) {
    if (config_.hybrid) {
      throw UsageError("halo_conv: scheme=hybrid runs on the cpu backend only; the cuda backend runs scheme=single");
    }
    if (ctx.size() > 1) {
#ifdef PERFLAB_HAVE_NCCL
      collectives::NcclSetup setup;
      setup.device = collectives::nccl_local_device();
      PERFLAB_CUDA_CHECK(cudaSetDevice(setup.device));
      device_ = collectives::make_nccl_communicator(ctx.comm, setup);
#else
      throw UsageError("halo_conv: several ranks on the cuda backend need NCCL, which this build does not have; "
                       "use --backend cpu");
#endif
    }
  }

  StepPlan step_plan() const override { return halo_conv_device_plan(config_); }

  std::unique_ptr<TimedStep> start_step(uint64_t seed) override {
    return std::make_unique<CudaHaloStep>(config_, host_, device_.get(), sync_free_, seed);
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& host_;
  std::unique_ptr<collectives::Communicator> device_;
  bool sync_free_;
};

}  // namespace

std::unique_ptr<Benchmark> make_cuda_benchmark(const RunContext& ctx) {
  return std::make_unique<CudaHaloBenchmark>(ctx);
}

}  // namespace perflab::halo_conv
