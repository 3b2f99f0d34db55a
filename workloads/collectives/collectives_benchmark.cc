// The collectives benchmark on host buffers (see collectives_benchmark.h).
#include "workloads/collectives/collectives_benchmark.h"

#include <fmt/format.h>

#include "base/error.h"
#include "harness/host_memory.h"

namespace perflab::collectives_workload {

using namespace perflab::collectives;

CollectivesConfig resolve_config(const RunContext& ctx) {
  const ParamValues& p = ctx.params();
  CollectivesConfig c;
  c.call.collective = parse_collective(p.get_string("op"));
  c.call.dtype = parse_dtype(p.get_string("dtype"));
  c.call.op = parse_op(p.get_string("redop"));
  c.call.root = static_cast<int>(p.get_int("root"));
  c.call.rank = ctx.rank();
  c.call.ranks = ctx.size();
  c.bytes = static_cast<size_t>(p.get_int("bytes"));
  c.in_place = p.get_int("in_place") != 0;
  c.iters = static_cast<int>(p.get_int("iters"));
  c.warmup_iters = static_cast<int>(p.get_int("warmup_iters"));
  c.check = p.get_int("check") != 0;
  c.average = static_cast<int>(p.get_int("average"));
  if (c.call.root >= c.call.ranks) {
    throw UsageError(fmt::format("root={} is not a rank: this run has {} rank(s)", c.call.root, c.call.ranks));
  }
  const size_t esize = dtype_size(c.call.dtype);
  if (c.bytes < esize) {
    throw UsageError(fmt::format("bytes={} is less than one {} element ({} bytes)", c.bytes, dtype_name(c.call.dtype),
                                 esize));
  }
  c.call.counts = collective_counts(c.call.collective, c.bytes, esize, c.call.ranks);
  if (c.call.counts.param == 0) {
    throw UsageError(fmt::format("bytes={} gives no element per rank for {} on {} ranks: use at least {} bytes",
                                 c.bytes, collective_name(c.call.collective), c.call.ranks,
                                 esize * static_cast<size_t>(c.call.ranks)));
  }
  if (c.in_place && c.call.collective == Collective::kSendRecv) {
    throw UsageError("sendrecv has no in-place form: use in_place=0");
  }
  return c;
}

nlohmann::json wrong_elements_facts(const std::optional<size_t>& wrong) {
  nlohmann::json facts = nlohmann::json::object();
  if (wrong) facts["wrong_elements"] = *wrong;
  return facts;
}

CorrectnessReport wrong_elements_gate(Communicator& comm, const CollectivesConfig& config, const unsigned char* out,
                                      size_t& total_wrong) {
  size_t first = 0;
  const size_t mine = count_wrong(config.call, out, first);
  // Total wrong, the first rank with any, and that rank's first wrong element.
  double total = static_cast<double>(mine);
  double first_rank = mine > 0 ? comm.rank() : comm.size();
  comm.all_reduce_host(&total, 1, ReduceOp::kSum);
  comm.all_reduce_host(&first_rank, 1, ReduceOp::kMin);
  total_wrong = static_cast<size_t>(total);
  const size_t elements = config.call.counts.recv * static_cast<size_t>(config.call.ranks);
  if (total == 0) {
    return {true, fmt::format("0 wrong elements of {} on {} rank(s): every output exactly as predicted", elements,
                              config.call.ranks)};
  }
  const int rank = static_cast<int>(first_rank);
  uint64_t at = first;
  comm.broadcast_host(&at, sizeof at, rank);
  return {false, fmt::format("{} wrong elements of {} on {} rank(s) (the first on rank {}, element {})",
                             static_cast<size_t>(total), elements, config.call.ranks, rank, at)};
}

StepPlan collectives_step_plan(const CollectivesConfig& c, const std::string& comm_kind) {
  StepPlan plan;
  plan.batch_size = c.iters;
  plan.sample_unit = "operations";
  plan.precision = dtype_name(c.call.dtype);
  plan.precision_is_communication = true;
  const size_t esize = dtype_size(c.call.dtype);
  const char* averages[] = {"rank 0", "mean", "min", "max"};
  plan.rank_times = static_cast<RankTimes>(c.average);
  plan.data = {{"collective", collective_name(c.call.collective)},
               {"dtype", dtype_name(c.call.dtype)},
               {"redop", collective_reduces(c.call.collective) ? op_name(c.call.op) : "none"},
               {"root", collective_has_root(c.call.collective) ? c.call.root : -1},
               {"bytes", c.bytes},
               {"size_bytes", c.call.counts.size_bytes},
               {"count", c.call.counts.count},
               {"param_count", c.call.counts.param},
               {"element_bytes", esize},
               {"ranks", c.call.ranks},
               {"in_place", c.in_place},
               {"ops_per_iteration", c.iters},
               {"warmup_ops", c.warmup_iters},
               {"check", c.check},
               {"rank_times", averages[c.average]},
               {"communicator", comm_kind},
               {"busbw_factor", busbw_factor(c.call.collective, c.call.ranks)}};
  // Bytes each rank moves per iteration (its send and receive buffers, once per operation).
  plan.work.bytes = static_cast<double>((c.call.counts.send + c.call.counts.recv) * esize) * c.iters;
  return plan;
}

namespace {

/// One seed on host buffers: the input filled once, warm-up operations run.
class HostCollectiveStep final : public TimedStep {
 public:
  HostCollectiveStep(Communicator& comm, const CollectivesConfig& config)
      : comm_(comm), config_(config), layout_(buffer_layout(config.call, config.in_place)) {
    const size_t esize = dtype_size(config.call.dtype);
    send_.assign(layout_.send_elements * esize, 0);
    if (!layout_.shared) recv_.assign(layout_.recv_elements * esize, 0);
    fill();
    for (int i = 0; i < config_.warmup_iters; ++i) run_once();
  }

  void run_iteration(int64_t /*iteration*/) override {
    for (int i = 0; i < config_.iters; ++i) run_once();
  }

  CorrectnessReport check_correctness() override {
    if (!config_.check) return {true, "check=0: the correctness pass was not run"};
    fill();
    run_once();
    const unsigned char* out = layout_.shared ? send_.data() + layout_.recv_offset * esize() : recv_.data();
    size_t wrong = 0;
    CorrectnessReport gate = wrong_elements_gate(comm_, config_, out, wrong);
    wrong_ = wrong;
    return gate;
  }

  nlohmann::json run_facts() override { return wrong_elements_facts(wrong_); }

 private:
  size_t esize() const { return dtype_size(config_.call.dtype); }

  void fill() {
    std::vector<unsigned char> input;
    fill_input(config_.call, input);
    std::copy(input.begin(), input.end(), send_.begin() + static_cast<std::ptrdiff_t>(layout_.send_offset * esize()));
  }

  void run_once() {
    unsigned char* base = send_.data();
    const void* send = base + layout_.send_offset * esize();
    void* recv = layout_.shared ? base + layout_.recv_offset * esize() : recv_.data();
    run_collective(comm_, config_.call, send, recv);
  }

  Communicator& comm_;
  CollectivesConfig config_;
  BufferLayout layout_;
  std::vector<unsigned char> send_, recv_;
  std::optional<size_t> wrong_;  ///< The last gate's count; none when check=0.
};

class HostCollectivesBenchmark final : public Benchmark {
 public:
  explicit HostCollectivesBenchmark(const RunContext& ctx) : comm_(ctx.comm), config_(resolve_config(ctx)) {
    const BufferLayout layout = buffer_layout(config_.call, config_.in_place);
    check_host_memory(fmt::format("collectives: {} bytes of {}", config_.bytes, collective_name(config_.call.collective)),
                      static_cast<double>((layout.send_elements + layout.recv_elements) *
                                          dtype_size(config_.call.dtype)) * 2,
                      "use fewer bytes");
  }
  StepPlan step_plan() const override { return collectives_step_plan(config_, comm_.kind()); }
  std::unique_ptr<TimedStep> start_step(uint64_t /*seed*/) override {
    return std::make_unique<HostCollectiveStep>(comm_, config_);
  }

 private:
  Communicator& comm_;
  CollectivesConfig config_;
};

}  // namespace

std::unique_ptr<Benchmark> make_host_benchmark(const RunContext& ctx) {
  return std::make_unique<HostCollectivesBenchmark>(ctx);
}

}  // namespace perflab::collectives_workload
