// nccl-tests' table (see collectives_table.h).
#include "reports/collectives_table.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>

#include "base/json_number.h"
#include "collectives/bandwidth.h"
#include "harness/stats.h"

namespace perflab::reports {
namespace {

template <typename T>
T data_value(const Result& r, const char* key, T fallback) {
  const auto& d = r.plan.data;
  if (!d.contains(key)) return fallback;
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    // A count only when the file's number is one T holds (get<int> of 1e300 is undefined).
    return json_number<T>(d.at(key)).value_or(fallback);
  } else {
    try {
      return d.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
      return fallback;
    }
  }
}

/// Wrong elements over the runs (each run's fact "wrong_elements"), -1 when
/// a run did not count them (check=0).
int64_t wrong_count(const Result& r) {
  int64_t total = 0;
  for (const ResultRun& run : r.runs) {
    const auto it = run.facts.find("wrong_elements");
    const std::optional<int64_t> wrong = it == run.facts.end() ? std::nullopt : json_number<int64_t>(*it);
    if (!wrong || *wrong < 0 || *wrong > std::numeric_limits<int64_t>::max() - total) return -1;
    total += *wrong;
  }
  return r.runs.empty() ? -1 : total;
}

CollectivesMeasure measure(const Result& r) {
  CollectivesMeasure m;
  std::vector<double> medians;
  for (const ResultRun& run : r.runs) {
    if (run.iteration_ms.n > 0) medians.push_back(run.iteration_ms.p50);
  }
  const double ops = std::max(1.0, data_value<double>(r, "ops_per_iteration", 1));
  if (!medians.empty()) m.time_us = summarize(medians).p50 * 1e3 / ops;
  const auto c = collectives::parse_collective(data_value<std::string>(r, "collective", "all_reduce"));
  collectives::CollectiveCounts counts;
  counts.param = data_value<size_t>(r, "param_count", 0);
  const auto esize = data_value<size_t>(r, "element_bytes", 4);
  const int ranks = data_value<int>(r, "ranks", 1);
  m.algbw_gbps = collectives::algbw_gbps(c, counts, esize, ranks, m.time_us * 1e-6);
  m.busbw_gbps = m.algbw_gbps * collectives::busbw_factor(c, ranks);
  m.wrong = wrong_count(r);
  const std::string comm = data_value<std::string>(r, "communicator", "-");
  m.algorithm = comm == "nccl" ? "-" : comm;
  for (const ResultRun& run : r.runs) {
    if (run.facts.contains("algorithm") && run.facts["algorithm"].is_string()) {
      m.algorithm = run.facts["algorithm"].get<std::string>();
    }
  }
  return m;
}

std::string group(const std::optional<CollectivesMeasure>& m) {
  if (!m) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "-", "-", "-", "-");
  const std::string time = m->time_us >= 1e4 ? fmt::format("{:7.1f}", m->time_us) : fmt::format("{:7.2f}", m->time_us);
  const std::string wrong = m->wrong < 0 ? "N/A" : std::to_string(m->wrong);
  return fmt::format("  {}  {:6.2f}  {:6.2f}  {:>6}", time, m->algbw_gbps, m->busbw_gbps, wrong);
}

}  // namespace

bool is_collectives_result(const Result& result) {
  return result.spec.workload == "collectives" && result.plan.data.contains("collective");
}

std::vector<CollectivesRow> collectives_rows(const std::vector<Result>& results) {
  using Key = std::tuple<std::string, std::string, std::string, int, size_t, int>;
  std::map<Key, CollectivesRow> rows;
  for (const Result& r : results) {
    if (!is_collectives_result(r)) continue;
    CollectivesRow row;
    row.collective = data_value<std::string>(r, "collective", "?");
    row.dtype = data_value<std::string>(r, "dtype", "?");
    row.redop = data_value<std::string>(r, "redop", "none");
    row.root = data_value<int>(r, "root", -1);
    row.size_bytes = data_value<size_t>(r, "size_bytes", 0);
    row.count = data_value<size_t>(r, "count", 0);
    row.ranks = data_value<int>(r, "ranks", 1);
    row.communicator = data_value<std::string>(r, "communicator", "-");
    const Key key{row.collective, row.dtype, row.redop, row.root, row.size_bytes, row.ranks};
    auto [it, added] = rows.emplace(key, row);
    (data_value<bool>(r, "in_place", false) ? it->second.in_place : it->second.out_of_place) = measure(r);
  }
  std::vector<CollectivesRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

std::string render_collectives_table(const std::vector<Result>& results) {
  const std::vector<CollectivesRow> rows = collectives_rows(results);
  if (rows.empty()) return "";
  std::string out;
  std::string comms;
  for (const auto& r : rows) {
    if (comms.find(r.communicator) == std::string::npos) comms += (comms.empty() ? "" : ", ") + r.communicator;
  }
  out += fmt::format("# perflab collectives: {} rank(s), communicator {}\n#\n", rows.front().ranks, comms);
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>33}  {:>33}\n", "", "", "", "", "", "out-of-place",
                     "in-place");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong", "algo");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  int64_t wrong = 0;
  double busbw_sum = 0;
  int measured = 0;
  for (const auto& r : rows) {
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size_bytes, r.count, r.dtype, r.redop, r.root);
    out += group(r.out_of_place) + group(r.in_place);
    std::string algo;
    for (const auto* m : {&r.out_of_place, &r.in_place}) {
      if (!*m) continue;
      if (algo.find((*m)->algorithm) == std::string::npos) algo += (algo.empty() ? "" : "/") + (*m)->algorithm;
      if ((*m)->wrong > 0) wrong += (*m)->wrong;
      busbw_sum += (*m)->busbw_gbps;
      ++measured;
    }
    out += "  " + algo + "\n";
  }
  out += fmt::format("# Out of bounds values : {} {}\n", wrong, wrong ? "FAILED" : "OK");
  out += fmt::format("# Avg bus bandwidth    : {:g} \n#\n", measured ? busbw_sum / measured : 0.0);
  return out;
}

std::vector<std::string> collectives_header() {
  return {"collective", "size (B)", "count", "type", "redop", "root", "time (us)", "algbw (GB/s)", "busbw (GB/s)",
          "#wrong", "in-place time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong", "ranks", "algo"};
}

std::vector<std::vector<std::string>> collectives_cells(const std::vector<CollectivesRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const CollectivesRow& r : rows) {
    std::vector<std::string> cells = {r.collective, std::to_string(r.size_bytes), std::to_string(r.count), r.dtype,
                                      r.redop, std::to_string(r.root)};
    std::string algo;
    for (const auto* m : {&r.out_of_place, &r.in_place}) {
      if (!*m) {
        cells.insert(cells.end(), {"-", "-", "-", "-"});
        continue;
      }
      cells.push_back(fmt::format("{:.2f}", (*m)->time_us));
      cells.push_back(fmt::format("{:.2f}", (*m)->algbw_gbps));
      cells.push_back(fmt::format("{:.2f}", (*m)->busbw_gbps));
      cells.push_back((*m)->wrong < 0 ? "N/A" : std::to_string((*m)->wrong));
      if (algo.find((*m)->algorithm) == std::string::npos) algo += (algo.empty() ? "" : "/") + (*m)->algorithm;
    }
    cells.push_back(std::to_string(r.ranks));
    cells.push_back(algo);
    out.push_back(std::move(cells));
  }
  return out;
}

LineChart collectives_chart(const std::vector<CollectivesRow>& rows) {
  LineChart chart;
  chart.title = "Bus bandwidth by message size";
  chart.x_label = "message size (bytes, log2)";
  chart.y_label = "busbw (GB/s, log10)";
  chart.log2_x = true;
  chart.log10_y = true;
  chart.width = 720;
  std::map<std::string, size_t> index;
  for (const CollectivesRow& r : rows) {
    for (bool in_place : {false, true}) {
      const auto& m = in_place ? r.in_place : r.out_of_place;
      if (!m) continue;
      const std::string name = fmt::format("{} {} {} ({} ranks{})", r.collective, r.dtype,
                                           in_place ? "in place" : "out of place", r.ranks,
                                           m->algorithm.empty() ? "" : ", " + m->algorithm);
      auto [it, added] = index.emplace(name, chart.series.size());
      if (added) {
        chart.series.push_back({});
        chart.series.back().name = name;
        chart.series.back().dashed = in_place;
      }
      Series& s = chart.series[it->second];
      s.x.push_back(static_cast<double>(r.size_bytes));
      s.y.push_back(m->busbw_gbps);
      s.tooltips.push_back(fmt::format("{}: {} B, {:.2f} us, busbw {:.3f} GB/s", name, r.size_bytes, m->time_us,
                                       m->busbw_gbps));
    }
  }
  return chart;
}

}  // namespace perflab::reports
