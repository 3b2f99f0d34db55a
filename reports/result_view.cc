// The typed result reader (see result_view.h): the only place in reports/
// that looks fields up by name. Required fields are those
// harness/result.h's validate_result checks; the rest have defaults, as the
// earliest version-1 files lack them (kind, work, host timing, execution).
#include "reports/result_view.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/input_file.h"
#include "harness/json_text.h"
#include "harness/json_number.h"
#include "harness/result.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

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
      // Numbers are converted only when T holds them (harness/json_number.h).
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

SpecView read_spec(const json& j, int version) {
  SpecView s;
  s.json = j;
  s.workload = get_or<std::string>(j, "workload", "spec", "");
  s.preset = get_or<std::string>(j, "preset", "spec", "");
  const json& overrides = field(j, "overrides");
  if (overrides.is_object()) {
    for (const auto& [k, v] : overrides.items()) s.overrides[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (field(j, "params").is_object()) s.params = field(j, "params");
  s.backend_requested = get_or<std::string>(j, "backend_requested", "spec", "");
  s.backend = get_or<std::string>(j, "backend", "spec", "");
  s.backend_reason = get_or<std::string>(j, "backend_reason", "spec", "");
  const json& toggles = field(j, "toggles_requested");
  if (toggles.is_object()) {
    for (const auto& [k, v] : toggles.items()) s.toggles_requested.emplace_back(k, v.is_boolean() && v.get<bool>());
  }
  const json& seeds = field(j, "seeds");
  if (seeds.is_array()) {
    for (const auto& v : seeds) {
      if (v.is_number_unsigned()) s.seeds.push_back(v.get<uint64_t>());
    }
  }
  s.threads = opt<int>(j, "threads", "spec");
  s.warmup_iterations = get_or<int>(j, "warmup_iterations", "spec", 0);
  // Results from before run modes are time to train.
  s.mode = parse_run_mode(get_or<std::string>(j, "mode", "spec", "time-to-train")).value_or(RunMode::kTimeToTrain);
  s.iterations = get_or<int>(j, "iterations", "spec", 0);
  if (version >= 2) {
    s.batch_param = get_or<std::string>(j, "batch_param", "spec", "");
    s.learning_rate_param = get_or<std::string>(j, "learning_rate_param", "spec", "");
  } else {  // Version 1 was written by dlrm alone among trainable workloads.
    if (s.params.contains("batch_size")) s.batch_param = "batch_size";
    if (s.params.contains("learning_rate")) s.learning_rate_param = "learning_rate";
  }
  return s;
}

PlanView read_plan(const json& j) {
  PlanView p;
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

WorkView read_work(const json& j) {
  WorkView w;
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

RunView read_run(const json& j) {
  RunView r;
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
    r.correctness = CorrectnessView{get_or<bool>(gate, "passed", "run.correctness", false),
                                    get_or<std::string>(gate, "detail", "run.correctness", "")};
  }
  if (const json& facts = field(j, "facts"); facts.is_object()) r.facts = facts;
  const json& exec = field(j, "execution");
  if (exec.is_object()) {
    ExecutionView e;
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
      e.launches_note = get_or<std::string>(launches, "note", where, "");
    }
    r.execution = e;
  }
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
                                 get_or<double>(q, "train_loss", "quality_curve", 0),
                                 get_or<double>(q, "elapsed_s", "quality_curve", 0)});
    }
  }
  r.log = get_or<std::string>(j, "log", "run", "");
  return r;
}

}  // namespace

std::optional<double> SpecView::param_number(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string ResultView::environment_text(const std::string& pointer) const {
  const json::json_pointer p(pointer);
  if (!environment.contains(p)) return "";
  const json& v = environment.at(p);
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

ResultView parse_result(const json& doc, const std::filesystem::path& source) {
  const std::string name = source.empty() ? std::string("result") : source.string();
  const std::string problem = validate_result(doc);
  if (!problem.empty()) throw UsageError(fmt::format("{}: not a perflab result: {}", name, problem));
  ResultView r;
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
    r.quality = QualityView{get_or<std::string>(quality, "metric", "quality", ""),
                            opt<double>(quality, "target", "quality"), opt<double>(quality, "ceiling", "quality")};
    r.prepare_s = get_or<double>(doc, "prepare_s", "result", 0);
    r.interrupted = get_or<std::string>(doc, "interrupted", "result", "");
    for (const auto& run : doc.at("runs")) r.runs.push_back(read_run(run));
    const json& score = doc.at("score");
    r.score = ScoreView{opt<double>(score, "time_to_train_s", "score"),
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

ResultView read_result_view(const std::filesystem::path& path) {
  const std::string text = read_document(path);
  std::string problem;
  const json doc = parse_json_text(text, &problem);
  if (doc.is_discarded()) throw UsageError(fmt::format("{}: {}", path.string(), problem));
  return parse_result(doc, path);
}

}  // namespace perflab::reports
