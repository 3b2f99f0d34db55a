// collectives: nccl-tests' bandwidth benchmark inside perflab. One point is
// one collective at one message size and placement; nccl-tests' flags
// (-b/-e/-f/-i sizes, -n, -w, -c, -G, -o, -d, -a, -r) are taken as they are
// and become a sweep over sizes and placements, printed as nccl-tests'
// table (reports/collectives_table.h). Backends: cpu (host buffers; MPI
// under mpirun/srun, copies on one rank) and cuda (NCCL, one GPU per rank).
#include <fmt/format.h>

#include "harness/registry.h"
#include "workloads/collectives/collectives_benchmark.h"
#include "workloads/collectives/nccl_tests_args.h"

namespace perflab::collectives_workload {
namespace {

std::vector<ParamSpec> collectives_params() {
  return {
      {"op", ParamType::kString, "all_reduce", "the collective",
       {}, {}, {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "sendrecv"}},
      {"dtype", ParamType::kString, "float", "element type (nccl-tests' -d)",
       {}, {}, {"float", "half", "bfloat16", "int32", "double"}},
      {"redop", ParamType::kString, "sum", "reduction of all_reduce, reduce_scatter and reduce (-o)",
       {}, {}, {"sum", "max", "min"}},
      {"root", ParamType::kInt, "0", "root rank of broadcast and reduce (-r)", 0, 1 << 20},
      {"bytes", ParamType::kInt, "33554432", "message size in bytes (nccl-tests' size; -b/-e/-f sweep it)", 1,
       static_cast<double>(1LL << 36)},
      {"in_place", ParamType::kInt, "0", "1: receive into the send buffer (NCCL's in-place convention)", 0, 1},
      {"iters", ParamType::kInt, "20", "operations per timed iteration, back to back (-n)", 1, 100000},
      {"warmup_iters", ParamType::kInt, "5", "operations before timing, per run (-w)", 0, 100000},
      {"check", ParamType::kInt, "1", "1: count wrong elements after timing (-c)", 0, 1},
      {"average", ParamType::kInt, "1", "ranks' times combined as 0 rank 0, 1 mean, 2 min, 3 max (-a)", 0, 3},
  };
}

std::vector<Preset> collectives_presets() {
  return {
      {"tiny", "all_reduce of 64 KiB floats (CI)", {{"bytes", "65536"}}},
      {"default", "all_reduce of 32 MiB floats: nccl-tests' default size", {}},
      {"latency", "all_reduce of 8 bytes: the latency floor", {{"bytes", "8"}, {"iters", "100"}}},
      {"bandwidth", "all_reduce of 1 GiB floats: the bandwidth plateau", {{"bytes", "1073741824"}, {"iters", "5"}}},
  };
}

std::vector<ToggleRule> collectives_toggle_rules() {
  const std::vector<Backend> cuda = {Backend::kCuda};
  return {
      {Toggle::kSyncFree, cuda, "the cpu backend's MPI calls return when their buffers are ready", {}, ""},
      {Toggle::kCudaGraphs, cuda, "the cpu backend launches no CUDA work to capture", {}, ""},
      {Toggle::kSharp, cuda, "the cpu backend (MPI or one process) has no in-network reduction: that is NCCL's (CollNet/SHARP, NVLS)", {}, ""},
  };
}

WorkloadInfo collectives_info() {
  WorkloadInfo info;
  info.name = "collectives";
  info.summary = "nccl-tests' collective bandwidth (algbw, busbw, #wrong) on MPI or NCCL (throughput)";
  info.params = collectives_params();
  info.presets = collectives_presets();
  info.default_preset = "tiny";
#ifdef PERFLAB_COLLECTIVES_NCCL
  info.backends = {Backend::kCpu, Backend::kCuda};
#else
  info.backends = {Backend::kCpu};
#endif
  info.batch_param = "iters";
  info.toggle_rules = collectives_toggle_rules();
  info.translate_args = translate_nccl_tests_args;
  info.create_timed_step = [](const RunContext& ctx) -> std::unique_ptr<Benchmark> {
#ifdef PERFLAB_COLLECTIVES_NCCL
    if (ctx.backend() == Backend::kCuda) return make_nccl_benchmark(ctx);
#endif
    return make_host_benchmark(ctx);
  };
  return info;
}

}  // namespace

PERFLAB_REGISTER_WORKLOAD(collectives_info());

}  // namespace perflab::collectives_workload
