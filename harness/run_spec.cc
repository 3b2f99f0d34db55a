// RunSpec resolution.
#include "harness/run_spec.h"

#include <cstdlib>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "harness/device.h"
#include "base/error.h"
#include "base/json_number.h"
#include "harness/registry.h"
#include "base/text.h"

namespace perflab {
namespace {

bool supports(const WorkloadInfo& info, Backend b) {
  for (Backend x : info.backends) {
    if (x == b) return true;
  }
  return false;
}

int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

std::string backend_list(const WorkloadInfo& info) {
  std::vector<std::string> names;
  for (Backend b : info.backends) names.push_back(backend_name(b));
  return join(names, ", ");
}

RunMode resolve_mode(const std::string& text, const WorkloadInfo& info) {
  std::vector<std::string> names;
  const std::vector<RunMode> modes = info.modes();
  for (RunMode m : modes) names.push_back(run_mode_name(m));
  if (text.empty()) return modes.front();
  for (RunMode m : modes) {
    if (text == run_mode_name(m)) return m;
  }
  if (parse_run_mode(text)) {
    throw UsageError(fmt::format("{} has no {} mode; available: {}", info.name, text, join(names, ", ")));
  }
  throw UsageError(fmt::format("--mode: '{}' is not a valid value; valid values: {}", text, kRunModeNames));
}

/// A count inside [min, max], or a UsageError naming the flag and the bounds.
void check_count(const char* flag, int value, int min, int max) {
  if (value < min || value > max) {
    throw UsageError(fmt::format("{}: must be in [{}, {}], got {}", flag, min, max, value));
  }
}

bool honoured_on(const ToggleRule& rule, Backend backend) {
  for (Backend b : rule.backends) {
    if (b == backend) return true;
  }
  return false;
}

}  // namespace

ToggleSet resolve_toggles(const std::map<Toggle, bool>& requested, const WorkloadInfo& info,
                          Backend backend) {
  ToggleSet out;
  for (Toggle t : kAllToggles) {
    auto it = requested.find(t);
    ToggleState& state = out[t];
    state.requested = it != requested.end() && it->second;
    if (!state.requested) continue;
    const ToggleRule* rule = info.toggle_rule(t);
    if (!rule) {
      state.reason = fmt::format("{} has no {} variant", info.name, toggle_flag(t));
    } else if (!honoured_on(*rule, backend)) {
      state.reason = rule->unsupported;
    }
    state.in_effect = state.reason.empty();
  }
  // Dependencies are judged against the first pass, so their order does not matter.
  const ToggleSet first_pass = out;
  for (Toggle t : kAllToggles) {
    ToggleState& state = out[t];
    const ToggleRule* rule = info.toggle_rule(t);
    if (!state.in_effect || !rule || rule->needs_nothing) continue;
    const std::optional<Toggle> needs = rule->needs ? rule->needs : default_toggle_need(t);
    if (!needs || first_pass[*needs].in_effect) continue;
    state.in_effect = false;
    state.reason = !rule->needs_why.empty()
                       ? rule->needs_why
                       : fmt::format("--{} needs --{} on (the step must not synchronise with the host inside its "
                                     "iteration)", toggle_flag(t), toggle_flag(*needs));
  }
  return out;
}

std::string RunSpec::preset_label() const {
  return overrides.empty() ? preset : preset + "+overrides";
}

const char* profile_mode_name(ProfileMode mode) {
  switch (mode) {
    case ProfileMode::kOff: return "off";
    case ProfileMode::kKernels: return "kernels";
    case ProfileMode::kTrace: return "trace";
  }
  return "?";
}

ResultSpec result_spec_of(const RunSpec& spec) {
  ResultSpec out;
  out.workload = spec.workload;
  out.preset = spec.preset;
  out.overrides = spec.overrides;
  out.params = spec.params.json();
  out.backend_requested = spec.backend_requested;
  out.backend = backend_name(spec.backend);
  out.backend_reason = spec.backend_reason;
  for (Toggle t : kAllToggles) out.toggles_requested.emplace_back(toggle_key(t), spec.toggles[t].requested);
  out.seeds = spec.seeds;
  out.threads = spec.threads;
  out.ranks = spec.ranks;
  out.warmup_iterations = spec.warmup_iterations;
  out.mode = spec.mode;
  out.iterations = spec.iterations;
  out.batch_param = spec.batch_param;
  out.learning_rate_param = spec.learning_rate_param;
  out.workload_file = spec.workload_file;
  out.check_launches = spec.check_launches;
  out.profile = profile_mode_name(spec.profile);
  if (spec.mode == RunMode::kInference) out.inference = inference_settings_to_json(spec.inference);
  return out;
}

nlohmann::json RunSpec::to_json() const { return perflab::to_json(result_spec_of(*this)); }

namespace {

/// --profile: a device's kernels are profiled in throughput mode's extra
/// window; anything else is refused in one line (exit 2).
ProfileMode resolve_profile(const std::string& value, const RunSpec& spec) {
  ProfileMode mode = ProfileMode::kOff;
  if (value == "kernels") {
    mode = ProfileMode::kKernels;
  } else if (value == "trace") {
    mode = ProfileMode::kTrace;
  } else if (value != "off") {
    throw UsageError(fmt::format("--profile: '{}' is not a valid value; valid values: off, kernels, trace", value));
  }
  if (mode == ProfileMode::kOff) return mode;
  if (spec.backend != Backend::kCuda) {
    throw UsageError(fmt::format("--profile {}: profiling records a GPU's kernels (CUPTI) and this run is on the {} "
                                 "backend{}; run with --backend cuda on a machine with a GPU",
                                 value, backend_name(spec.backend),
                                 spec.backend_reason.empty() ? "" : " (" + spec.backend_reason + ")"));
  }
  if (spec.mode != RunMode::kThroughput) {
    throw UsageError(fmt::format("--profile {}: profiles a throughput run's step (an extra window beside the timed "
                                 "one, so the profiler's cost is measured); add --mode throughput",
                                 value));
  }
  return mode;
}

}  // namespace

RunSpec resolve_run_spec(const RunRequest& request, const WorkloadInfo& info,
                         const DeviceProbe& devices) {
  RunSpec spec;
  spec.workload = info.name;
  spec.workload_file = info.source;
  spec.preset = request.preset.empty() ? info.default_preset : request.preset;
  const Preset* preset = info.find_preset(spec.preset);
  if (!preset) {
    std::vector<std::string> names;
    for (const auto& p : info.presets) names.push_back(p.name);
    throw UsageError(fmt::format("{}: unknown preset '{}'; valid presets: {}", info.name,
                                 spec.preset, join(names, ", ")));
  }
  spec.overrides = request.overrides;
  spec.params = resolve_params(info.name, info.params, preset, request.overrides);

  spec.backend_requested = request.backend;
  if (request.backend == "cpu") {
    spec.backend = Backend::kCpu;
  } else if (request.backend == "cuda") {
    if (!devices.available) {
      throw Error("--backend cuda: " + devices.reason + "; run on the CPU with --backend cpu (or auto)");
    }
    spec.backend = Backend::kCuda;
  } else if (request.backend == "auto") {
    if (devices.available && supports(info, Backend::kCuda)) {
      spec.backend = Backend::kCuda;
      spec.backend_reason = "auto: a CUDA device is present";
    } else {
      spec.backend = Backend::kCpu;
      spec.backend_reason = devices.available
                                ? fmt::format("auto: {} has no cuda backend", info.name)
                                : "auto: " + devices.reason;
    }
  } else {
    throw UsageError(fmt::format("--backend: '{}' is not a valid value; valid values: auto, cpu, cuda",
                                 request.backend));
  }
  if (!supports(info, spec.backend)) {
    throw UsageError(fmt::format("{} has no {} backend; available: {}", info.name,
                                 backend_name(spec.backend), backend_list(info)));
  }

  spec.toggles = resolve_toggles(request.toggles, info, spec.backend);
  if (info.kind() == WorkloadKind::kProgram) {
    // A program's toggles are what its file maps them to: one it does not
    // map is refused rather than run as if it were honoured; one it maps is
    // passed on, and perflab cannot see what the program does with it.
    for (Toggle t : kAllToggles) {
      ToggleState& state = spec.toggles[t];
      if (!state.requested) continue;
      if (!info.toggle_rule(t)) {
        throw UsageError(fmt::format("--{}: {} maps no {} toggle; add `toggles: {{{}: {{on: {{args: [...], env: "
                                     "{{...}}}}}}}}` to {}",
                                     toggle_flag(t), info.name, toggle_key(t), toggle_key(t), info.source));
      }
      if (state.in_effect) state.reason = "passed to the program; perflab cannot see whether it honoured it";
    }
  }

  check_count("--seeds", request.seeds, 1, kMaxSeeds);
  if (request.first_seed > std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(request.seeds - 1)) {
    throw UsageError(fmt::format("--seed: {} seeds from {} pass 2^64 - 1", request.seeds, request.first_seed));
  }
  for (int i = 0; i < request.seeds; ++i) spec.seeds.push_back(request.first_seed + static_cast<uint64_t>(i));
  check_count("--threads", request.threads, 0, kMaxThreads);  // 0: the default
  spec.threads = request.threads > 0 ? request.threads : default_threads();
  check_count("--warmup", request.warmup_iterations, 0, kMaxWarmupIterations);
  spec.warmup_iterations = request.warmup_iterations;
  spec.mode = resolve_mode(request.mode, info);
  spec.inference = request.inference;
  if (spec.mode == RunMode::kInference) {
    if (const std::string problem = check_inference_settings(spec.inference); !problem.empty()) {
      throw UsageError(problem);
    }
  }
  check_count("--iterations", request.iterations, 1, kMaxIterations);
  spec.iterations = request.iterations;
  spec.profile = resolve_profile(request.profile, spec);
  spec.check_launches = request.check_launches;
  if (spec.check_launches) {
    if (info.kind() == WorkloadKind::kProgram) {
      throw UsageError(fmt::format("--check-launches: {} is an external program, whose kernels perflab does not "
                                   "launch",
                                   info.name));
    }
    if (spec.backend != Backend::kCuda) {
      throw UsageError(fmt::format("--check-launches waits for the GPU after every kernel launch, and this run is on "
                                   "the {} backend{}; run with --backend cuda on a machine with a GPU",
                                   backend_name(spec.backend),
                                   spec.backend_reason.empty() ? "" : " (" + spec.backend_reason + ")"));
    }
    ToggleState& graphs = spec.toggles[Toggle::kCudaGraphs];
    if (graphs.in_effect) {
      graphs.in_effect = false;
      graphs.reason = "--check-launches waits for the device after every launch, which a captured graph cannot";
    }
  }
  spec.out_dir = request.out_dir;
  spec.batch_param = info.batch_param;
  spec.learning_rate_param = info.learning_rate_param;
  return spec;
}

std::string platform_description(const nlohmann::json& env, const RunSpec& spec) {
  if (spec.backend == Backend::kCuda) {
    const auto devices = env.value("/cuda/devices"_json_pointer, nlohmann::json::array());
    if (!devices.empty()) return fmt::format("1x{}", devices[0].value("name", "GPU"));
  }
  return fmt::format("{} ({} threads)", env.value("cpu_model", std::string("unknown CPU")),
                     spec.threads);
}

RunRequest request_from_json(const nlohmann::json& spec) {
  RunRequest r;
  // A count as the type that holds it, or a one-line error: 1e300 threads
  // must not reach a cast to int.
  auto count = [&](const char* key) {
    const nlohmann::json& v = spec.at(key);
    if (std::optional<int> n = json_number<int>(v)) return *n;
    throw UsageError(fmt::format("result spec is malformed: {} is {}, not an integer in range", key, v.dump()));
  };
  try {
    r.workload = spec.at("workload").get<std::string>();
    // An external workload is loaded again from its file.
    if (spec.contains("workload_file")) r.workload = spec.at("workload_file").get<std::string>();
    r.preset = spec.at("preset").get<std::string>();
    r.overrides = spec.at("overrides").get<std::map<std::string, std::string>>();
    r.backend = spec.at("backend").get<std::string>();
    for (Toggle t : kAllToggles) {
      r.toggles[t] = spec.at("toggles_requested").at(toggle_key(t)).get<bool>();
    }
    const nlohmann::json& seeds = spec.at("seeds");
    if (!seeds.is_array() || seeds.empty()) throw UsageError("result spec has no seeds");
    if (seeds.size() > static_cast<size_t>(kMaxSeeds)) {
      throw UsageError(fmt::format("result spec has {} seeds, more than {}", seeds.size(), kMaxSeeds));
    }
    std::vector<uint64_t> values;
    for (const auto& seed : seeds) {
      std::optional<uint64_t> v = json_number<uint64_t>(seed);
      if (!v) throw UsageError(fmt::format("result spec seed {} is not an unsigned integer", seed.dump()));
      values.push_back(*v);
    }
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i] <= values[0] || values[i] - values[0] != i) {
        throw UsageError("result spec seeds are not consecutive");
      }
    }
    r.first_seed = values.front();
    r.seeds = static_cast<int>(values.size());
    r.threads = count("threads");
    r.warmup_iterations = count("warmup_iterations");
    // Results written before throughput mode existed are time-to-train.
    r.mode = spec.value("mode", std::string("time-to-train"));
    if (spec.contains("iterations")) r.iterations = count("iterations");
    r.profile = spec.value("profile", std::string("off"));
    if (spec.contains("check_launches")) r.check_launches = spec.at("check_launches").get<bool>();
    if (spec.contains("inference")) r.inference = inference_settings_from_json(spec.at("inference"));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("result spec is malformed: ") + e.what());
  }
  return r;
}

}  // namespace perflab
