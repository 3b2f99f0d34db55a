// The result model's to-JSON and from-JSON (see result_model.h): the only
// place that looks a result document's fields up by name. Required fields
// are those validate_result checks; the rest have defaults, as the earliest
// version-1 files lack them (kind, work, host timing, execution).
#include "harness/result_model.h"

#include <cmath>
#include <limits>

#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/input_file.h"
#include "base/json_number.h"
#include "harness/json_text.h"

namespace perflab {
namespace {

using nlohmann::json;

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json text_or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

// ---- writing ----

json execution_json(const ResultExecution& e) {
  return {{"cuda_graphs",
           {{"used", e.graphs_used}, {"captured", e.graphs_captured}, {"replayed", e.graph_replays},
            {"note", e.graphs_note}}},
          {"host_syncs_per_iteration",
           {{"min", e.syncs_min}, {"max", e.syncs_max}, {"expected", optional_json(e.syncs_expected)}}},
          {"launches_per_iteration",
           {{"kernels", optional_json(e.kernels_per_iteration)},
            {"copies", optional_json(e.copies_per_iteration)},
            {"memsets", optional_json(e.memsets_per_iteration)},
            {"declared_kernels", optional_json(e.declared_kernels_per_iteration)},
            {"counted_at", optional_json(e.launches_counted_at)},
            {"note", e.launches_note}}}};
}

json plan_json(const ResultPlan& p) {
  return {{"global_batch_size", p.global_batch_size},
          {"precision", p.precision},
          {"hyperparameters", p.hyperparameters},
          {"data", p.data},
          {"sample_unit", p.sample_unit},
          {"train_samples", optional_json(p.train_samples)},
          {"eval_samples", optional_json(p.eval_samples)},
          {"iterations_per_epoch", optional_json(p.iterations_per_epoch)},
          {"max_epochs", optional_json(p.max_epochs)},
          {"eval_interval_epochs", optional_json(p.eval_interval_epochs)}};
}

json work_json(const ResultWork& w) {
  return {{"flops_per_iteration", w.flops_per_iteration},
          {"bytes_per_iteration", w.bytes_per_iteration},
          {"floor_ms", optional_json(w.floor_ms)},
          {"floor_basis", w.floor_basis},
          {"median_iteration_ms", optional_json(w.median_iteration_ms)},
          {"achieved_tflops", optional_json(w.achieved_tflops)},
          {"achieved_gbytes_per_s", optional_json(w.achieved_gbytes_per_s)},
          {"times_floor", optional_json(w.times_floor)}};
}

json toggles_json(const std::vector<ResultToggle>& toggles) {
  json out = json::object();
  for (const ResultToggle& t : toggles) {
    json j = {{"requested", t.requested}, {"in_effect", t.in_effect}};
    if (!t.reason.empty()) j["reason"] = t.reason;
    out[t.name] = j;
  }
  return out;
}

// ---- reading ----

/// A field of the wrong type: the path of the field, for the one-line error.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

template <typename T>
std::optional<T> opt(const json& j, const char* key, const char* where) {
  const json& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (v.is_string()) return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return v.get<bool>();
  } else {
    if (v.is_number()) {
      // Numbers are converted only when T holds them (base/json_number.h).
      if (std::optional<T> n = json_number<T>(v)) return n;
      throw BadField(fmt::format("{}.{} is out of range or not an integer ({})", where, key, v.dump()));
    }
  }
  throw BadField(fmt::format("{}.{} has the wrong type ({})", where, key, v.type_name()));
}

template <typename T>
T get_or(const json& j, const char* key, const char* where, T fallback) {
  return opt<T>(j, key, where).value_or(fallback);
}

Summary read_summary(const json& j) {
  Summary s;
  if (!j.is_object()) return s;
  s.n = get_or<size_t>(j, "n", "summary", 0);
  s.mean = get_or<double>(j, "mean", "summary", 0);
  s.min = get_or<double>(j, "min", "summary", 0);
  s.p50 = get_or<double>(j, "p50", "summary", 0);
  s.p90 = get_or<double>(j, "p90", "summary", 0);
  s.p99 = get_or<double>(j, "p99", "summary", 0);
  s.max = get_or<double>(j, "max", "summary", 0);
  return s;
}

ResultSpec read_spec(const json& j, int version) {
  ResultSpec s;
  s.workload = get_or<std::string>(j, "workload", "spec", "");
  s.preset = get_or<std::string>(j, "preset", "spec", "");
  const json& overrides = field(j, "overrides");
  if (overrides.is_object()) {
    for (const auto& [k, v] : overrides.items()) {
      if (!v.is_string()) throw BadField(fmt::format("spec.overrides.{} is {}, not text", k, v.dump()));
      s.overrides[k] = v.get<std::string>();
    }
  }
  if (field(j, "params").is_object()) s.params = field(j, "params");
  s.backend_requested = get_or<std::string>(j, "backend_requested", "spec", "");
  s.backend = get_or<std::string>(j, "backend", "spec", "");
  s.backend_reason = get_or<std::string>(j, "backend_reason", "spec", "");
  const json& toggles = field(j, "toggles_requested");
  if (toggles.is_object()) {
    for (const auto& [k, v] : toggles.items()) {
      if (!v.is_boolean()) throw BadField(fmt::format("spec.toggles_requested.{} is {}, not true or false", k, v.dump()));
      s.toggles_requested.emplace_back(k, v.get<bool>());
    }
  }
  const json& seeds = field(j, "seeds");
  if (!seeds.is_array()) throw BadField(fmt::format("spec.seeds is {}, not an array", seeds.type_name()));
  for (const auto& v : seeds) {
    const std::optional<uint64_t> seed = v.is_number_integer() ? json_number<uint64_t>(v) : std::nullopt;
    if (!seed) throw BadField(fmt::format("spec.seeds has {}, not an unsigned integer", v.dump()));
    s.seeds.push_back(*seed);
  }
  s.threads = opt<int>(j, "threads", "spec");
  s.ranks = opt<int>(j, "ranks", "spec");
  s.warmup_iterations = get_or<int>(j, "warmup_iterations", "spec", 0);
  // Results from before run modes are time to train; a mode this perflab
  // does not know is not read as one it does.
  const std::string mode = get_or<std::string>(j, "mode", "spec", "time-to-train");
  const std::optional<RunMode> parsed = parse_run_mode(mode);
  if (!parsed) throw BadField(fmt::format("spec.mode is '{}', not time-to-train, throughput or inference", mode));
  s.mode = *parsed;
  s.iterations = get_or<int>(j, "iterations", "spec", 0);
  s.profile = get_or<std::string>(j, "profile", "spec", "off");
  s.workload_file = get_or<std::string>(j, "workload_file", "spec", "");
  s.check_launches = get_or<bool>(j, "check_launches", "spec", false);
  if (const json& inference = field(j, "inference"); inference.is_object()) s.inference = inference;
  if (version >= 2) {
    s.batch_param = get_or<std::string>(j, "batch_param", "spec", "");
    s.learning_rate_param = get_or<std::string>(j, "learning_rate_param", "spec", "");
  } else {  // Version 1 was written by dlrm alone among trainable workloads.
    if (s.params.contains("batch_size")) s.batch_param = "batch_size";
    if (s.params.contains("learning_rate")) s.learning_rate_param = "learning_rate";
  }
  return s;
}

ResultPlan read_plan(const json& j) {
  ResultPlan p;
  p.global_batch_size = get_or<int64_t>(j, "global_batch_size", "plan", 0);
  p.precision = get_or<std::string>(j, "precision", "plan", "");
  p.sample_unit = get_or<std::string>(j, "sample_unit", "plan", "samples");
  if (field(j, "hyperparameters").is_object()) p.hyperparameters = field(j, "hyperparameters");
  if (field(j, "data").is_object()) p.data = field(j, "data");
  p.train_samples = opt<int64_t>(j, "train_samples", "plan");
  p.eval_samples = opt<int64_t>(j, "eval_samples", "plan");
  p.iterations_per_epoch = opt<int64_t>(j, "iterations_per_epoch", "plan");
  p.max_epochs = opt<int64_t>(j, "max_epochs", "plan");
  p.eval_interval_epochs = opt<double>(j, "eval_interval_epochs", "plan");
  return p;
}

ResultWork read_work(const json& j) {
  ResultWork w;
  w.recorded = j.is_object();
  w.flops_per_iteration = get_or<double>(j, "flops_per_iteration", "work", 0);
  w.bytes_per_iteration = get_or<double>(j, "bytes_per_iteration", "work", 0);
  w.floor_ms = opt<double>(j, "floor_ms", "work");
  w.floor_basis = get_or<std::string>(j, "floor_basis", "work", "");
  w.median_iteration_ms = opt<double>(j, "median_iteration_ms", "work");
  w.achieved_tflops = opt<double>(j, "achieved_tflops", "work");
  w.achieved_gbytes_per_s = opt<double>(j, "achieved_gbytes_per_s", "work");
  w.times_floor = opt<double>(j, "times_floor", "work");
  return w;
}

ResultExecution read_execution(const json& exec) {
  ResultExecution e;
  const json& graphs = field(exec, "cuda_graphs");
  e.graphs_used = get_or<bool>(graphs, "used", "execution.cuda_graphs", false);
  e.graphs_captured = get_or<int64_t>(graphs, "captured", "execution.cuda_graphs", 0);
  e.graph_replays = get_or<int64_t>(graphs, "replayed", "execution.cuda_graphs", 0);
  e.graphs_note = get_or<std::string>(graphs, "note", "execution.cuda_graphs", "");
  const json& syncs = field(exec, "host_syncs_per_iteration");
  e.syncs_min = get_or<int64_t>(syncs, "min", "execution.host_syncs_per_iteration", 0);
  e.syncs_max = get_or<int64_t>(syncs, "max", "execution.host_syncs_per_iteration", 0);
  e.syncs_expected = opt<int64_t>(syncs, "expected", "execution.host_syncs_per_iteration");
  if (const json& launches = field(exec, "launches_per_iteration"); launches.is_object()) {
    const char* where = "execution.launches_per_iteration";
    e.kernels_per_iteration = opt<int64_t>(launches, "kernels", where);
    e.copies_per_iteration = opt<int64_t>(launches, "copies", where);
    e.memsets_per_iteration = opt<int64_t>(launches, "memsets", where);
    e.declared_kernels_per_iteration = opt<int64_t>(launches, "declared_kernels", where);
    e.launches_counted_at = opt<int64_t>(launches, "counted_at", where);
    e.launches_note = get_or<std::string>(launches, "note", where, "");
  }
  return e;
}

json program_json(const ResultProgram& p) {
  json env = json::object();
  for (const auto& [name, value] : p.env) env[name] = value;
  return {{"command", p.command},
          {"env", env},
          {"exit_status", optional_json(p.exit_status)},
          {"signal", text_or_null(p.signal)},
          {"timed_out", p.timed_out},
          {"wall_s", p.wall_s},
          {"stdout", p.stdout_file},
          {"stderr", p.stderr_file},
          {"log_source", p.log_source},
          {"compliance", {{"status", p.compliance}, {"detail", p.compliance_detail}}},
          {"throughput_source", p.throughput_source},
          {"submission", p.submission}};
}

ResultProgram read_program(const json& j) {
  const char* where = "run.program";
  ResultProgram p;
  if (const json& command = field(j, "command"); command.is_array()) {
    for (const json& a : command) {
      if (!a.is_string()) throw BadField("run.program.command holds a non-text argument");
      p.command.push_back(a.get<std::string>());
    }
  }
  if (const json& env = field(j, "env"); env.is_object()) {
    for (const auto& [name, value] : env.items()) {
      if (!value.is_string()) throw BadField(fmt::format("run.program.env.{} is not text", name));
      p.env.emplace_back(name, value.get<std::string>());
    }
  }
  p.exit_status = opt<int>(j, "exit_status", where);
  p.signal = get_or<std::string>(j, "signal", where, "");
  p.timed_out = get_or<bool>(j, "timed_out", where, false);
  p.wall_s = get_or<double>(j, "wall_s", where, 0);
  p.stdout_file = get_or<std::string>(j, "stdout", where, "");
  p.stderr_file = get_or<std::string>(j, "stderr", where, "");
  p.log_source = get_or<std::string>(j, "log_source", where, "");
  const json& compliance = field(j, "compliance");
  p.compliance = get_or<std::string>(compliance, "status", "run.program.compliance", "");
  p.compliance_detail = get_or<std::string>(compliance, "detail", "run.program.compliance", "");
  p.throughput_source = get_or<std::string>(j, "throughput_source", where, "");
  if (const json& submission = field(j, "submission"); submission.is_object()) p.submission = submission;
  return p;
}

ResultRun read_run(const json& j) {
  ResultRun r;
  r.seed = field(j, "seed").is_number_unsigned() ? field(j, "seed").get<uint64_t>() : 0;
  r.status = get_or<std::string>(j, "status", "run", "");
  r.reason = get_or<std::string>(j, "reason", "run", "");
  r.init_s = get_or<double>(j, "init_s", "run", 0);
  r.time_to_train_s = get_or<double>(j, "time_to_train_s", "run", 0);
  r.train_s = get_or<double>(j, "train_s", "run", 0);
  r.eval_s = get_or<double>(j, "eval_s", "run", 0);
  r.iterations = get_or<int64_t>(j, "iterations", "run", 0);
  r.samples = get_or<int64_t>(j, "samples", "run", 0);
  r.epochs = opt<double>(j, "epochs", "run");
  r.throughput = get_or<double>(j, "throughput_samples_per_s", "run", 0);
  r.iteration_ms = read_summary(field(j, "iteration_ms"));
  r.host_iteration_ms = read_summary(field(j, "host_iteration_ms"));
  r.iteration_timer = get_or<std::string>(j, "iteration_timer", "run", "-");
  r.measured_s = get_or<double>(j, "measured_s", "run", 0);
  const json& gate = field(j, "correctness");
  if (gate.is_object()) {
    r.correctness = ResultCorrectness{get_or<bool>(gate, "passed", "run.correctness", false),
                                      get_or<std::string>(gate, "detail", "run.correctness", "")};
  }
  if (const json& facts = field(j, "facts"); facts.is_object()) r.facts = facts;
  if (const json& exec = field(j, "execution"); exec.is_object()) r.execution = read_execution(exec);
  const json& profile = field(j, "profile");
  const std::optional<int> profile_version =
      profile.is_object() && profile.contains("version") ? json_number<int>(profile.at("version")) : std::nullopt;
  // A profile of a newer version than this perflab reads is left out; the
  // rest of the result (its metrics) stays readable.
  if (profile.is_object() && !(profile_version && *profile_version > kKernelProfileVersion)) {
    try {
      r.profile = kernel_profile_from_json(profile);
    } catch (const UsageError& e) {
      throw BadField(e.what());  // named with the file like every other field
    }
  }
  const json& curve = field(j, "quality_curve");
  if (curve.is_array()) {
    for (const auto& q : curve) {
      if (!q.is_object()) continue;
      r.quality_curve.push_back({get_or<double>(q, "epoch", "quality_curve", 0),
                                 get_or<int64_t>(q, "samples", "quality_curve", 0),
                                 get_or<double>(q, "value", "quality_curve", 0),
                                 // null: the run's log stated no training loss (NaN)
                                 get_or<double>(q, "train_loss", "quality_curve",
                                                std::numeric_limits<double>::quiet_NaN()),
                                 get_or<double>(q, "elapsed_s", "quality_curve", 0)});
    }
  }
  r.log = get_or<std::string>(j, "log", "run", "");
  if (const json& program = field(j, "program"); program.is_object()) r.program = read_program(program);
  if (const json& inference = field(j, "inference"); inference.is_object()) r.inference = inference;
  const json& parts = field(j, "parts");
  if (parts.is_array()) {
    for (const json& p : parts) {
      r.parts.push_back({get_or<std::string>(p, "name", "parts", ""), get_or<double>(p, "ms", "parts", 0),
                         get_or<int64_t>(p, "repetitions", "parts", 0), get_or<std::string>(p, "clock", "parts", "")});
    }
  }
  return r;
}

}  // namespace

std::optional<double> ResultSpec::param_number(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Result::environment_text(const std::string& pointer) const {
  const json::json_pointer p(pointer);
  if (!environment.contains(p)) return "";
  const json& v = environment.at(p);
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

const ResultPart* ResultRun::part(const std::string& name) const {
  for (const ResultPart& p : parts) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> Result::rank_hosts() const {
  std::set<std::string> hosts;
  const json& ranks = field(environment, "ranks");
  if (ranks.is_array()) {
    for (const json& r : ranks) {
      if (const json& name = field(r, "hostname"); name.is_string()) hosts.insert(name.get<std::string>());
    }
  }
  return {hosts.begin(), hosts.end()};
}

json to_json(const ResultSpec& s) {
  json toggles = json::object();
  for (const auto& [name, on] : s.toggles_requested) toggles[name] = on;
  json out = {{"workload", s.workload},
              {"preset", s.preset},
              {"overrides", s.overrides},
              {"params", s.params},
              {"backend_requested", s.backend_requested},
              {"backend", s.backend},
              {"backend_reason", s.backend_reason},
              {"toggles_requested", toggles},
              {"seeds", s.seeds},
              {"warmup_iterations", s.warmup_iterations},
              {"mode", run_mode_name(s.mode)},
              {"iterations", s.iterations},
              {"batch_param", text_or_null(s.batch_param)},
              {"learning_rate_param", text_or_null(s.learning_rate_param)}};
  // Absent in results from before they were recorded; written as read.
  if (s.threads) out["threads"] = *s.threads;
  if (s.ranks) out["ranks"] = *s.ranks;
  // Written only when on, so that the spec (and a sweep run's key) of an
  // unprofiled run is what it was before profiling existed.
  if (s.profile != "off") out["profile"] = s.profile;
  // Only external workloads have a file: built-in specs are as they were.
  if (!s.workload_file.empty()) out["workload_file"] = s.workload_file;
  // Written only when on: other specs (and run keys) are as they were.
  if (s.check_launches) out["check_launches"] = true;
  // Inference runs only: other specs (and run keys) are as they were.
  if (s.inference.is_object()) out["inference"] = s.inference;
  return out;
}

json to_json(const ResultRun& r) {
  json parts = json::array();
  for (const ResultPart& p : r.parts) {
    parts.push_back({{"name", p.name}, {"ms", p.ms}, {"repetitions", p.repetitions}, {"clock", p.clock}});
  }
  json curve = json::array();
  for (const ResultQualityPoint& q : r.quality_curve) {
    curve.push_back({{"epoch", q.epoch}, {"samples", q.samples}, {"value", q.value},
                     // NaN: the log stated no training loss; null, which reads back as NaN
                     {"train_loss", std::isnan(q.train_loss) ? json(nullptr) : json(q.train_loss)},
                     {"elapsed_s", q.elapsed_s}});
  }
  return {{"seed", r.seed},
          {"status", r.status},
          {"reason", r.reason},
          {"init_s", r.init_s},
          {"time_to_train_s", r.time_to_train_s},
          {"train_s", r.train_s},
          {"eval_s", r.eval_s},
          {"iterations", r.iterations},
          {"samples", r.samples},
          {"epochs", optional_json(r.epochs)},
          {"throughput_samples_per_s", r.throughput},
          {"iteration_ms", r.iteration_ms.to_json()},
          {"host_iteration_ms", r.host_iteration_ms.to_json()},
          {"iteration_timer", r.iteration_timer},
          {"measured_s", r.measured_s},
          {"correctness", r.correctness ? json{{"passed", r.correctness->passed}, {"detail", r.correctness->detail}}
                                        : json(nullptr)},
          {"execution", r.execution ? execution_json(*r.execution) : json(nullptr)},
          {"facts", r.facts},
          {"profile", r.profile ? kernel_profile_to_json(*r.profile) : json(nullptr)},
          {"quality_curve", curve},
          {"log", r.log},
          {"parts", parts},
          {"program", r.program ? program_json(*r.program) : json(nullptr)},
          {"inference", r.inference ? *r.inference : json(nullptr)}};
}

json to_json(const Result& r) {
  json runs = json::array();
  for (const ResultRun& run : r.runs) runs.push_back(to_json(run));
  return {{"schema_version", kResultSchemaVersion},
          {"created", r.created},
          {"kind", result_kind(r.kind)},
          {"spec", to_json(r.spec)},
          {"environment", r.environment},
          {"toggles", toggles_json(r.toggles)},
          {"plan", plan_json(r.plan)},
          {"work", work_json(r.work)},
          {"quality",
           {{"metric", r.quality.metric},
            {"target", optional_json(r.quality.target)},
            {"ceiling", optional_json(r.quality.ceiling)}}},
          {"prepare_s", r.prepare_s},
          {"interrupted", text_or_null(r.interrupted)},
          {"runs", runs},
          {"score",
           {{"time_to_train_s", optional_json(r.score.time_to_train_s)},
            {"throughput_samples_per_s", optional_json(r.score.throughput)},
            {"method", r.score.method},
            {"reason", r.score.reason}}}};
}

std::string validate_result(const json& result) {
  if (!result.is_object()) return "not a JSON object";
  if (!result.contains("schema_version")) return "no schema_version";
  // Read as int64 with its range checked: 4294967298 must not pass as version 2.
  const std::optional<int64_t> version =
      result["schema_version"].is_number_integer() ? json_number<int64_t>(result["schema_version"]) : std::nullopt;
  if (!version || !result_schema_readable(*version)) {
    return fmt::format("schema_version {} (this perflab reads {} to {})", result["schema_version"].dump(),
                       kOldestReadableResultSchemaVersion, kResultSchemaVersion);
  }
  for (const char* key : {"spec", "environment", "toggles", "plan", "quality", "runs", "score"}) {
    if (!result.contains(key)) return fmt::format("missing '{}'", key);
  }
  if (!result["runs"].is_array() || result["runs"].empty()) return "'runs' is empty";
  for (const auto& run : result["runs"]) {
    for (const char* key : {"seed", "status", "time_to_train_s", "throughput_samples_per_s",
                            "iteration_ms", "quality_curve", "log"}) {
      if (!run.contains(key)) return fmt::format("a run is missing '{}'", key);
    }
    if (!run["time_to_train_s"].is_number() || !run["throughput_samples_per_s"].is_number()) {
      return "a run has a non-numeric time or throughput";
    }
    if (run["status"] != "success" && run["status"] != "aborted") {
      return "a run has status " + run["status"].dump();
    }
  }
  if (result.contains("kind") && !(result["kind"].is_string() && mode_of_result_kind(result["kind"].get<std::string>()))) {
    return "kind " + result["kind"].dump() + " (expected time_to_train, throughput or inference)";
  }
  const json& spec = result["spec"];
  if (!spec.is_object()) return "spec is not an object";
  for (const char* key : {"workload", "preset", "params", "backend", "seeds", "toggles_requested"}) {
    if (!spec.contains(key)) return fmt::format("spec is missing '{}'", key);
  }
  if (!spec["params"].is_object()) return fmt::format("spec.params is {}, not an object", spec["params"].type_name());
  // Counts a rerun would use: non-negative integers or absent.
  for (const char* key : {"iterations", "warmup_iterations", "threads"}) {
    if (spec.contains(key) && !json_number<uint32_t>(spec[key])) {
      return fmt::format("spec.{} is {}, not a count", key, spec[key].dump());
    }
  }
  return "";
}

Result parse_result(const json& doc, const std::filesystem::path& source) {
  const std::string name = source.empty() ? std::string("result") : source.string();
  const std::string problem = validate_result(doc);
  if (!problem.empty()) throw UsageError(fmt::format("{}: not a perflab result: {}", name, problem));
  Result r;
  r.path = source;
  try {
    r.schema_version = static_cast<int>(doc.at("schema_version").get<int64_t>());  // range checked by validate_result
    r.created = get_or<std::string>(doc, "created", "result", "");
    r.kind = mode_of_result_kind(get_or<std::string>(doc, "kind", "result", "time_to_train"))
                 .value_or(RunMode::kTimeToTrain);
    r.spec = read_spec(doc.at("spec"), r.schema_version);
    if (doc.at("environment").is_object()) r.environment = doc.at("environment");
    for (const auto& [k, t] : doc.at("toggles").items()) {
      if (!t.is_object()) continue;
      r.toggles.push_back({k, get_or<bool>(t, "requested", "toggles", false),
                           get_or<bool>(t, "in_effect", "toggles", false),
                           get_or<std::string>(t, "reason", "toggles", "")});
    }
    r.plan = read_plan(doc.at("plan"));
    r.work = read_work(field(doc, "work"));
    const json& quality = doc.at("quality");
    r.quality = ResultQuality{get_or<std::string>(quality, "metric", "quality", ""),
                              opt<double>(quality, "target", "quality"), opt<double>(quality, "ceiling", "quality")};
    r.prepare_s = get_or<double>(doc, "prepare_s", "result", 0);
    r.interrupted = get_or<std::string>(doc, "interrupted", "result", "");
    for (const auto& run : doc.at("runs")) r.runs.push_back(read_run(run));
    const json& score = doc.at("score");
    r.score = ResultScore{opt<double>(score, "time_to_train_s", "score"),
                          opt<double>(score, "throughput_samples_per_s", "score"),
                          get_or<std::string>(score, "method", "score", ""),
                          get_or<std::string>(score, "reason", "score", "")};
  } catch (const BadField& e) {
    throw UsageError(fmt::format("{}: not a perflab result: {}", name, e.what()));
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: not a perflab result: {}", name, e.what()));
  }
  return r;
}

Result read_result(const std::filesystem::path& path) {
  const std::string text = read_document(path);
  std::string problem;
  const json doc = parse_json_text(text, &problem);
  if (doc.is_discarded()) throw UsageError(fmt::format("{}: {}", path.string(), problem));
  return parse_result(doc, path);
}

}  // namespace perflab
