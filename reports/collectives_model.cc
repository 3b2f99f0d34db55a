// Renderers of `perflab model` (reports/collectives_model.h).
#include "reports/collectives_model.h"

#include <fmt/format.h>

#include "collectives/byte_size.h"
#include "reports/svg_chart.h"

namespace perflab::reports {
using namespace perflab::collectives;  // the model's types and formatters
namespace {

std::string header_line(const ModelTable& t) {
  const Topology& topo = t.query.topo;
  return fmt::format("# perflab model: {}, {} node{} x {} {} ({} GPUs), link {}{}", coll_op_name(t.query.op),
                     topo.nodes, topo.nodes == 1 ? "" : "s", topo.gpus_per_node, t.link.gpu, topo.ranks(),
                     t.link.name, t.query.calibration.empty() ? "" : ", calibrated");
}

std::string crossover_text(const Crossover& c) {
  return fmt::format("{} -> {} between {} and {}", algo_label(c.before), algo_label(c.after),
                     format_bytes(c.last_bytes), format_bytes(c.first_bytes));
}

}  // namespace

std::string render_all_to_all_text(const std::vector<AllToAllPrediction>& rows, const Topology& topo,
                                   const LinkPreset& link) {
  std::string out = fmt::format("# perflab model: all_to_all, {} node{} x {} {} ({} GPUs), link {}\n", topo.nodes,
                                topo.nodes == 1 ? "" : "s", topo.gpus_per_node, link.gpu, topo.ranks(), link.name);
  out += "# " + link.description + "\n";
  out += "# NCCL point-to-point (grouped send/recv): perflab's estimate from NCCL 2.28's constants, not NCCL's "
         "tuning model (docs/collectives-model.md); time in us, bandwidths in GB/s, bytes per GPU\n";
  out += fmt::format("#\n# {:>12}  {:>10} {:>9} {:>9}  {:>14} {:>14}\n", "size (B)", "time", "algbw", "busbw",
                     "over NVLink", "over network");
  for (const AllToAllPrediction& p : rows) {
    out += fmt::format("  {:>12}  {:>10.2f} {:>9.2f} {:>9.2f}  {:>14.0f} {:>14.0f}\n", p.bytes, p.time_us, p.algbw_gbs,
                       p.busbw_gbs, p.nvlink_bytes, p.network_bytes);
  }
  return out;
}

nlohmann::json all_to_all_json(const std::vector<AllToAllPrediction>& rows, const Topology& topo,
                               const LinkPreset& link) {
  nlohmann::json doc = {{"schema", "perflab.model/1"},
                        {"op", "all_to_all"},
                        {"nodes", topo.nodes},
                        {"gpus_per_node", topo.gpus_per_node},
                        {"ranks", topo.ranks()},
                        {"link", {{"name", link.name}, {"nvlink_gbs", link.nvlink_gbs()}, {"nic_gbs", link.nic_gbs()}}},
                        {"algorithms", {"P2P"}},
                        {"rows", nlohmann::json::array()}};
  for (const AllToAllPrediction& p : rows) {
    doc["rows"].push_back({{"bytes", p.bytes},
                           {"best", "P2P"},
                           {"predictions",
                            {{"P2P",
                              {{"time_us", p.time_us},
                               {"algbw_gbs", p.algbw_gbs},
                               {"busbw_gbs", p.busbw_gbs},
                               {"latency_us", p.terms.latency_us},
                               {"bandwidth_gbs", p.terms.algbw_gbs},
                               {"nvlink_bytes", p.nvlink_bytes},
                               {"network_bytes", p.network_bytes}}}}}});
  }
  return doc;
}

std::string render_model_text(const ModelTable& t) {
  std::string out = header_line(t) + "\n";
  out += "# " + t.link.description + "\n";
  out += "# alpha-beta model, NCCL 2.28 latency terms (docs/collectives-model.md); time in us, busbw in GB/s\n";
  out += "#\n# " + fmt::format("{:>12}", "size (B)");
  for (NcclAlgo a : t.algos) out += fmt::format("  {:>28}", nccl_algo_name(a));
  out += "  best\n# " + fmt::format("{:>12}", "");
  for (size_t i = 0; i < t.algos.size(); ++i) out += fmt::format("  {:>10} {:>9} {:>7}", "time", "busbw", "proto");
  out += "\n";
  for (const ModelRow& row : t.rows) {
    out += fmt::format("  {:>12}", row.bytes);
    for (const auto& p : row.by_algo) {
      if (p) {
        out += fmt::format("  {:>10.2f} {:>9.2f} {:>7}", p->time_us, p->busbw_gbs, nccl_proto_name(p->proto));
      } else {
        out += fmt::format("  {:>10} {:>9} {:>7}", "-", "-", "-");
      }
    }
    out += fmt::format("  {}\n", row.best >= 0 ? nccl_algo_name(t.algos[row.best]) : "-");
  }
  for (const auto& [a, why] : t.not_run) out += fmt::format("# not run: {}: {}\n", nccl_algo_name(a), why);
  for (const Crossover& c : crossovers(t)) out += "# crossover: " + crossover_text(c) + "\n";
  out += "# " + model_sentence(t) + "\n";
  return out;
}

nlohmann::json model_json(const ModelTable& t) {
  nlohmann::json doc;
  doc["schema"] = "perflab.model/1";
  doc["op"] = coll_op_name(t.query.op);
  doc["nodes"] = t.query.topo.nodes;
  doc["gpus_per_node"] = t.query.topo.gpus_per_node;
  doc["ranks"] = t.query.topo.ranks();
  doc["link"] = {{"name", t.link.name},
                 {"description", t.link.description},
                 {"nvlink_gbs", t.link.nvlink_gbs()},
                 {"nic_gbs", t.link.nic_gbs()},
                 {"sharp", t.link.sharp},
                 {"nvls", t.link.nvls}};
  doc["calibrated"] = !t.query.calibration.empty();
  doc["algorithms"] = nlohmann::json::array();
  for (NcclAlgo a : t.algos) doc["algorithms"].push_back(nccl_algo_name(a));
  doc["not_run"] = nlohmann::json::object();
  for (const auto& [a, why] : t.not_run) doc["not_run"][std::string(nccl_algo_name(a))] = why;
  doc["rows"] = nlohmann::json::array();
  for (const ModelRow& row : t.rows) {
    nlohmann::json r = {{"bytes", row.bytes}, {"best", nullptr}, {"predictions", nlohmann::json::object()}};
    if (row.best >= 0) r["best"] = nccl_algo_name(t.algos[row.best]);
    for (size_t i = 0; i < t.algos.size(); ++i) {
      const auto& p = row.by_algo[i];
      if (!p) continue;
      r["predictions"][std::string(nccl_algo_name(t.algos[i]))] = {
          {"proto", nccl_proto_name(p->proto)}, {"time_us", p->time_us},
          {"algbw_gbs", p->algbw_gbs},          {"busbw_gbs", p->busbw_gbs},
          {"latency_us", p->terms.latency_us},  {"bandwidth_gbs", p->terms.algbw_gbs}};
    }
    doc["rows"].push_back(r);
  }
  doc["crossovers"] = nlohmann::json::array();
  for (const Crossover& c : crossovers(t)) {
    doc["crossovers"].push_back({{"from", nccl_algo_name(c.before)},
                                 {"to", nccl_algo_name(c.after)},
                                 {"last_bytes", c.last_bytes},
                                 {"first_bytes", c.first_bytes}});
  }
  doc["summary"] = model_sentence(t);
  return doc;
}

std::string render_model_html(const ModelTable& t) {
  LineChart chart;
  chart.title = header_line(t).substr(2);
  chart.x_label = "message size (bytes, log2)";
  chart.y_label = "predicted busbw (GB/s, log10)";
  chart.log2_x = true;
  chart.x_bytes = true;
  chart.log10_y = true;  // busbw spans 0.001 to 500 GB/s over 8 B .. 8 GiB
  chart.width = 800;
  chart.height = 420;
  for (size_t i = 0; i < t.algos.size(); ++i) {
    Series s;
    s.name = algo_label(t.algos[i]);
    for (const ModelRow& row : t.rows) {
      if (!row.by_algo[i]) continue;
      s.x.push_back(static_cast<double>(row.bytes));
      s.y.push_back(row.by_algo[i]->busbw_gbs);
      s.tooltips.push_back(fmt::format("{} {}: {:.2f} GB/s busbw, {} ({})", s.name, format_bytes(row.bytes),
                                       row.by_algo[i]->busbw_gbs, format_time_us(row.by_algo[i]->time_us),
                                       nccl_proto_name(row.by_algo[i]->proto)));
    }
    chart.series.push_back(std::move(s));
  }
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + xml_escape(chart.title) + "</title>\n";
  h += "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>\n</head>\n<body>\n";
  h += "<h1>" + xml_escape(chart.title) + "</h1>\n";
  h += "<p>" + xml_escape(model_sentence(t)) + ".</p>\n";
  h += "<p>" + xml_escape(t.link.description) +
       ". Alpha-beta model with NCCL 2.28's latency terms; see docs/collectives-model.md.</p>\n";
  h += render_line_chart(chart);
  h += "<table>\n<tr><th>size</th>";
  for (NcclAlgo a : t.algos) h += "<th>" + xml_escape(algo_label(a)) + " busbw (GB/s)</th>";
  h += "<th>best</th></tr>\n";
  for (const ModelRow& row : t.rows) {
    h += "<tr><td>" + xml_escape(format_bytes(row.bytes)) + "</td>";
    for (const auto& p : row.by_algo) h += p ? fmt::format("<td>{:.2f}</td>", p->busbw_gbs) : "<td>-</td>";
    h += "<td>" + (row.best >= 0 ? xml_escape(algo_label(t.algos[row.best])) : "-") + "</td></tr>\n";
  }
  h += "</table>\n";
  if (!t.not_run.empty()) {
    h += "<ul>\n";
    for (const auto& [a, why] : t.not_run) h += "<li>" + xml_escape(std::string(nccl_algo_name(a)) + ": " + why) + "</li>\n";
    h += "</ul>\n";
  }
  return h + "</body>\n</html>\n";
}

std::string render_calibration_text(const CalibrationResult& r, const std::string& link) {
  std::string out = fmt::format("# calibration against preset {}: time = a x latency + b x transfer, least squares "
                                "on relative error\n",
                                link);
  out += fmt::format("# {:<14} {:<14} {:>6} {:>8} {:>8} {:>11} {:>11} {:>11} {:>11}\n", "op", "algorithm", "points",
                     "a", "b", "rms before", "max before", "rms after", "max after");
  for (const TermFit& f : r.fits) {
    out += fmt::format("  {:<14} {:<14} {:>6} {:>8.3f} {:>8.3f} {:>10.1f}% {:>10.1f}% {:>10.1f}% {:>10.1f}%{}\n",
                       coll_op_name(f.op), nccl_algo_name(f.algo), f.points, f.scales.latency_scale,
                       f.scales.transfer_scale, 100 * f.rms_before, 100 * f.max_before, 100 * f.rms_after,
                       100 * f.max_after, f.separated ? "" : "  (one common scale: the points do not separate the terms)");
  }
  return out;
}

}  // namespace perflab::reports
