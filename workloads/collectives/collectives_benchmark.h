// The collectives benchmark, prepared once per point: one collective at one
// message size, timed the way nccl-tests times it. One iteration is a block
// of `iters` back-to-back operations (nccl-tests' timed loop); the
// harness's iterations repeat the block, so each size gets n and a spread.
// The warm-up operations run when a seed starts (untimed), and the gate
// refills the inputs, runs one operation and counts wrong elements on every
// rank (nccl-tests' #wrong), summed over ranks.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "collectives/check.h"
#include "harness/run_context.h"

namespace perflab::collectives_workload {

/// The parameters of one point, resolved against the run's communicator.
struct CollectivesConfig {
  collectives::CollectiveCall call;
  size_t bytes = 0;        ///< The requested message size.
  bool in_place = false;
  int iters = 20;          ///< Operations per timed block.
  int warmup_iters = 5;    ///< Operations before the first block (untimed).
  bool check = true;       ///< Run the gate's correctness pass.
  int average = 1;         ///< nccl-tests' -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks.
};

CollectivesConfig resolve_config(const RunContext& ctx);

/// The gate on every rank (collective): this rank's output `out` checked,
/// the wrong elements summed over ranks into `total` (nccl-tests' #wrong,
/// which the step records as its run fact "wrong_elements"), the first
/// named by rank and element.
CorrectnessReport wrong_elements_gate(collectives::Communicator& comm, const CollectivesConfig& config,
                                      const unsigned char* out, size_t& total);

/// The facts every collectives step records with its run: the wrong
/// elements its last gate counted (absent when check=0).
nlohmann::json wrong_elements_facts(const std::optional<size_t>& wrong);

/// The benchmark for the cpu backend (host buffers, single or MPI).
std::unique_ptr<Benchmark> make_host_benchmark(const RunContext& ctx);
#ifdef PERFLAB_COLLECTIVES_NCCL
/// The benchmark for the cuda backend (device buffers, NCCL).
std::unique_ptr<Benchmark> make_nccl_benchmark(const RunContext& ctx);
#endif

/// The step plan both backends share.
StepPlan collectives_step_plan(const CollectivesConfig& config, const std::string& comm_kind);

}  // namespace perflab::collectives_workload
