// Sweep files (YAML). Every error names the file and line.
//
//   name: dlrm-batch            # folder under out (default: the file's stem)
//   out: perflab-results        # default: perflab-results
//   workload: dlrm              # or a list; or NAME.workload.yaml (relative to this file)
//   preset: tiny                # or a list
//   params: {batch_size: [256, 512, 1024]}   # scalars or lists
//   toggles: {cuda_graphs: [on, off]}
//   seeds: 5                    # runs per point; first_seed: 1
//   backend: auto               # threads: 2; warmup: 3
//   mode: throughput            # or time-to-train (default: the workload's); iterations: 100
//   inference: {scenario: server, target_qps: 3000, latency_bound_ms: 20}   # with mode: inference
//   profile: kernels            # or trace (GPU, throughput mode; docs/profiling.md)
//   ntasks: 2                   # ranks per run (mpirun -np 2 perflab sweep ..., or --launcher slurm)
//   lr_rule: {rule: sqrt, base_batch_size: 256, base_learning_rate: 1.0, warmup_steps: 50}
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/input_file.h"
#include "harness/program.h"
#include "harness/registry.h"
#include "harness/sweep.h"
#include "base/text.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"name", "out", "workload", "workloads", "preset",
                                           "presets", "params", "toggles", "seeds", "first_seed",
                                           "backend", "threads", "warmup", "lr_rule",
                                           "mode", "iterations", "ntasks", "profile", "inference"};
const std::vector<std::string> kInferenceKeys = {"scenario", "mode", "target_qps", "latency_bound_ms",
                                                 "min_duration_ms", "min_query_count", "max_batch", "max_wait_ms",
                                                 "loadgen_trace"};
const std::vector<std::string> kLrKeys = {"rule", "base_batch_size", "base_learning_rate",
                                          "warmup_steps"};

class SweepFileReader {
 public:
  explicit SweepFileReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& why) const {
    throw UsageError(fmt::format("{}:{}: {}", file_, node.Mark().line + 1, why));
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a single value");
    // Values reach sweep.json, results and logs, which hold UTF-8 only.
    if (const size_t at = invalid_utf8_at(node.Scalar()); at != std::string::npos) {
      fail(node, fmt::format("{} must be UTF-8 text (found byte 0x{:02x}); save the file as UTF-8", what,
                             static_cast<unsigned char>(node.Scalar()[at])));
    }
    return node.Scalar();
  }

  /// A scalar or a list of scalars; an empty list is an error (empty product).
  std::vector<std::pair<std::string, YAML::Node>> values(const YAML::Node& node,
                                                         const std::string& what) const {
    std::vector<std::pair<std::string, YAML::Node>> out;
    if (node.IsSequence()) {
      if (node.size() == 0) fail(node, what + " is an empty list: the sweep would run nothing");
      for (const auto& item : node) out.emplace_back(scalar(item, what + " entries"), item);
    } else {
      out.emplace_back(scalar(node, what), node);
    }
    return out;
  }

  /// An integer in [min, max]; text beyond int64 is out of range, not wrapped.
  int64_t integer(const YAML::Node& node, const std::string& what, int64_t min, int64_t max) const {
    std::string text = scalar(node, what);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') fail(node, fmt::format("{} must be an integer, got '{}'", what, text));
    if (errno == ERANGE || v < min || v > max) {
      fail(node, fmt::format("{} must be in [{}, {}], got {}", what, min, max, text));
    }
    return v;
  }

  double number(const YAML::Node& node, const std::string& what) const {
    std::string text = scalar(node, what);
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
      fail(node, fmt::format("{} must be a positive finite number, got '{}'", what, text));
    }
    return v;
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& valid,
                  const std::string& where) const {
    if (!map.IsMap()) fail(map, where + " must be a mapping of keys to values");
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      if (!contains(valid, key)) {
        fail(kv.first, fmt::format("unknown key '{}' in {}; valid keys: {}", key, where, join(valid, ", ")));
      }
    }
  }

  SweepPlan read(const YAML::Node& root, const std::string& stem) {
    if (!root.IsDefined() || root.IsNull()) {
      throw UsageError(fmt::format("{}:1: the sweep file is empty", file_));
    }
    check_keys(root, kTopKeys, "the sweep file");
    SweepPlan plan;
    plan.name = root["name"] ? scalar(root["name"], "name") : stem;
    // The name is a folder under out: one plain component, so results stay inside it.
    const bool control = std::any_of(plan.name.begin(), plan.name.end(),
                                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    if (plan.name.empty() || plan.name == "." || plan.name == ".." ||
        plan.name.find_first_of("/\\") != std::string::npos || control) {
      fail(root["name"] ? root["name"] : root,
           fmt::format("name '{}' must be a folder name (no '/', no control characters, not '.' or '..')",
                       plan.name));
    }
    plan.out_dir = root["out"] ? scalar(root["out"], "out") : "perflab-results";
    RunRequest base;
    base.out_dir = plan.out_dir;
    SweepAxes axes;

    YAML::Node workloads = root["workloads"] ? root["workloads"] : root["workload"];
    if (!workloads) fail(root, "the sweep file names no workload (workload: NAME)");
    for (auto [name, node] : values(workloads, "workload")) {
      // A workload file named relative to the sweep file is found beside it.
      if (is_workload_file_name(name) && fs::path(name).is_relative()) {
        name = (fs::path(file_).parent_path() / name).lexically_normal().string();
      }
      try {
        Registry::instance().get(name);
      } catch (const UsageError& e) {
        fail(node, e.what());
      }
      axes.workloads.push_back(name);
    }
    YAML::Node presets = root["presets"] ? root["presets"] : root["preset"];
    if (presets) {
      for (const auto& [name, node] : values(presets, "preset")) {
        for (const auto& w : axes.workloads) {
          const WorkloadInfo& info = Registry::instance().get(w);
          if (!info.find_preset(name)) fail(node, fmt::format("{} has no preset '{}'", w, name));
        }
        axes.presets.push_back(name);
      }
    }
    if (YAML::Node params = root["params"]) {
      if (!params.IsMap()) fail(params, "params must be a mapping of parameter names to values");
      for (const auto& kv : params) {
        std::string name = kv.first.Scalar();
        for (const auto& [text, node] : values(kv.second, "params." + name)) {
          for (const auto& w : axes.workloads) {
            const WorkloadInfo& info = Registry::instance().get(w);
            const ParamSpec* spec = nullptr;
            for (const auto& p : info.params) {
              if (p.name == name) spec = &p;
            }
            if (!spec) {
              std::vector<std::string> names;
              for (const auto& p : info.params) names.push_back(p.name);
              fail(kv.first, fmt::format("{}: unknown parameter '{}'; valid parameters: {}", w, name,
                                         join(names, ", ")));
            }
            try {
              parse_param(w, *spec, text);
            } catch (const UsageError& e) {
              fail(node, e.what());
            }
          }
          axes.params[name].push_back(text);
        }
      }
    }
    if (YAML::Node toggles = root["toggles"]) {
      if (!toggles.IsMap()) fail(toggles, "toggles must be a mapping such as {cuda_graphs: [on, off]}");
      for (const auto& kv : toggles) {
        std::string key = kv.first.Scalar();
        std::optional<Toggle> toggle;
        std::vector<std::string> names;
        for (Toggle t : kAllToggles) {
          names.push_back(toggle_key(t));
          if (key == toggle_key(t) || key == toggle_flag(t)) toggle = t;
        }
        if (!toggle) fail(kv.first, fmt::format("unknown toggle '{}'; valid toggles: {}", key, join(names, ", ")));
        for (const auto& [text, node] : values(kv.second, "toggles." + key)) {
          try {
            axes.toggles[*toggle].push_back(parse_on_off(toggle_flag(*toggle), text));
          } catch (const UsageError& e) {
            fail(node, e.what());
          }
        }
      }
    }
    // Counts within the bounds every request has (harness/run_spec.h), so
    // the casts below cannot wrap.
    if (root["seeds"]) base.seeds = static_cast<int>(integer(root["seeds"], "seeds", 1, kMaxSeeds));
    if (root["first_seed"]) {
      base.first_seed = static_cast<uint64_t>(
          integer(root["first_seed"], "first_seed", 0, std::numeric_limits<int64_t>::max() - kMaxSeeds));
    }
    if (root["threads"]) base.threads = static_cast<int>(integer(root["threads"], "threads", 1, kMaxThreads));
    if (root["ntasks"]) plan.ntasks = static_cast<int>(integer(root["ntasks"], "ntasks", 1, kMaxRanks));
    if (root["warmup"]) {
      base.warmup_iterations = static_cast<int>(integer(root["warmup"], "warmup", 0, kMaxWarmupIterations));
    }
    if (root["iterations"]) {
      base.iterations = static_cast<int>(integer(root["iterations"], "iterations", 1, kMaxIterations));
    }
    if (root["mode"]) {
      base.mode = scalar(root["mode"], "mode");
      if (!parse_run_mode(base.mode)) {
        fail(root["mode"], fmt::format("mode '{}' is not valid; valid values: {}", base.mode, kRunModeNames));
      }
    }
    if (const YAML::Node inference = root["inference"]) {
      if (!inference.IsMap()) fail(inference, "inference must be a mapping of LoadGen settings (scenario: server, ...)");
      check_keys(inference, kInferenceKeys, "inference");
      InferenceSettings& s = base.inference;
      if (inference["scenario"]) s.scenario = scalar(inference["scenario"], "inference.scenario");
      if (inference["mode"]) s.mode = scalar(inference["mode"], "inference.mode");
      if (const YAML::Node t = inference["target_qps"]; t && t.IsSequence()) {
        if (base.mode != "inference") fail(t, "inference.target_qps lists targets to sweep: set mode: inference");
        // A list: one point per target (a Server sweep finds the highest that stays VALID).
        if (t.size() == 0) fail(t, "inference.target_qps has no values: the sweep is empty");
        for (const YAML::Node& v : t) axes.target_qps.push_back(number(v, "inference.target_qps"));
        s.target_qps = axes.target_qps.front();
      } else if (t) {
        s.target_qps = number(t, "inference.target_qps");
      }
      if (inference["latency_bound_ms"]) {
        s.latency_bound_ms = number(inference["latency_bound_ms"], "inference.latency_bound_ms");
      }
      if (inference["min_duration_ms"]) {
        s.min_duration_ms = integer(inference["min_duration_ms"], "inference.min_duration_ms", 0, int64_t{1} << 40);
      }
      if (inference["min_query_count"]) {
        s.min_query_count = integer(inference["min_query_count"], "inference.min_query_count", 1, int64_t{1} << 40);
      }
      if (inference["max_batch"]) {
        s.max_batch = static_cast<int>(integer(inference["max_batch"], "inference.max_batch", 1, 1 << 24));
      }
      if (inference["max_wait_ms"]) {
        const YAML::Node& w = inference["max_wait_ms"];
        s.max_wait_ms = scalar(w, "inference.max_wait_ms") == "0" ? 0.0 : number(w, "inference.max_wait_ms");
      }
      if (inference["loadgen_trace"]) {
        const std::string t = scalar(inference["loadgen_trace"], "inference.loadgen_trace");
        if (t != "true" && t != "false") {
          fail(inference["loadgen_trace"], fmt::format("inference.loadgen_trace must be true or false, got '{}'", t));
        }
        s.trace = t == "true";
      }
      if (const std::string problem = check_inference_settings(s); !problem.empty()) fail(inference, problem);
    }
    if (root["profile"]) {
      base.profile = scalar(root["profile"], "profile");
      if (!contains({"off", "kernels", "trace"}, base.profile)) {
        fail(root["profile"], fmt::format("profile '{}' is not valid; valid values: off, kernels, trace", base.profile));
      }
    }
    if (root["backend"]) {
      base.backend = scalar(root["backend"], "backend");
      if (!contains({"auto", "cpu", "cuda"}, base.backend)) {
        fail(root["backend"], fmt::format("backend '{}' is not valid; valid values: auto, cpu, cuda", base.backend));
      }
    }
    if (YAML::Node lr = root["lr_rule"]) {
      check_keys(lr, kLrKeys, "lr_rule");
      LrRule rule;
      if (!lr["rule"] || !lr["base_batch_size"] || !lr["base_learning_rate"]) {
        fail(lr, "lr_rule needs rule, base_batch_size and base_learning_rate");
      }
      rule.rule = scalar(lr["rule"], "lr_rule.rule");
      if (!contains({"linear", "sqrt", "fixed"}, rule.rule)) {
        fail(lr["rule"], fmt::format("lr_rule.rule '{}' is not valid; valid values: linear, sqrt, fixed", rule.rule));
      }
      rule.base_batch_size = integer(lr["base_batch_size"], "lr_rule.base_batch_size", 1,
                                     std::numeric_limits<int64_t>::max());
      rule.base_learning_rate = number(lr["base_learning_rate"], "lr_rule.base_learning_rate");
      if (lr["warmup_steps"]) {
        rule.warmup_steps = integer(lr["warmup_steps"], "lr_rule.warmup_steps", 0, std::numeric_limits<int64_t>::max());
      }
      for (const auto& w : axes.workloads) {
        const WorkloadInfo& info = Registry::instance().get(w);
        if (info.batch_param.empty() || info.learning_rate_param.empty()) {
          fail(lr, fmt::format("lr_rule: {} declares no batch-size and learning-rate parameters", w));
        }
        if (!axes.params.count(info.batch_param)) {
          fail(lr, fmt::format("lr_rule needs a params.{} list to follow", info.batch_param));
        }
        if (axes.params.count(info.learning_rate_param)) {
          fail(lr, fmt::format("lr_rule sets the learning rate: remove params.{}", info.learning_rate_param));
        }
      }
      axes.lr_rule = rule;
    }
    try {
      plan.points = expand_sweep(base, axes);
    } catch (const UsageError& e) {
      fail(root, e.what());
    }
    std::stringstream text;
    text << root;
    plan.definition = {{"source", file_}, {"yaml", text.str()}};
    return plan;
  }

 private:
  std::string file_;
};

}  // namespace

SweepPlan parse_sweep_text(const std::string& yaml, const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path.string(), e.mark.line + 1, e.msg));
  }
  return SweepFileReader(path.string()).read(root, path.stem().string());
}

SweepPlan read_sweep_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_document(path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} (the sweep file)", e.what()));
  }
  return parse_sweep_text(text, path);
}

}  // namespace perflab
