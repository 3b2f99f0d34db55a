// The cuda backend's NCCL communicator and its SHARP verdict (see cuda_nccl.h).
#include "workloads/dlrm/cuda_nccl.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "collectives/nccl_log.h"
#include "base/error.h"
#include "kernels/cuda/check.h"

#ifdef PERFLAB_HAVE_NCCL
#include "collectives/nccl.h"
#endif

namespace perflab::dlrm {
namespace {

namespace fs = std::filesystem;

/// What NCCL logged so far (read afresh: it logs its choices as the steps run).
collectives::NcclLogFacts log_facts(const DlrmNccl& nccl) {
  std::error_code ec;
  if (nccl.debug_log.empty() || !fs::exists(nccl.debug_log, ec)) return {};
  return collectives::read_nccl_log(nccl.debug_log, nccl.log_from);
}

}  // namespace

DlrmNccl dlrm_nccl(const RunContext& ctx, bool sharp) {
#ifdef PERFLAB_HAVE_NCCL
  // The process's communicator for this SHARP setting (shared with any
  // other run of the process: NCCL reads its environment once, at creation).
  DlrmNccl out;
  out.device = collectives::nccl_local_device();
  out.sharp = sharp;
  PERFLAB_CUDA_CHECK(cudaSetDevice(out.device));
  const collectives::ProcessNccl nccl = collectives::process_nccl_communicator(ctx.comm, sharp, ctx.spec.out_dir.string());
  out.comm = nccl.comm;
  out.debug_log = nccl.debug_log;
  return out;
#else
  (void)sharp;
  throw UsageError(fmt::format(
      "dlrm: the cuda backend's embedding exchange needs NCCL, which this build does not "
      "have ({} rank(s)); use --backend cpu, or one rank with --set exchange=none",
      ctx.size()));
#endif
}

DlrmNccl starting_run(DlrmNccl nccl) {
  if (!nccl.debug_log.empty()) nccl.log_from = collectives::nccl_log_size(nccl.debug_log);
  return nccl;
}

ToggleState dlrm_sharp_outcome(const DlrmNccl& nccl) {
  if (nccl.comm == nullptr) {
    return {true, false,
            "one GPU without an exchange (exchange=none): there is no gradient all-reduce to "
            "reduce in the "
            "network; --set exchange=nccl runs it over NCCL"};
  }
  const collectives::SharpVerdict v =
      collectives::sharp_verdict(true, log_facts(nccl), "nccl", nccl.comm->size(), 0);
  return {true, v.in_effect, v.reason};
}

nlohmann::json dlrm_nccl_facts(const DlrmNccl& nccl, size_t gradient_bytes) {
  if (nccl.comm == nullptr) return {{"exchange", "none (one GPU, every table local)"}};
  nlohmann::json out = {{"exchange", "nccl"},
                        {"nccl_ranks", nccl.comm->size()},
                        {"nccl_version", nccl.comm->library_version()},
                        {"nccl_debug_log", nccl.debug_log},
                        {"gradient_all_reduce_bytes", gradient_bytes}};
  const collectives::NcclLogFacts facts = log_facts(nccl);
  const std::optional<collectives::NcclChoice> choice =
      collectives::nccl_choice_for(facts, "AllReduce", gradient_bytes);
  if (choice) {
    out["gradient_all_reduce_algorithm"] =
        fmt::format("{}/{}", collectives::nccl_algo_name(choice->algo),
                    collectives::nccl_proto_name(choice->proto));
  }
  return out;
}

}  // namespace perflab::dlrm
