// The collectives benchmark on NCCL: device buffers, one GPU per rank
// (device = local rank), every operation enqueued on the step's stream with
// no host synchronisation, so --cuda-graphs captures a block of NCCL calls.
// The communicator is the process's for its SHARP setting
// (collectives/nccl.h process_nccl_communicator): NCCL's debug log (INFO,
// subsystems INIT and TUNING) goes to a file beside the results, never to
// the console.
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "collectives/nccl.h"
#include "collectives/nccl_log.h"
#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "workloads/collectives/collectives_benchmark.h"

namespace perflab::collectives_workload {

using namespace perflab::collectives;
namespace cu = perflab::kernels::cuda;

namespace {

constexpr double kWaitTimeoutS = 300;

class NcclCollectiveStep final : public TimedStep, public DeviceStep {
 public:
  NcclCollectiveStep(Communicator& comm, const CollectivesConfig& config, bool sharp,
                     std::filesystem::path log_path)
      : comm_(comm), config_(config), sharp_(sharp), log_path_(std::move(log_path)),
        log_from_(nccl_log_size(log_path_)), layout_(buffer_layout(config.call, config.in_place)),
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

  /// SHARP was requested: whether NCCL reduced in the network, from what
  /// its debug log says it chose (this rank's log; rank 0's is recorded).
  std::vector<std::pair<Toggle, ToggleState>> toggle_outcomes() override {
    if (!sharp_) return {};
    const SharpVerdict v = sharp_verdict(true, log_facts(), "nccl", config_.call.ranks, 0);
    return {{Toggle::kSharp, {true, v.in_effect, v.reason}}};
  }

  /// The algorithm and protocol NCCL logged for this operation and size.
  nlohmann::json run_facts() override {
    const NcclLogFacts& facts = log_facts();
    nlohmann::json out = wrong_elements_facts(wrong_);
    out["nccl_debug_log"] = log_path_.string();
    const std::string op = collective_name(config_.call.collective);
    std::optional<NcclChoice> choice;
    for (size_t bytes : {config_.call.counts.param * esize(), config_.call.counts.size_bytes}) {
      if (!choice) choice = nccl_choice_for(facts, op, bytes);
    }
    if (choice) {
      out["algorithm"] = fmt::format("{}/{}", nccl_algo_name(choice->algo), nccl_proto_name(choice->proto));
    } else if (config_.call.collective == Collective::kAllToAll || config_.call.collective == Collective::kSendRecv) {
      out["algorithm"] = "p2p";
    }
    return out;
  }

  CorrectnessReport check_correctness() override {
    if (!config_.check) return {true, "check=0: the correctness pass was not run"};
    upload_input();
    comm_.set_stream(stream_.get());
    run_once();
    nccl_wait(comm_, stream_.get(), kWaitTimeoutS);
    std::vector<unsigned char> out(config_.call.counts.recv * esize());
    const unsigned char* from = layout_.shared ? send_.data() + layout_.recv_offset * esize() : recv_.data();
    // On the stream that produced it, then waited for.
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(out.data(), from, out.size(), cudaMemcpyDeviceToHost, stream_.get()));
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));  // sync outside the iteration: the gate reads results
    size_t wrong = 0;
    CorrectnessReport gate = wrong_elements_gate(comm_, config_, out.data(), wrong);
    wrong_ = wrong;
    return gate;
  }

 private:
  size_t esize() const { return dtype_size(config_.call.dtype); }

  const NcclLogFacts& log_facts() {
    if (!facts_) {
      std::error_code ec;
      // What this run's NCCL calls logged (the process's file holds every run's).
      facts_ = std::filesystem::exists(log_path_, ec) ? read_nccl_log(log_path_, log_from_) : NcclLogFacts{};
    }
    return *facts_;
  }

  /// The input, copied on the stream the collectives run on: a synchronous
  /// cudaMemcpy from pageable memory returns once the data is staged, and
  /// its DMA on the legacy stream may still be landing when NCCL's kernels
  /// on the non-blocking stream read the buffer. Stream-ordered, and waited
  /// for (the host buffer goes out of scope).
  void upload_input() {
    std::vector<unsigned char> input;
    fill_input(config_.call, input);
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(send_.data() + layout_.send_offset * esize(), input.data(), input.size(),
                                       cudaMemcpyHostToDevice, stream_.get()));
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));  // sync outside the iteration: setup
  }

  void run_once() {
    unsigned char* base = send_.data();
    run_collective(comm_, config_.call, base + layout_.send_offset * esize(),
                   layout_.shared ? base + layout_.recv_offset * esize() : recv_.data());
  }

  Communicator& comm_;
  CollectivesConfig config_;
  bool sharp_;
  std::filesystem::path log_path_;
  uint64_t log_from_ = 0;  ///< The debug file's size when this run began.
  std::optional<NcclLogFacts> facts_;
  std::optional<size_t> wrong_;  ///< The last gate's count; none when check=0.
  BufferLayout layout_;
  cu::Stream stream_;
  cu::DeviceBuffer<unsigned char> send_, recv_;
};

class NcclCollectivesBenchmark final : public Benchmark {
 public:
  explicit NcclCollectivesBenchmark(const RunContext& ctx)
      : config_(resolve_config(ctx)),
        sharp_(ctx.toggles()[Toggle::kSharp].in_effect),
        nccl_(process_nccl_communicator(ctx.comm, sharp_, ctx.spec.out_dir.string())),
        comm_(*nccl_.comm) {
    const BufferLayout layout = buffer_layout(config_.call, config_.in_place);
    device_bytes_ = static_cast<double>((layout.send_elements + layout.recv_elements) * dtype_size(config_.call.dtype));
  }
  StepPlan step_plan() const override {
    StepPlan plan = collectives_step_plan(config_, comm_.kind());
    plan.data["nccl_version"] = nccl_runtime_version();
    plan.data["nccl_debug_file"] = nccl_.debug_log;
    plan.device_bytes = device_bytes_;
    plan.device_bytes_advice = "use fewer bytes";
    return plan;
  }
  std::unique_ptr<TimedStep> start_step(uint64_t /*seed*/) override {
    return std::make_unique<NcclCollectiveStep>(comm_, config_, sharp_, nccl_.debug_log);
  }

 private:
  CollectivesConfig config_;
  bool sharp_;
  ProcessNccl nccl_;
  Communicator& comm_;
  double device_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Benchmark> make_nccl_benchmark(const RunContext& ctx) {
  return std::make_unique<NcclCollectivesBenchmark>(ctx);
}

}  // namespace perflab::collectives_workload
