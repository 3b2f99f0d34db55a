// Test helper: schema-valid result documents (result.json, schema v1) built
// in memory with chosen params, toggles and run outcomes, so report tests
// need no perflab runs.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace perflab::testing {

/// One run's outcome.
struct FakeRun {
  double time_to_train_s = 10;
  bool success = true;
  double epochs = 1;
  int64_t iterations = 100;
  double iteration_ms = 1;
  double throughput = 1000;
  std::vector<double> curve = {0.70, 0.75};  ///< Quality at epochs 0.5, 1.0, ...
};

/// What the result describes.
struct FakeSpec {
  nlohmann::json params = {{"batch_size", 256}, {"learning_rate", 1.0}};
  std::vector<std::string> toggles_on;  ///< Requested on (e.g. "cuda_graphs").
  std::vector<std::string> in_effect;   ///< Of those, in effect; the rest get a reason.
  std::optional<double> target = 0.74;
  int64_t iterations_per_epoch = 256;
  uint64_t first_seed = 1;
  bool throughput = false;  ///< A throughput result (runs pass or fail their gate) instead of time to train.
};

inline nlohmann::json make_result(const FakeSpec& spec, const std::vector<FakeRun>& runs) {
  using nlohmann::json;
  auto has = [](const std::vector<std::string>& v, const std::string& k) {
    for (const auto& x : v) {
      if (x == k) return true;
    }
    return false;
  };
  json requested = json::object(), toggles = json::object();
  for (const char* k : {"cuda_graphs", "sharp", "sync_free", "fused"}) {
    bool on = has(spec.toggles_on, k);
    bool eff = on && has(spec.in_effect, k);
    requested[k] = on;
    toggles[k] = {{"requested", on}, {"in_effect", eff}};
    if (on && !eff) toggles[k]["reason"] = std::string("no ") + k + " on cpu";
  }
  json seeds = json::array(), runs_json = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    const FakeRun& r = runs[i];
    seeds.push_back(spec.first_seed + i);
    json curve = json::array();
    for (size_t k = 0; k < r.curve.size(); ++k) {
      curve.push_back({{"epoch", 0.5 * static_cast<double>(k + 1)},
                       {"samples", 1000 * (k + 1)},
                       {"value", r.curve[k]},
                       {"train_loss", 0.5},
                       {"elapsed_s", 1.0 * static_cast<double>(k + 1)}});
    }
    runs_json.push_back({{"seed", spec.first_seed + i},
                         {"status", r.success ? "success" : "aborted"},
                         {"reason", r.success ? "" : "target not reached in 8 epochs"},
                         {"init_s", 0.1},
                         {"time_to_train_s", r.time_to_train_s},
                         {"train_s", r.time_to_train_s * 0.8},
                         {"eval_s", r.time_to_train_s * 0.2},
                         {"iterations", r.iterations},
                         {"samples", r.iterations * 256},
                         {"epochs", r.epochs},
                         {"throughput_samples_per_s", r.throughput},
                         {"iteration_ms",
                          {{"n", r.iterations},
                           {"mean", r.iteration_ms},
                           {"min", r.iteration_ms},
                           {"p50", r.iteration_ms},
                           {"p90", r.iteration_ms},
                           {"p99", r.iteration_ms},
                           {"max", r.iteration_ms}}},
                         {"quality_curve", curve},
                         {"log", "run_" + std::to_string(i) + ".log"}});
  }
  return {{"schema_version", 1},
          {"created", "2026-01-01T00:00:00Z"},
          {"kind", spec.throughput ? "throughput" : "time_to_train"},
          {"spec",
           {{"workload", "dlrm"},
            {"preset", "tiny"},
            {"overrides", json::object()},
            {"params", spec.params},
            {"backend_requested", "auto"},
            {"backend", "cpu"},
            {"toggles_requested", requested},
            {"seeds", seeds},
            {"threads", 2},
            {"warmup_iterations", 5},
            {"mode", spec.throughput ? "throughput" : "time-to-train"}}},
          {"environment",
           {{"perflab_version", "0.1.0"},
            {"git_revision", "test"},
            {"cpu_model", "test cpu"},
            {"logical_cores", 2},
            {"compiler", "test"},
            {"openblas", "test"},
            {"cuda", nullptr}}},
          {"toggles", toggles},
          {"plan",
           {{"train_samples", 65536},
            {"eval_samples", 16384},
            {"global_batch_size", spec.params.value("batch_size", 256)},
            {"iterations_per_epoch", spec.iterations_per_epoch},
            {"max_epochs", 8},
            {"eval_interval_epochs", 0.5},
            {"precision", "fp32"},
            {"hyperparameters", json::object()},
            {"data", json::object()}}},
          {"quality",
           {{"metric", "AUC"},
            {"target", spec.target ? json(*spec.target) : json(nullptr)},
            {"ceiling", nullptr}}},
          {"prepare_s", 1.0},
          {"runs", runs_json},
          {"score", {{"time_to_train_s", nullptr}, {"method", "test"}, {"reason", "test"}}}};
}

/// Runs that all succeed in the given times.
inline std::vector<FakeRun> runs_with_times(const std::vector<double>& times) {
  std::vector<FakeRun> runs;
  for (double t : times) {
    FakeRun r;
    r.time_to_train_s = t;
    runs.push_back(r);
  }
  return runs;
}

/// Writes `text` to `path`, creating its folders.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

/// A fresh empty folder under the temp dir, unique to this process and
/// removed with everything in it when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("perflab_reports_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace perflab::testing
