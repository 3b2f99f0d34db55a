// nccl-tests' flags as perflab's (see nccl_tests_args.h).
#include "workloads/collectives/nccl_tests_args.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "collectives/byte_size.h"
#include "base/error.h"

namespace perflab::collectives_workload {
namespace {

struct Alias {
  const char* short_flag;
  const char* long_flag;
};

// The flags that take a value, by the name used below.
const std::map<std::string, Alias> kAliases = {
    {"minbytes", {"-b", "--minbytes"}}, {"maxbytes", {"-e", "--maxbytes"}}, {"stepfactor", {"-f", "--stepfactor"}},
    {"stepbytes", {"-i", "--stepbytes"}}, {"iters", {"-n", "--iters"}},     {"warmup_iters", {"-w", "--warmup_iters"}},
    {"check", {"-c", "--check"}},       {"cuda_graph", {"-G", "--cuda_graph"}}, {"op", {"-o", "--op"}},
    {"datatype", {"-d", "--datatype"}}, {"average", {"-a", "--average"}},   {"root", {"-r", "--root"}},
};

// nccl-tests flags perflab does not take, and why.
const std::map<std::string, const char*> kRefused = {
    {"-t", "perflab runs one thread per rank: start more ranks with mpirun -np or srun -n"},
    {"--nthreads", "perflab runs one thread per rank: start more ranks with mpirun -np or srun -n"},
    {"-g", "perflab drives one GPU per rank: start one rank per GPU with mpirun -np or srun -n"},
    {"--ngpus", "perflab drives one GPU per rank: start one rank per GPU with mpirun -np or srun -n"},
};

int64_t parse_int_flag(const std::string& flag, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError(fmt::format("{} {}: expected an integer", flag, text));
  return v;
}

}  // namespace

size_t parse_nccl_tests_bytes(const std::string& flag, const std::string& text) {
  // collectives/byte_size.h reads the sizes; this keeps nccl-tests' wording.
  // 0 is a size nccl-tests takes; nccl_tests_sizes refuses it with the reason.
  if (text == "0") return 0;
  try {
    return static_cast<size_t>(collectives::parse_byte_size(text, flag));
  } catch (const UsageError&) {
    throw UsageError(fmt::format("{} {}: expected bytes such as 8, 64K, 64M or 1G", flag, text));
  }
}

std::vector<size_t> nccl_tests_sizes(size_t min_bytes, size_t max_bytes, double factor, size_t step) {
  if (min_bytes == 0) throw UsageError("-b 0: the smallest size must be at least 1 byte");
  if (max_bytes < min_bytes) throw UsageError(fmt::format("-e {} is below -b {}", max_bytes, min_bytes));
  if (factor <= 1 && step == 0) throw UsageError("-i 0 with -f 1: the sizes would never grow");
  std::vector<size_t> sizes;
  for (size_t s = min_bytes; s <= max_bytes;) {
    sizes.push_back(s);
    const size_t next = factor > 1 ? static_cast<size_t>(std::ceil(static_cast<double>(s) * factor)) : s + step;
    if (next <= s) break;
    s = next;
    if (sizes.size() > 4096) throw UsageError("more than 4096 message sizes: raise -f or -i, or narrow -b..-e");
  }
  return sizes;
}

std::vector<std::string> translate_nccl_tests_args(const std::vector<std::string>& args) {
  std::map<std::string, std::string> given;
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool has_inline = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline = true;
    }
    if (auto refused = kRefused.find(flag); refused != kRefused.end()) {
      throw UsageError(fmt::format("{}: {}", flag, refused->second));
    }
    const auto alias = std::find_if(kAliases.begin(), kAliases.end(), [&](const auto& a) {
      return flag == a.second.short_flag || flag == a.second.long_flag;
    });
    if (alias == kAliases.end()) {
      out.push_back(args[i]);
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("{} needs a value", flag));
      value = args[++i];
    }
    given[alias->first] = value;
  }

  const bool sizes = given.count("minbytes") || given.count("maxbytes") || given.count("stepfactor") ||
                     given.count("stepbytes");
  if (sizes) {
    const size_t min_bytes = given.count("minbytes") ? parse_nccl_tests_bytes("-b", given["minbytes"]) : 32 << 20;
    const size_t max_bytes = given.count("maxbytes") ? parse_nccl_tests_bytes("-e", given["maxbytes"]) : 32 << 20;
    double factor = 1;
    if (given.count("stepfactor")) factor = static_cast<double>(parse_int_flag("-f", given["stepfactor"]));
    const size_t step = given.count("stepbytes") ? parse_nccl_tests_bytes("-i", given["stepbytes"]) : 1 << 20;
    std::string list;
    for (size_t s : nccl_tests_sizes(min_bytes, max_bytes, factor, step)) list += (list.empty() ? "" : ",") + std::to_string(s);
    out.insert(out.end(), {"--set", "bytes=" + list});
    // nccl-tests times both placements of every size.
    const bool placement_given = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a.rfind("in_place=", 0) == 0;
    });
    if (!placement_given) out.insert(out.end(), {"--set", "in_place=0,1"});
  }
  auto set = [&](const char* alias, const char* param) {
    if (given.count(alias)) out.insert(out.end(), {"--set", std::string(param) + "=" + given[alias]});
  };
  set("iters", "iters");
  set("warmup_iters", "warmup_iters");
  set("check", "check");
  set("op", "redop");
  set("datatype", "dtype");
  set("average", "average");
  set("root", "root");
  if (given.count("cuda_graph")) {
    out.insert(out.end(), {"--cuda-graphs", parse_int_flag("-G", given["cuda_graph"]) > 0 ? "on" : "off"});
  }
  return out;
}

}  // namespace perflab::collectives_workload
