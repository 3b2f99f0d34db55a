// The dlrm workload's report section (reports/workload_sections.h) for its
// serving runs (--mode inference, issue 28): one row per result with the
// placement, the cache, LoadGen's throughput and p99, the hit rate, the
// bytes read from host memory per sample, where a batch's time goes and the
// updates applied; each result's throughput against the cpu backend's
// all_device point of the same setting (preset, other parameters, LoadGen's
// settings; only placement, cache and update rate may differ) (the production
// claim this benchmark checks: a GPU with a hot-row cache serves several
// times what CPU serving does); in HTML, hit rate and p99 against the
// cache's capacity. Training results have no serving engine: nothing shows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "harness/stats.h"
#include "reports/html_page.h"
#include "reports/inference_report.h"
#include "reports/render_format.h"
#include "reports/svg_chart.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

struct ServingRow {
  std::string backend, placement, policy, scenario;
  int64_t cache_rows = 0;  ///< 0 without a cache.
  double latency_bound_ms = 0;
  double update_rate = 0;
  double zipf = 0;  ///< The synthetic ids' skew (zipf_exponent); NaN for other data.
  double target_qps = 0;
  /// Everything else of the spec that could change the figures (preset,
  /// the other parameters, LoadGen's settings), as text: rows compare only
  /// with rows of the same setting.
  std::string setting;
  std::string setting_but_target;  ///< The setting without LoadGen's target rate.
  bool valid_run = false;          ///< Every run VALID.
  std::string seeds;  ///< Of the result's runs, for the terminal ("1", "1,2").
  std::optional<double> throughput;  ///< The result's score (samples/s).
  std::optional<double> p99_ms;      ///< Median over runs of LoadGen's p99.
  int runs = 0, valid = 0;
  double hit_rate = 0;  ///< Over every run's lookups.
  double host_bytes_per_sample = 0;
  double lookup_ms = 0, insert_ms = 0, dense_ms = 0, copies_ms = 0;  ///< Per batch, mean of runs.
  int64_t updates = 0;
  double max_staleness_ms = 0;
  std::optional<double> vs_cpu;  ///< throughput / the cpu backend's all_device point's.
  /// With updates: p99 / p99 of the same point without them (their latency cost).
  std::optional<double> p99_vs_no_updates;
};

double num(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<double> p99_of(const json& inference) {
  const std::optional<double> ns = loadgen_latency_ns(inference, 99);
  return ns ? std::optional<double>(*ns / 1e6) : std::nullopt;
}

std::vector<ServingRow> serving_rows(const std::vector<Result>& results) {
  std::vector<ServingRow> rows;
  for (const Result& r : results) {
    if (!r.inference()) continue;
    ServingRow row;
    row.backend = r.spec.backend;
    row.scenario = str(r.spec.inference, "scenario");
    row.latency_bound_ms = num(r.spec.inference, "latency_bound_ms");
    row.throughput = r.score.throughput;
    const bool synthetic = r.spec.params.value("data", std::string("synthetic")) == "synthetic";
    row.zipf = synthetic ? r.spec.param_number("zipf_exponent").value_or(NAN) : NAN;
    row.target_qps = num(r.spec.inference, "target_qps");
    json setting = {{"preset", r.spec.preset}, {"params", r.spec.params}, {"inference", r.spec.inference}};
    for (const char* serving : {"placement", "cache_capacity", "cache_policy", "cache_warm", "update_rate"}) {
      setting["params"].erase(serving);
    }
    row.setting = setting.dump();
    setting["inference"].erase("target_qps");
    row.setting_but_target = setting.dump();
    double lookups = 0, hits = 0, host_bytes = 0, samples = 0;
    std::vector<double> p99;
    for (const ResultRun& run : r.runs) {
      if (!run.inference || !run.inference->contains("engine")) continue;
      const json& inference = *run.inference;
      const json& engine = inference.at("engine");
      const json counters = engine.value("counters", json::object());
      row.placement = str(engine, "placement");
      if (const auto c = engine.find("cache"); c != engine.end() && c->is_object()) {
        row.cache_rows = static_cast<int64_t>(num(*c, "rows"));
        row.policy = str(*c, "policy");
      }
      row.update_rate = num(engine, "update_rate_rows_per_s");
      ++row.runs;
      row.seeds += (row.seeds.empty() ? "" : ",") + std::to_string(run.seed);
      if (inference.value("valid", false)) ++row.valid;
      if (const auto v = p99_of(inference)) p99.push_back(*v);
      lookups += num(counters, "lookups");
      hits += num(counters, "hits");
      samples += num(counters, "samples");
      host_bytes += num(counters, "host_embedding_bytes_per_sample") * num(counters, "samples");
      const json per_batch = counters.value("time_per_batch_ms", json::object());
      row.lookup_ms += num(per_batch, "lookup");
      row.insert_ms += num(per_batch, "insert");
      row.dense_ms += num(per_batch, "dense");
      row.copies_ms += num(per_batch, "copies");
      const json updates = counters.value("updates", json::object());
      row.updates += static_cast<int64_t>(num(updates, "applied"));
      row.max_staleness_ms = std::max(row.max_staleness_ms, num(updates, "max_staleness_ms"));
    }
    if (row.runs == 0) continue;
    row.valid_run = row.valid == row.runs;
    const auto n = static_cast<double>(row.runs);
    row.lookup_ms /= n;
    row.insert_ms /= n;
    row.dense_ms /= n;
    row.copies_ms /= n;
    row.hit_rate = lookups > 0 ? hits / lookups : 0.0;
    row.host_bytes_per_sample = samples > 0 ? host_bytes / samples : 0.0;
    if (!p99.empty()) row.p99_ms = percentile(p99, 50);
    rows.push_back(row);
  }
  auto same_point = [](const ServingRow& a, const ServingRow& b) {
    return a.backend == b.backend && a.setting == b.setting && a.placement == b.placement && a.policy == b.policy &&
           a.cache_rows == b.cache_rows;
  };
  for (ServingRow& row : rows) {
    if (row.update_rate > 0 && row.p99_ms) {
      for (const ServingRow& quiet : rows) {
        if (quiet.update_rate == 0 && same_point(row, quiet) && quiet.p99_ms && *quiet.p99_ms > 0) {
          row.p99_vs_no_updates = *row.p99_ms / *quiet.p99_ms;
          break;
        }
      }
    }
    for (const ServingRow& base : rows) {
      if (base.backend == "cpu" && base.placement == "all_device" && base.setting == row.setting &&
          base.update_rate == 0 && base.throughput &&
          *base.throughput > 0 && row.throughput) {
        row.vs_cpu = *row.throughput / *base.throughput;
        break;
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ServingRow& a, const ServingRow& b) {
    // NaN (not synthetic data) compares as a value of its own: a strict weak order.
    const bool an = std::isnan(a.zipf), bn = std::isnan(b.zipf);
    const double az = an ? 0.0 : a.zipf, bz = bn ? 0.0 : b.zipf;
    return std::tie(a.backend, a.scenario, an, az, a.target_qps, a.setting, a.placement, a.policy, a.cache_rows,
                    a.update_rate) < std::tie(b.backend, b.scenario, bn, bz, b.target_qps, b.setting, b.placement,
                                              b.policy, b.cache_rows, b.update_rate);
  });
  return rows;
}

std::vector<std::string> serving_header() {
  return {"backend", "scenario", "zipf", "target qps", "placement", "cache rows", "policy", "updates/s", "samples/s",
          "vs cpu all_device", "p99 (ms)", "VALID", "hit rate", "host bytes/sample",
          "lookup / insert / dense / copies (ms per batch)", "updates applied (max staleness ms; p99 vs none)"};
}

std::vector<std::vector<std::string>> cells(const std::vector<ServingRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const ServingRow& r : rows) {
    const bool cache = r.placement == "hot_cache";
    out.push_back({r.backend, r.scenario, std::isnan(r.zipf) ? "-" : fmt::format("{:g}", r.zipf),
                   fmt::format("{:g}", r.target_qps), r.placement,
                   cache ? std::to_string(r.cache_rows) : "-",
                   cache ? r.policy : "-", fmt::format("{:g}", r.update_rate),
                   r.throughput ? fmt::format("{:.0f}", *r.throughput) : "-",
                   r.vs_cpu ? fmt::format("{:.2f}x", *r.vs_cpu) : "-",
                   r.p99_ms ? fmt::format("{:.3f}", *r.p99_ms) : "-", fmt::format("{}/{}", r.valid, r.runs),
                   cache ? fmt::format("{:.1f}%", 100 * r.hit_rate) : "-", fmt::format("{:.0f}", r.host_bytes_per_sample),
                   fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f}", r.lookup_ms, r.insert_ms, r.dense_ms, r.copies_ms),
                   r.update_rate > 0 ? fmt::format("{} ({:.2f}; {})", r.updates, r.max_staleness_ms,
                                                   r.p99_vs_no_updates ? fmt::format("{:.2f}x", *r.p99_vs_no_updates) : "-")
                                     : "-"});
  }
  return out;
}

constexpr const char* kExplanation =
    "LoadGen's throughput and p99 (median of runs); hit rate over every lookup of every run; host bytes: "
    "embedding rows read from host memory per sample (on the cpu backend every placement is host memory: it "
    "counts what a GPU would fetch over PCIe); time per batch from the engine's clocks; staleness: the longest "
    "wait from an update's arrival to the batch that applied it, and p99 against the same point without updates "
    "(their latency cost). In Server, LoadGen issues queries at the target rate, so a VALID run's samples/s is "
    "that target: compare Server points by the highest target that stays VALID (a sweep over target_qps), and "
    "Offline points by samples/s.";

/// Hit rate and p99 against capacity, one pair of lines per backend and policy.
std::string capacity_chart(const std::vector<ServingRow>& rows) {
  std::map<std::string, std::pair<Series, Series>> lines;
  for (const ServingRow& r : rows) {
    if (r.placement != "hot_cache" || r.update_rate > 0) continue;
    const std::string name = fmt::format("{} {} {} at {:g}/s", r.backend, r.scenario, r.policy, r.target_qps);
    auto& [hit, p99] = lines[name];
    hit.name = name + ": hit rate";
    hit.x.push_back(static_cast<double>(r.cache_rows));
    hit.y.push_back(100 * r.hit_rate);
    p99.name = name + ": p99";
    p99.right_axis = true;
    p99.dashed = true;
    p99.x.push_back(static_cast<double>(r.cache_rows));
    p99.y.push_back(r.p99_ms.value_or(NAN));
  }
  LineChart chart;
  chart.title = "Hot-row cache: hit rate and p99 latency by capacity";
  chart.x_label = "cache capacity (rows, log2)";
  chart.y_label = "hit rate (%)";
  chart.y_right_label = "p99 latency (ms)";
  chart.log2_x = true;
  for (auto& [name, pair] : lines) {
    if (pair.first.x.size() < 2) continue;
    chart.series.push_back(std::move(pair.first));
    chart.series.push_back(std::move(pair.second));
  }
  return chart.series.empty() ? "" : render_line_chart(chart);
}

/// Server: per point without its target, the highest target rate that
/// stayed VALID in every run (a sweep over inference.target_qps), against the
/// cpu backend's all_device peak of the same setting. Only points swept over
/// two targets or more.
struct ServerPeak {
  const ServingRow* at = nullptr;  ///< The VALID row at the highest target (null: none VALID).
  const ServingRow* any = nullptr;  ///< A row of the point, for its labels.
  int targets = 0;
  double highest_tried = 0;
  std::optional<double> vs_cpu;
};

std::vector<ServerPeak> server_peaks(const std::vector<ServingRow>& rows) {
  std::map<std::string, ServerPeak> by;
  std::vector<std::string> order;
  for (const ServingRow& r : rows) {
    if (r.scenario != "server") continue;
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", r.backend, r.placement, r.policy, r.cache_rows,
                                        r.update_rate, r.setting_but_target);
    if (!by.count(key)) order.push_back(key);
    ServerPeak& p = by[key];
    p.any = &r;
    ++p.targets;
    p.highest_tried = std::max(p.highest_tried, r.target_qps);
    if (r.valid_run && (p.at == nullptr || r.target_qps > p.at->target_qps)) p.at = &r;
  }
  std::vector<ServerPeak> out;
  for (const std::string& key : order) {
    if (by[key].targets >= 2) out.push_back(by[key]);
  }
  for (ServerPeak& p : out) {
    if (p.at == nullptr) continue;
    for (const ServerPeak& base : out) {
      if (base.at != nullptr && base.at->backend == "cpu" && base.at->placement == "all_device" &&
          base.at->update_rate == 0 && base.at->setting_but_target == p.at->setting_but_target) {
        p.vs_cpu = p.at->target_qps / base.at->target_qps;
      }
    }
  }
  return out;
}

std::string server_peaks_markdown(const std::vector<ServingRow>& rows) {
  const std::vector<ServerPeak> peaks = server_peaks(rows);
  if (peaks.empty()) return "";
  std::vector<std::vector<std::string>> cells;
  for (const ServerPeak& p : peaks) {
    const ServingRow* r = p.at;
    const ServingRow& label = *p.any;
    cells.push_back({label.backend, label.placement, label.cache_rows ? std::to_string(label.cache_rows) : "-",
                     std::to_string(p.targets), fmt::format("{:g}", p.highest_tried),
                     r ? fmt::format("{:g}", r->target_qps) : "none VALID",
                     r && r->p99_ms ? fmt::format("{:.3f}", *r->p99_ms) : "-",
                     p.vs_cpu ? fmt::format("{:.2f}x", *p.vs_cpu) : "-"});
  }
  return "\n### Server: the highest target that stayed VALID\n\nPer point swept over its target rate "
         "(inference.target_qps as a list): the highest rate LoadGen judged VALID in every run, its p99, and that "
         "peak against the cpu backend's all_device peak of the same setting.\n\n" +
         detail::markdown_table({"backend", "placement", "cache rows", "targets", "highest tried (queries/s)",
                                 "highest VALID (queries/s)", "p99 there (ms)", "vs cpu all_device"},
                                cells);
}

WorkloadSection dlrm_serving_section() {
  WorkloadSection s;
  s.workload = "dlrm";
  s.terminal = [](const std::vector<Result>& results) -> std::string {
    std::string out;
    for (const ServingRow& r : serving_rows(results)) {
      out += fmt::format("serving (seed {}): {} on {}{}; host bytes/sample {:.0f}; per batch: lookup {:.3f} ms, "
                         "insert {:.3f} ms, dense {:.3f} ms{}\n",
                         r.seeds, r.placement, r.backend,
                         r.placement == "hot_cache"
                             ? fmt::format(" ({} rows, {}), hit rate {:.1f}%", r.cache_rows, r.policy, 100 * r.hit_rate)
                             : "",
                         r.host_bytes_per_sample, r.lookup_ms, r.insert_ms, r.dense_ms,
                         r.update_rate > 0 ? fmt::format("; {} updates applied, staleness at most {:.2f} ms", r.updates,
                                                         r.max_staleness_ms)
                                           : "");
    }
    return out;
  };
  s.markdown = [](const std::vector<Result>& results) -> std::string {
    const std::vector<ServingRow> rows = serving_rows(results);
    if (rows.empty()) return "";
    return fmt::format("\n## DLRM serving\n\n{}\n\n", kExplanation) +
           detail::markdown_table(serving_header(), cells(rows)) +
           server_peaks_markdown(rows);
  };
  s.html = [](const std::vector<Result>& results) -> std::string {
    const std::vector<ServingRow> rows = serving_rows(results);
    if (rows.empty()) return "";
    const std::vector<std::vector<std::string>> c = cells(rows);
    const std::string chart = capacity_chart(rows);
    return fmt::format("<h2>DLRM serving</h2>\n<p>{}</p>\n", xml_escape(kExplanation)) +
           html_table(serving_header(), c, {0, 1, 4, 6, 14, 15}) +
           (chart.empty() ? "" : "<div class=\"charts\">" + chart + "</div>\n");
  };
  return s;
}

}  // namespace

PERFLAB_REGISTER_REPORT_SECTION(dlrm_serving_section());

}  // namespace perflab::reports
