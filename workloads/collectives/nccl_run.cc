// The collectives benchmark on NCCL: device buffers, one GPU per rank
// (device = local rank), every operation enqueued on the step's stream with
// no host synchronisation, so --cuda-graphs captures a block of NCCL calls.
// The communicator is created once per process and SHARP setting, after the
// environment NCCL reads at creation is set: the SHARP toggle
// (NCCL_COLLNET_ENABLE, NCCL_NVLS_ENABLE) and NCCL's debug log (INFO,
// subsystems INIT and TUNING), which goes to a file beside the results,
// never to the console.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "collectives/nccl.h"
#include "harness/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "workloads/collectives/collectives_benchmark.h"

namespace perflab::collectives_workload {

using namespace perflab::collectives;
namespace cu = perflab::kernels::cuda;

namespace {

constexpr double kWaitTimeoutS = 300;

/// This rank's GPU: its rank on this node, as the launcher numbers them.
int local_device() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    if (const char* s = std::getenv(v)) return std::atoi(s);
  }
  return 0;
}

/// The environment NCCL reads when a communicator is created.
void set_nccl_environment(bool sharp, const std::filesystem::path& debug_file) {
  setenv("NCCL_COLLNET_ENABLE", sharp ? "1" : "0", 1);
  setenv("NCCL_NVLS_ENABLE", sharp ? "1" : "0", 1);
  if (!std::getenv("NCCL_DEBUG")) {
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,TUNING,ENV", 1);
    setenv("NCCL_DEBUG_FILE", debug_file.c_str(), 1);
  }
}

/// One NCCL communicator per SHARP setting, made on first use.
Communicator& nccl_communicator(const RunContext& ctx, bool sharp, std::filesystem::path& debug_file) {
  static std::map<bool, std::unique_ptr<Communicator>> comms;
  static std::map<bool, std::filesystem::path> files;
  auto& comm = comms[sharp];
  if (!comm) {
    std::filesystem::create_directories(ctx.spec.out_dir);
    files[sharp] = std::filesystem::absolute(ctx.spec.out_dir) /
                   fmt::format("nccl-debug-sharp-{}.%h.%p.log", sharp ? "on" : "off");
    set_nccl_environment(sharp, files[sharp]);
    NcclSetup setup;
    setup.device = local_device();
    comm = make_nccl_communicator(ctx.comm, setup);
  }
  debug_file = files[sharp];
  return *comm;
}

class NcclCollectiveStep final : public TimedStep, public DeviceStep {
 public:
  NcclCollectiveStep(Communicator& comm, const CollectivesConfig& config, bool sharp)
      : comm_(comm), config_(config), sharp_(sharp), layout_(buffer_layout(config.call, config.in_place)),
        send_(layout_.send_elements * esize()), recv_(layout_.shared ? 0 : layout_.recv_elements * esize()) {
    upload_input();
    comm_.set_stream(stream_.get());
    for (int i = 0; i < config_.warmup_iters; ++i) run_once();
    nccl_wait(comm_, stream_.get(), kWaitTimeoutS);
  }

  DeviceStep* device_step() override { return this; }
  void* stream() override { return stream_.get(); }
  int begin(int64_t /*iteration*/) override { return 0; }
  void enqueue(int /*variant*/) override {
    comm_.set_stream(stream_.get());
    for (int i = 0; i < config_.iters; ++i) run_once();
  }
  int expected_host_syncs() const override { return 0; }

  /// SHARP was requested: whether NCCL could reduce in the network.
  std::vector<std::pair<Toggle, ToggleState>> toggle_outcomes() override {
    if (!sharp_) return {};
    if (config_.call.ranks < 2) {
      return {{Toggle::kSharp, {true, false, "fewer than 2 GPUs: NCCL has nothing to reduce in the network"}}};
    }
    return {};
  }

  CorrectnessReport check_correctness() override {
    if (!config_.check) return {true, "check=0: the correctness pass was not run"};
    upload_input();
    comm_.set_stream(stream_.get());
    run_once();
    nccl_wait(comm_, stream_.get(), kWaitTimeoutS);
    std::vector<unsigned char> out(config_.call.counts.recv * esize());
    const unsigned char* from = layout_.shared ? send_.data() + layout_.recv_offset * esize() : recv_.data();
    PERFLAB_CUDA_CHECK(cudaMemcpy(out.data(), from, out.size(), cudaMemcpyDeviceToHost));
    size_t first = 0;
    double wrong = static_cast<double>(count_wrong(config_.call, out.data(), first));
    double first_d = wrong > 0 ? static_cast<double>(first) : 0;
    comm_.all_reduce_host(&wrong, 1, ReduceOp::kSum);
    comm_.broadcast_host(&first_d, sizeof first_d, 0);
    return wrong_report(static_cast<size_t>(wrong), config_.call.counts.recv * static_cast<size_t>(config_.call.ranks),
                        config_.call.ranks, static_cast<size_t>(first_d));
  }

 private:
  size_t esize() const { return dtype_size(config_.call.dtype); }

  void upload_input() {
    std::vector<unsigned char> input;
    fill_input(config_.call, input);
    PERFLAB_CUDA_CHECK(cudaMemcpy(send_.data() + layout_.send_offset * esize(), input.data(), input.size(),
                                  cudaMemcpyHostToDevice));
  }

  void run_once() {
    unsigned char* base = send_.data();
    run_collective(comm_, config_.call, base + layout_.send_offset * esize(),
                   layout_.shared ? base + layout_.recv_offset * esize() : recv_.data());
  }

  Communicator& comm_;
  CollectivesConfig config_;
  bool sharp_;
  BufferLayout layout_;
  cu::Stream stream_;
  cu::DeviceBuffer<unsigned char> send_, recv_;
};

class NcclCollectivesBenchmark final : public Benchmark {
 public:
  explicit NcclCollectivesBenchmark(const RunContext& ctx)
      : config_(resolve_config(ctx)),
        sharp_(ctx.toggles()[Toggle::kSharp].in_effect),
        comm_(nccl_communicator(ctx, sharp_, debug_file_)) {
    const BufferLayout layout = buffer_layout(config_.call, config_.in_place);
    device_bytes_ = static_cast<double>((layout.send_elements + layout.recv_elements) * dtype_size(config_.call.dtype));
  }
  StepPlan step_plan() const override {
    StepPlan plan = collectives_step_plan(config_, comm_.kind());
    plan.data["nccl_version"] = nccl_runtime_version();
    plan.data["nccl_debug_file"] = debug_file_.string();
    plan.device_bytes = device_bytes_;
    plan.device_bytes_advice = "use fewer bytes";
    return plan;
  }
  std::unique_ptr<TimedStep> start_step(uint64_t /*seed*/) override {
    return std::make_unique<NcclCollectiveStep>(comm_, config_, sharp_);
  }

 private:
  CollectivesConfig config_;
  bool sharp_;
  std::filesystem::path debug_file_;
  Communicator& comm_;
  double device_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Benchmark> make_nccl_benchmark(const RunContext& ctx) {
  return std::make_unique<NcclCollectivesBenchmark>(ctx);
}

}  // namespace perflab::collectives_workload
