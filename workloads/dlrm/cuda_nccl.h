// The cuda backend's NCCL path (exchange=nccl): the communicator its
// embedding exchanges and gradient all-reduce run over, made once per
// process and SHARP setting over the run's host communicator, with NCCL's
// debug log in a file beside the results; and what --sharp came to, read
// from that log afterwards (collectives/nccl_log.h), as the collectives
// workload tells it. Only CUDA builds see it (PERFLAB_DLRM_CUDA).
#pragma once

#ifdef PERFLAB_DLRM_CUDA

#include <string>
#include <utility>

#include "collectives/communicator.h"
#include "harness/run_context.h"
#include "harness/toggles.h"

namespace perflab::dlrm {

/// The NCCL side of a cuda run: null comm means one GPU, no exchange.
struct DlrmNccl {
  collectives::Communicator* comm = nullptr;  ///< NCCL (device buffers); owned per process.
  int device = 0;                             ///< This rank's GPU.
  bool sharp = false;                         ///< --sharp as resolved (requested and applicable).
  std::string debug_log;                      ///< This process's NCCL debug file ("" without NCCL).
  /// The debug file's size when this run began: its choices are read from
  /// there on (the process's runs share the file).
  uint64_t log_from = 0;
};

/// `nccl` for a run starting now (log_from: the debug file's size).
DlrmNccl starting_run(DlrmNccl nccl);

/// Sets the SHARP and debug-log environment, then creates (first call per
/// SHARP setting) the NCCL communicator over ctx.comm on this rank's local
/// GPU. Collective. UsageError when the build has no NCCL.
DlrmNccl dlrm_nccl(const RunContext& ctx, bool sharp);

/// What --sharp came to on a run (after its steps): requested, whether
/// NCCL reduced the gradients in the network (its log), and why not.
ToggleState dlrm_sharp_outcome(const DlrmNccl& nccl);

/// Run facts of the NCCL path: the debug log, ranks, and the algorithm and
/// protocol NCCL logged for the gradient all-reduce of `gradient_bytes`.
nlohmann::json dlrm_nccl_facts(const DlrmNccl& nccl, size_t gradient_bytes);

}  // namespace perflab::dlrm

#endif  // PERFLAB_DLRM_CUDA
