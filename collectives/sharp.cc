// SHARP, told truthfully (collectives/nccl_log.h): the verdict drawn from
// what NCCL logged, and the environment `--sharp on|off` and the debug log
// need before the communicator is created.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "collectives/byte_size.h"
#include "collectives/nccl_log.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

/// "RING", "RING and TREE", "RING, TREE and PAT", in NCCL's enum order.
std::string join_algos(const std::set<NcclAlgo>& algos) {
  std::string out;
  size_t i = 0;
  for (NcclAlgo a : algos) {
    if (i > 0) out += (i + 1 == algos.size()) ? " and " : ", ";
    out += nccl_algo_name(a);
    ++i;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

bool env_is(const NcclLogFacts& f, const std::string& name, std::string_view value) {
  auto it = f.env.find(name);
  return it != f.env.end() && it->second == value;
}

/// What stopped in-network reduction, from the log, most fundamental first.
std::vector<std::string> obstacles(const NcclLogFacts& f, int nnodes) {
  std::vector<std::string> why;
  if (nnodes >= 2) {
    if (f.collnet_plugin.empty()) why.emplace_back("no CollNet plugin loaded");
    if (f.collnet_node_threshold) {
      why.push_back(*f.collnet_node_threshold > 0
                        ? fmt::format("below CollNet's node threshold ({} nodes < NCCL_COLLNET_NODE_THRESHOLD {})",
                                      f.nnodes.value_or(nnodes), *f.collnet_node_threshold)
                        : std::string("below CollNet's node threshold"));
    }
    if (f.collnet_init_failed) why.emplace_back("CollNet could not be initialised");
    if (env_is(f, "NCCL_COLLNET_ENABLE", "0")) why.emplace_back("NCCL_COLLNET_ENABLE=0");
  }
  if (f.nvls_multicast == false) {
    why.emplace_back("NVLS multicast not available");
  } else if (env_is(f, "NCCL_NVLS_ENABLE", "0")) {
    why.emplace_back("NCCL_NVLS_ENABLE=0");
  } else if (f.channels.nvls == 0) {
    why.emplace_back("NCCL set up no NVLS channels");
  }
  return why;
}

/// "NCCL chose NVLS for 4 of the 6 op/size pairs logged (from 1 MiB)".
std::string chosen_in_network(const NcclLogFacts& f) {
  std::set<NcclAlgo> algos;
  std::set<std::pair<std::string, uint64_t>> pairs, in_network_pairs;
  uint64_t smallest = 0;
  for (const NcclChoice& c : f.choices) {
    pairs.insert({c.op, c.bytes});
    if (is_in_network(c.algo)) {
      algos.insert(c.algo);
      in_network_pairs.insert({c.op, c.bytes});
      smallest = in_network_pairs.size() == 1 ? c.bytes : std::min(smallest, c.bytes);
    }
  }
  if (algos.empty()) return {};
  return fmt::format("NCCL chose {} for {} of the {} op/size pairs logged (from {})", join_algos(algos),
                     in_network_pairs.size(), pairs.size(), format_bytes(smallest));
}

}  // namespace

SharpVerdict sharp_verdict(bool requested, const NcclLogFacts& facts, std::string_view backend,
                           int nranks, int nnodes) {
  SharpVerdict v;
  v.requested = requested;
  if (nranks <= 0) nranks = facts.nranks.value_or(0);
  if (nnodes <= 0) nnodes = facts.nnodes.value_or(1);
  const std::string chosen = backend == "nccl" ? chosen_in_network(facts) : std::string();
  v.in_effect = !chosen.empty() && nranks >= 2;
  if (!requested) {
    v.reason = v.in_effect ? "not requested, yet " + chosen : "not requested";
    return v;
  }
  if (backend == "mpi") {
    v.reason = "MPI backend";
  } else if (backend == "single") {
    v.reason = "single-rank backend: fewer than 2 GPUs";
  } else if (backend != "nccl") {
    v.reason = fmt::format("backend '{}' has no in-network reduction", backend);
  } else if (nranks < 2) {
    v.reason = "fewer than 2 GPUs";
  } else if (v.in_effect) {
    v.reason = chosen;
  } else if (facts.choices.empty()) {
    std::vector<std::string> why = obstacles(facts, nnodes);
    if (facts.version_code > 0 && facts.version_code < 22000) {
      why.push_back(fmt::format("NCCL {} does not log its algorithm choices (they are logged from "
                                "NCCL 2.20), so in-network reduction cannot be confirmed",
                                facts.version));
    } else {
      why.emplace_back("the NCCL log shows no algorithm choice (NCCL_DEBUG_SUBSYS without TUNING, "
                       "or no collective ran), so in-network reduction cannot be confirmed");
    }
    v.reason = join(why);
  } else {
    std::set<NcclAlgo> used;
    for (const NcclChoice& c : facts.choices) used.insert(c.algo);
    std::vector<std::string> why = obstacles(facts, nnodes);
    why.push_back(fmt::format("NCCL chose {} for every size", join_algos(used)));
    v.reason = join(why);
  }
  return v;
}

std::vector<EnvSetting> sharp_environment(bool on) {
  if (on) {
    return {{"NCCL_COLLNET_ENABLE", "1"}, {"NCCL_NVLS_ENABLE", "1"}, {"NCCL_ALGO", std::nullopt}};
  }
  return {{"NCCL_COLLNET_ENABLE", "0"}, {"NCCL_NVLS_ENABLE", "0"}};
}

std::vector<EnvSetting> nccl_debug_environment(const std::string& file) {
  if (file.empty()) throw UsageError("the NCCL debug file name is empty");
  for (size_t i = 0; i < file.size(); ++i) {
    if (file[i] != '%') continue;
    if (i + 1 < file.size() && (file[i + 1] == 'h' || file[i + 1] == 'p' || file[i + 1] == '%')) {
      ++i;
      continue;
    }
    throw UsageError(fmt::format("NCCL debug file '{}': NCCL expands only %h (host), %p (process) "
                                 "and %%",
                                 file));
  }
  return {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,TUNING,ENV"}, {"NCCL_DEBUG_FILE", file}};
}

std::string expand_nccl_debug_file(const std::string& file, const std::string& host, long pid) {
  std::string out;
  for (size_t i = 0; i < file.size(); ++i) {
    const char next = i + 1 < file.size() ? file[i + 1] : '\0';
    if (file[i] == '%' && (next == 'h' || next == 'p' || next == '%')) {
      out += next == 'h' ? host : next == 'p' ? std::to_string(pid) : std::string("%");
      ++i;
    } else {
      out += file[i];
    }
  }
  return out;
}

}  // namespace perflab::collectives
