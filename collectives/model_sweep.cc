// The model over a size range (collectives/model_sweep.h).
#include "collectives/model_sweep.h"

#include <cmath>

#include <fmt/format.h>

#include "collectives/byte_size.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

const std::vector<NcclAlgo> kDefaultAlgos = {NcclAlgo::kTree,          NcclAlgo::kRing, NcclAlgo::kCollNetDirect,
                                             NcclAlgo::kCollNetChain, NcclAlgo::kNvls, NcclAlgo::kNvlsTree};
const std::vector<NcclProto> kAllProtos = {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple};

}  // namespace

std::string algo_label(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kCollNetDirect: return "SHARP (CollNet direct)";
    case NcclAlgo::kCollNetChain: return "SHARP (CollNet chain)";
    case NcclAlgo::kNvls: return "NVLS";
    case NcclAlgo::kNvlsTree: return "NVLS tree";
    case NcclAlgo::kPat: return "PAT";
  }
  return "?";
}

std::string format_time_us(double us) {
  if (us < 1000) return fmt::format("{:.3g} us", us);
  if (us < 1e6) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} s", us / 1e6);
}

ModelTable run_model(const ModelQuery& query) {
  ModelTable t;
  t.query = query;
  t.link = find_link_preset(query.link);
  validate_topology(query.topo, t.link);
  if (query.sizes.empty()) throw UsageError("--sizes: no sizes");
  const auto& algos = query.algos.empty() ? kDefaultAlgos : query.algos;
  const auto& protos = query.protos.empty() ? kAllProtos : query.protos;
  for (NcclAlgo a : algos) {
    std::string why;
    bool runs = false;
    for (NcclProto p : protos) {
      std::string r = unavailable_reason(query.op, a, p, query.topo, t.link);
      if (r.empty()) runs = true;
      else if (why.empty()) why = r;
    }
    if (runs) t.algos.push_back(a);
    else t.not_run.emplace_back(a, why);
  }
  if (t.algos.empty()) {
    std::string why;
    for (const auto& [a, r] : t.not_run) why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", nccl_algo_name(a), r);
    throw UsageError(fmt::format("--algo: no requested algorithm runs {} on {} nodes x {} GPUs ({})",
                                 coll_op_name(query.op), query.topo.nodes, query.topo.gpus_per_node, why));
  }
  for (uint64_t bytes : query.sizes) {
    ModelRow row;
    row.bytes = bytes;
    for (NcclAlgo a : t.algos) {
      std::optional<Prediction> best;
      for (NcclProto p : protos) {
        auto pr = predict(query.op, a, p, bytes, query.topo, t.link, query.calibration);
        if (pr && (!best || pr->time_us < best->time_us)) best = pr;
      }
      if (best && (row.best < 0 || best->time_us < row.by_algo[row.best]->time_us)) {
        row.best = static_cast<int>(row.by_algo.size());
      }
      row.by_algo.push_back(best);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<Crossover> crossovers(const ModelTable& table) {
  std::vector<Crossover> out;
  for (size_t i = 1; i < table.rows.size(); ++i) {
    const ModelRow &prev = table.rows[i - 1], &cur = table.rows[i];
    if (prev.best < 0 || cur.best < 0 || prev.best == cur.best) continue;
    out.push_back({prev.bytes, cur.bytes, table.algos[prev.best], table.algos[cur.best]});
  }
  return out;
}

std::string model_sentence(const ModelTable& table, uint64_t reference_bytes) {
  if (table.rows.empty()) return {};
  const ModelRow* row = &table.rows.front();
  for (const ModelRow& r : table.rows) {
    auto distance = [&](uint64_t b) { return std::abs(std::log2(static_cast<double>(b) / static_cast<double>(reference_bytes))); };
    if (distance(r.bytes) < distance(row->bytes)) row = &r;
  }
  const Topology& topo = table.query.topo;
  std::string s = fmt::format("at {} node{} x {} {}, {} {}:", topo.nodes, topo.nodes == 1 ? "" : "s",
                              topo.gpus_per_node, table.link.gpu, format_bytes(row->bytes),
                              coll_op_name(table.query.op));
  bool first = true;
  for (size_t i = 0; i < table.algos.size(); ++i) {
    if (!row->by_algo[i]) continue;
    s += fmt::format("{} {} {}", first ? "" : ",", algo_label(table.algos[i]), format_time_us(row->by_algo[i]->time_us));
    first = false;
  }
  if (row->best >= 0) s += fmt::format("; best {}", algo_label(table.algos[row->best]));
  return s;
}

}  // namespace perflab::collectives
