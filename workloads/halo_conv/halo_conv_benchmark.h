// The halo_conv benchmark, prepared once per point: one training step (or
// forward pass) of the spatially partitioned convolution layer per
// iteration. The gate compares this process's output and input gradient
// with the unpartitioned convolution evaluated at its planes, and the
// weight gradient (summed over every partition) with the whole volume's;
// the run's facts record the variant as it ran and the step's parts timed
// alone: halo transfer, compute, weight-gradient all-reduce.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/run_context.h"
#include "workloads/halo_conv/cpu_layer.h"
#include "workloads/halo_conv/hybrid.h"

namespace perflab::halo_conv {

/// The point's parameters, validated against the run's ranks.
struct HaloConvConfig {
  LayerConfig layer;
  bool overlap_requested = false;
  std::string overlap_reason;  ///< Why overlap is not in effect ("" when it is, or was not asked for).
  int ranks = 1;
  /// scheme=hybrid (hybrid.h): the levels, checked against the ranks.
  std::optional<HybridLevels> hybrid;
};

/// Throws UsageError with one line when the parameters cannot run on
/// `ranks` processes.
HaloConvConfig resolve_config(const ParamValues& params, int ranks);

/// The step plan (work per iteration, facts of the problem).
StepPlan halo_conv_step_plan(const HaloConvConfig& config);
/// The cuda backend's: TF32 or bf16 arithmetic, the bytes of its stored
/// elements (2 in bf16, halving the step plan's), and the device memory
/// its slabs take (padded input and output gradient, output, input
/// gradient per slab). Host only.
StepPlan halo_conv_device_plan(const HaloConvConfig& config);

/// The names of the single layer's parts the harness times alone
/// (TimedStep::time_parts; the result's runs[].parts and the NVTX ranges):
/// the halo exchanges, the convolutions, the weight-gradient all-reduce.
inline constexpr const char* kTransferPart = "transfer";
inline constexpr const char* kComputePart = "compute";
inline constexpr const char* kAllReducePart = "allreduce";

/// The variant as it ran: partitions, ranks, halo, overlap (and why not), arithmetic.
nlohmann::json variant_facts(const HaloConvConfig& config, const std::string& math);

/// The run facts every backend records: the variant as it ran and the halo
/// bytes per step (summed over ranks: collective, every rank calls it).
nlohmann::json halo_facts(const HaloConvConfig& config, collectives::Communicator& comm, double local_halo_bytes,
                          const std::string& math);

std::unique_ptr<Benchmark> make_cpu_benchmark(const RunContext& ctx);
#ifdef PERFLAB_HALO_CONV_CUDA
/// The cuda backend: cuDNN, slabs on streams, NCCL between ranks.
std::unique_ptr<Benchmark> make_cuda_benchmark(const RunContext& ctx);
#endif

}  // namespace perflab::halo_conv
