// Long-format CSV of a sweep report: table,point,run,field,value.
#include <fmt/format.h>

#include "reports/render.h"
#include "reports/render_format.h"

namespace perflab::reports {
namespace {

using detail::converged;
using detail::last_quality;

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos &&
      (s.empty() || (s.front() != ' ' && s.back() != ' '))) {
    return s;
  }
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string num(std::optional<double> v) {
  return v && std::isfinite(*v) ? fmt::format("{}", *v) : "";
}
std::string num(double v) { return num(std::optional<double>(v)); }
std::string num(size_t v) { return std::to_string(v); }
std::string num(int64_t v) { return std::to_string(v); }
std::string boolean(bool b) { return b ? "true" : "false"; }

/// Appends lines for one row: every (field, value) under the same key.
class Writer {
 public:
  void row(const std::string& table, const std::string& point, const std::string& run,
           const std::vector<std::pair<const char*, std::string>>& fields) {
    for (const auto& [field, value] : fields) {
      out_ += fmt::format("{},{},{},{},{}\n", table, quote(point), run, field, quote(value));
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_ = "table,point,run,field,value\n";
};

}  // namespace

std::string render_sweep_csv(const SweepReport& r) {
  Writer w;
  for (const Point& p : r.points) {
    Score s = p.score();
    w.row("point", p.label, "",
          {{"workload", p.spec.workload},
           {"preset", p.spec.preset},
           {"backend", p.spec.backend},
           {"metric", p.metric},
           {"target", num(p.target)},
           {"runs", num(p.runs.size())},
           {"converged", num(converged(p))},
           {"time_to_train_s", num(p.kind == RunMode::kTimeToTrain ? s.value : std::nullopt)},
           {"score_method", s.method},
           {"score_reason", s.reason},
           {"median_throughput", num(p.median_throughput())}});
    for (size_t i = 0; i < p.runs.size(); ++i) {
      const RunEntry& e = p.runs[i];
      w.row("run", p.label, std::to_string(i),
            {{"result", e.result.string()},
             {"seed", std::to_string(e.seed)},
             {"status", e.success ? "success" : "aborted"},
             {"reason", e.reason},
             {"time_to_train_s", num(e.time_to_train_s)},
             {"epochs", num(e.epochs)},
             {"iterations", num(e.iterations)},
             {"throughput_samples_per_s", num(e.throughput)},
             {"iteration_ms_mean", e.iteration_ms_n ? num(e.iteration_ms_mean) : ""},
             {"last_quality", num(last_quality(e))}});
    }
  }
  for (const ToggleMatrix& m : r.toggle_matrices) {
    for (const ToggleMatrixRow& row : m.rows) {
      w.row("toggle_matrix", row.point_label, "",
            {{"group", m.title},
             {"combination", row.combination},
             {"baseline", boolean(row.baseline)},
             {"value_name", m.value_name()},
             {"value", num(row.value)},
             {"ci_mean", row.ci.n ? num(row.ci.mean) : ""},
             {"ci_low", row.ci.n ? num(row.ci.low) : ""},
             {"ci_high", row.ci.n ? num(row.ci.high) : ""},
             {"ci_n", num(row.ci.n)},
             {"speedup", num(row.speedup)},
             {"runs", num(row.runs)},
             {"converged", num(row.succeeded)},
             {"in_effect", toggles_in_effect(row.toggles)},
             {"not_in_effect", toggles_not_in_effect(row.toggles)}});
    }
  }
  for (const BatchSweep& s : r.batch_sweeps) {
    for (const BatchSweepRow& row : s.rows) {
      w.row("batch_sweep", row.point_label, "",
            {{"group", s.title},
             {"batch_size", num(row.batch_size)},
             {"learning_rate", num(row.learning_rate)},
             {"iterations_per_epoch", num(row.iterations_per_epoch)},
             {"epochs_mean", num(row.epochs_mean)},
             {"epochs_stddev", num(row.epochs_stddev)},
             {"iterations_mean", num(row.iterations_mean)},
             {"iteration_ms", num(row.iteration_ms)},
             {"time_to_train_s", num(row.time_to_train.value)},
             {"converged", num(row.converged)},
             {"runs", num(row.runs)},
             {"best", boolean(row.best)}});
    }
  }
  for (const std::string& s : r.skipped) w.row("skipped", "", "", {{"file", s}});
  return w.take();
}

}  // namespace perflab::reports
