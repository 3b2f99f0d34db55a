// The cuda backend's NCCL communicator and its SHARP verdict (see cuda_nccl.h).
#include "workloads/dlrm/cuda_nccl.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "collectives/nccl_log.h"
#include "harness/error.h"
#include "kernels/cuda/check.h"

#ifdef PERFLAB_HAVE_NCCL
#include "collectives/nccl.h"
#endif

namespace perflab::dlrm {
namespace {

namespace fs = std::filesystem;

#ifdef PERFLAB_HAVE_NCCL
void apply(const std::vector<collectives::EnvSetting>& settings) {
  for (const collectives::EnvSetting& e : settings) {
    if (e.value) {
      setenv(e.name.c_str(), e.value->c_str(), 1);
    } else {
      unsetenv(e.name.c_str());
    }
  }
}

/// NCCL's file name for this process: %h the host name, %p the pid.
std::string expanded(const std::string& pattern) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && (next == 'h' || next == 'p' || next == '%')) {
      out += next == 'h' ? std::string(host) : next == 'p' ? std::to_string(getpid()) : "%";
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}
#endif

/// What NCCL logged so far (read afresh: it logs its choices as the steps run).
collectives::NcclLogFacts log_facts(const DlrmNccl& nccl) {
  std::error_code ec;
  if (nccl.debug_log.empty() || !fs::exists(nccl.debug_log, ec)) return {};
  return collectives::read_nccl_log(nccl.debug_log);
}

}  // namespace

DlrmNccl dlrm_nccl(const RunContext& ctx, bool sharp) {
#ifdef PERFLAB_HAVE_NCCL
  // One communicator per process and SHARP setting: NCCL reads the
  // environment at creation and opens its debug file once per process.
  static std::map<bool, std::unique_ptr<collectives::Communicator>> comms;
  static std::map<bool, std::string> files;
  DlrmNccl out;
  out.device = collectives::nccl_local_device();
  out.sharp = sharp;
  PERFLAB_CUDA_CHECK(cudaSetDevice(out.device));
  auto& comm = comms[sharp];
  if (!comm) {
    fs::create_directories(ctx.spec.out_dir);
    const std::string pattern = (fs::absolute(ctx.spec.out_dir) / "nccl-debug.%h.%p.log").string();
    apply(collectives::sharp_environment(sharp));
    apply(collectives::nccl_debug_environment(pattern));
    files[sharp] = expanded(pattern);
    collectives::NcclSetup setup;
    setup.device = out.device;
    comm = collectives::make_nccl_communicator(ctx.comm, setup);
  }
  out.comm = comm.get();
  out.debug_log = files[sharp];
  return out;
#else
  (void)sharp;
  throw UsageError(fmt::format(
      "dlrm: the cuda backend's embedding exchange needs NCCL, which this build does not "
      "have ({} rank(s)); use --backend cpu, or one rank with --set exchange=none",
      ctx.size()));
#endif
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
