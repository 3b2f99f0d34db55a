// Environment capture: host facts from uname and /proc, build facts from
// compile definitions, library versions asked of the libraries themselves.
#include "harness/environment.h"

#include <cblas.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/device.h"
#include "base/json_number.h"
#include "base/text.h"
#include "harness/version.h"

#ifdef PERFLAB_HAVE_CUDA
#include <cublasLt.h>
#endif
#ifdef PERFLAB_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef PERFLAB_HAVE_NCCL
#include <nccl.h>
#endif

#ifndef PERFLAB_COMPILER
#define PERFLAB_COMPILER "unknown"
#endif
#ifndef PERFLAB_BUILD_TYPE
#define PERFLAB_BUILD_TYPE "unknown"
#endif

namespace perflab {
namespace {

using nlohmann::json;

std::string trim_quoted(std::string s) {
  const auto first = s.find_first_not_of(" \t\"");
  const auto last = s.find_last_not_of(" \t\"\r\n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// The value after the first "<key><sep>" line in a /proc- or os-release-style
// file, or "" when there is none.
std::string field_of(const char* path, const std::string& key, char sep) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find(sep);
    if (at != std::string::npos && trim_quoted(line.substr(0, at)) == key) {
      return trim_quoted(line.substr(at + 1));
    }
  }
  return {};
}

std::string cpu_model() {
  for (const char* key : {"model name", "Hardware", "cpu model", "Processor"}) {
    std::string model = field_of("/proc/cpuinfo", key, ':');
    if (!model.empty()) return model;
  }
  return "unknown";
}

json memory_bytes() {
  const std::string kb = field_of("/proc/meminfo", "MemTotal", ':');  // "131891232 kB"
  if (kb.empty()) return nullptr;
  return std::strtoll(kb.c_str(), nullptr, 10) * 1024;
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

#ifdef PERFLAB_HAVE_CUDA
// 13000 -> "13.0" (CUDA runtime and driver encoding).
json cuda_version(int v) {
  if (v <= 0) return nullptr;
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// major * 10000 + minor * 100 + patch -> "major.minor.patch" (cuBLAS, cuDNN 9,
// NCCL 2.9+); cuDNN before 9 used major * 1000 + minor * 100 + patch.
json triple_version(long long v, long long major_scale = 10000) {
  if (v <= 0) return nullptr;
  return std::to_string(v / major_scale) + "." + std::to_string((v % major_scale) / 100) + "." +
         std::to_string(v % 100);
}

#endif
#ifdef PERFLAB_HAVE_CUDNN
json cudnn_version(long long v) { return triple_version(v, v >= 90000 ? 10000 : 1000); }
#endif

json openblas_info() {
  static const char* const kParallel[] = {"sequential", "pthreads", "openmp"};
  const int parallel = openblas_get_parallel();
  const char* config = openblas_get_config();
  return {{"config", config != nullptr ? trim_quoted(config) : "unknown"},
          {"num_threads", openblas_get_num_threads()},
          {"parallel", parallel >= 0 && parallel <= 2 ? kParallel[parallel] : "unknown"}};
}

/// The environment variables that change what a run measures: the CPU
/// thread counts, the devices it sees, and the CUDA runtime's hardware work
/// queues (CUDA_DEVICE_MAX_CONNECTIONS: how many streams can run side by side
/// without a false dependency) and launch blocking (every launch
/// synchronous), and what a captured graph's memset nodes become
/// (PERFLAB_GRAPH_MEMSETS: kernels/cuda/graph_memsets.h).
json env_vars() {
  json out = json::object();
  for (const char* name : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                           "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_LAUNCH_BLOCKING", "PERFLAB_GRAPH_MEMSETS"}) {
    if (const char* value = std::getenv(name)) {
      out[name] = invalid_utf8_at(value) == std::string::npos ? value : "(not valid UTF-8)";  // JSON holds UTF-8 only
    }
  }
  return out;
}

json device_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                     std::to_string(d.compute_capability_minor)},
          {"memory_bytes", d.total_memory_bytes},
          {"multiprocessors", d.multiprocessor_count},
          {"clock_rate_khz", d.clock_rate_khz},
          {"memory_clock_rate_khz", d.memory_clock_rate_khz},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"l2_cache_bytes", d.l2_cache_bytes},
          {"pci_bus_id", d.pci_bus_id}};
}

json cuda_info(const DeviceProbe& probe) {
  json cuda = json::object();
#ifdef PERFLAB_HAVE_CUDA
  cuda["built"] = true;
#else
  cuda["built"] = false;
#endif
  cuda["available"] = probe.available;
  if (!probe.available) cuda["reason"] = probe.reason;
#ifdef PERFLAB_HAVE_CUDA
  cuda["runtime_version"] = cuda_version(probe.runtime_version);
  cuda["driver_version"] = cuda_version(probe.driver_version);
  cuda["architectures"] = built_cuda_architectures();
  cuda["cublaslt_version"] = triple_version(static_cast<long long>(cublasLtGetVersion()));
#endif
#ifdef PERFLAB_HAVE_CUDNN
  cuda["cudnn_version"] = cudnn_version(static_cast<long long>(cudnnGetVersion()));
  cuda["cudnn_compiled_version"] = cudnn_version(CUDNN_VERSION);
#endif
#ifdef PERFLAB_HAVE_NCCL
  int nccl = 0;
  if (ncclGetVersion(&nccl) != ncclSuccess) nccl = 0;
  cuda["nccl_version"] = triple_version(nccl);
  cuda["nccl_compiled_version"] = triple_version(NCCL_VERSION_CODE);
#endif
  json devices = json::array();
  for (const DeviceInfo& d : probe.devices) devices.push_back(device_json(d));
  cuda["devices"] = std::move(devices);
  return cuda;
}

// ---- formatting ----------------------------------------------------------

// A field as text: strings as they are, numbers and booleans dumped, "" when
// missing or null.
std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return {};
  const json& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string gib(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return {};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", j[key].get<double>() / (1024.0 * 1024 * 1024));
  return buf;
}

std::string or_none(std::string s) { return s.empty() ? "none" : s; }

std::string device_line(const json& d) {
  std::string line = text(d, "name");
  if (!text(d, "compute_capability").empty()) line += ", compute " + text(d, "compute_capability");
  if (!gib(d, "memory_bytes").empty()) line += ", " + gib(d, "memory_bytes");
  if (!text(d, "multiprocessors").empty()) line += ", " + text(d, "multiprocessors") + " SMs";
  if (const auto khz = d.contains("clock_rate_khz") ? json_number<int64_t>(d["clock_rate_khz"]) : std::nullopt) {
    line += ", " + std::to_string(*khz / 1000) + " MHz";
  }
  if (!text(d, "pci_bus_id").empty()) line += ", PCI " + text(d, "pci_bus_id");
  return line;
}

void add_cuda_rows(const json& cuda, std::vector<std::pair<std::string, std::string>>& rows) {
  if (!cuda.is_object()) return;
  if (cuda.value("built", false)) {
    rows.emplace_back("cuda", "runtime " + or_none(text(cuda, "runtime_version")) + ", driver " +
                                  or_none(text(cuda, "driver_version")) + ", architectures " +
                                  or_none(text(cuda, "architectures")));
  }
  struct Library {
    const char* label;
    const char* key;
    const char* compiled_key;  // nullptr: no compiled-against version.
  };
  constexpr Library kLibraries[] = {{"cublasLt", "cublaslt_version", nullptr},
                                    {"cudnn", "cudnn_version", "cudnn_compiled_version"},
                                    {"nccl", "nccl_version", "nccl_compiled_version"}};
  for (const Library& lib : kLibraries) {
    std::string value = text(cuda, lib.key);
    if (value.empty()) continue;
    if (lib.compiled_key != nullptr && !text(cuda, lib.compiled_key).empty()) {
      value += " (compiled " + text(cuda, lib.compiled_key) + ")";
    }
    rows.emplace_back(lib.label, value);
  }
  if (!cuda.value("available", false)) {
    rows.emplace_back("gpu", "none: " + or_none(text(cuda, "reason")));
  } else if (cuda.contains("devices") && cuda["devices"].is_array()) {
    for (const json& d : cuda["devices"]) {
      rows.emplace_back("gpu " + text(d, "index"), device_line(d));
    }
  }
}

}  // namespace

json capture_environment() { return capture_environment(probe_devices()); }

json capture_environment(const DeviceProbe& probe) {
  json env = json::object();
  env["hostname"] = hostname();
  struct utsname u {};
  env["os"] = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine
                             : std::string("unknown");
  const std::string distribution = field_of("/etc/os-release", "PRETTY_NAME", '=');
  env["distribution"] = distribution.empty() ? "unknown" : distribution;
  env["cpu_model"] = cpu_model();
  env["logical_cores"] = sysconf(_SC_NPROCESSORS_ONLN);
  env["memory_bytes"] = memory_bytes();
  env["perflab_version"] = perflab_version();
  env["git_revision"] = git_revision();
  env["compiler"] = PERFLAB_COMPILER;
  env["build_type"] = PERFLAB_BUILD_TYPE;
  env["openblas"] = openblas_info();
  env["openmp_max_threads"] = omp_get_max_threads();
  env["env"] = env_vars();
  env["cuda"] = cuda_info(probe);
  return env;
}

std::string format_environment(const json& env) {
  std::vector<std::pair<std::string, std::string>> rows;
  auto add = [&rows](std::string label, std::string value) {
    if (!value.empty()) rows.emplace_back(std::move(label), std::move(value));
  };
  add("host", text(env, "hostname"));
  std::string os = text(env, "os");
  if (!text(env, "distribution").empty()) os += " (" + text(env, "distribution") + ")";
  add("os", os);
  std::string cpu = text(env, "cpu_model");
  if (!text(env, "logical_cores").empty()) cpu += ", " + text(env, "logical_cores") + " cores";
  add("cpu", cpu);
  add("memory", gib(env, "memory_bytes"));
  std::string perflab = text(env, "perflab_version");
  if (!perflab.empty()) {
    perflab += " (git " + or_none(text(env, "git_revision")) + ", " + text(env, "build_type") +
               ", " + text(env, "compiler") + ")";
  }
  add("perflab", perflab);
  if (env.contains("openblas") && env["openblas"].is_object()) {
    const json& blas = env["openblas"];
    add("openblas", text(blas, "config") + " (" + text(blas, "num_threads") + " threads, " +
                        text(blas, "parallel") + ")");
  }
  if (!text(env, "openmp_max_threads").empty()) {
    add("openmp", text(env, "openmp_max_threads") + " threads");
  }
  if (env.contains("env") && env["env"].is_object()) {
    for (const auto& [name, value] : env["env"].items()) {
      add(name, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  if (env.contains("cuda")) add_cuda_rows(env["cuda"], rows);

  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out;
  for (const auto& [label, value] : rows) {
    out += label + std::string(width + 2 - label.size(), ' ') + value + "\n";
  }
  return out;
}

}  // namespace perflab
