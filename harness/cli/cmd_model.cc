// `perflab model`: predicted time and bus bandwidth of NCCL collectives at
// scales this machine does not have (collectives/model.h), per size and
// algorithm, with the best algorithm, the crossovers and an HTML chart;
// `--calibrate FILE...` fits the model's terms to measured runs first.
// A built-in command: the model and its calibration are the collectives
// library's (collectives/), what it prints and reads is reports/'.
#include <cctype>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "collectives/byte_size.h"
#include "collectives/model_fit.h"
#include "collectives/model_sweep.h"
#include "base/error.h"
#include "harness/atomic_file.h"
#include "harness/cli/commands.h"
#include "reports/collectives_measurements.h"
#include "reports/collectives_model.h"

namespace perflab::cli {
namespace {

using namespace perflab::collectives;  // the model's types
using namespace perflab::reports;      // its renderers and the measurements' reader

struct ModelOptions {
  int nodes = 1;
  int gpus_per_node = 8;
  std::string op = "all_reduce";
  std::string sizes = "8..8G";
  uint64_t step_factor = 2;
  std::string link = "h100";
  std::vector<std::string> algos;
  std::vector<std::string> protos;
  std::string html;
  bool json = false;
  std::vector<std::string> calibrate;
};

/// The request as the model takes it; UsageError on any bad value.
ModelQuery make_query(const ModelOptions& o) {
  ModelQuery q;
  auto op = parse_coll_op(o.op);
  if (!op) throw UsageError(fmt::format("--op: '{}' is not all_reduce, all_gather, reduce_scatter, broadcast or all_to_all", o.op));
  q.op = *op;
  q.topo = {o.nodes, o.gpus_per_node};
  q.link = o.link;
  validate_topology(q.topo, find_link_preset(o.link));
  q.sizes = parse_size_list(o.sizes, o.step_factor);
  for (const std::string& a : o.algos) {
    auto algo = parse_model_algo(a);
    if (!algo || *algo == NcclAlgo::kPat) {
      throw UsageError(fmt::format("--algo: '{}' is not ring, tree, collnet_direct, collnet_chain (sharp), nvls "
                                   "or nvls_tree",
                                   a));
    }
    q.algos.push_back(*algo);
  }
  for (const std::string& p : o.protos) {
    auto proto = parse_nccl_proto(p);
    if (!proto || std::isdigit(static_cast<unsigned char>(p.front()))) {
      throw UsageError(fmt::format("--proto: '{}' is not LL, LL128 or SIMPLE", p));
    }
    q.protos.push_back(*proto);
  }
  return q;
}

/// `--op all_to_all`: NCCL runs it as point-to-point sends, so there is
/// one estimate per size and no algorithm or protocol to choose.
int run_all_to_all(const ModelOptions& o) {
  if (!o.algos.empty() || !o.protos.empty()) {
    throw UsageError("--op all_to_all: NCCL runs it as point-to-point sends, with no algorithm or protocol to "
                     "choose; drop --algo and --proto");
  }
  if (!o.calibrate.empty() || !o.html.empty()) {
    throw UsageError("--op all_to_all: --calibrate and --html cover the collective algorithms only");
  }
  const Topology topo{o.nodes, o.gpus_per_node};
  const LinkPreset& link = find_link_preset(o.link);
  validate_topology(topo, link);
  std::vector<AllToAllPrediction> rows;
  for (uint64_t bytes : parse_size_list(o.sizes, o.step_factor)) rows.push_back(predict_all_to_all(bytes, topo, link));
  if (o.json) {
    std::cout << all_to_all_json(rows, topo, link).dump(2) << "\n";
  } else {
    std::cout << render_all_to_all_text(rows, topo, link);
  }
  return 0;
}

int run_model_command(const ModelOptions& o) {
  if (o.op == "all_to_all" || o.op == "alltoall") return run_all_to_all(o);
  ModelQuery q = make_query(o);
  std::string calibration_text;
  if (!o.calibrate.empty()) {
    std::vector<MeasuredPoint> points;
    for (const std::string& file : o.calibrate) {
      auto more = load_measurements(file);
      points.insert(points.end(), more.begin(), more.end());
    }
    CalibrationResult fit = calibrate(points, find_link_preset(o.link));
    q.calibration = fit.calibration;
    calibration_text = render_calibration_text(fit, o.link);
  }
  ModelTable table = run_model(q);
  if (!o.html.empty()) {
    write_file_atomically(o.html, render_model_html(table));
  }
  if (o.json) {
    std::cout << model_json(table).dump(2) << "\n";
  } else {
    std::cout << calibration_text << render_model_text(table);
    if (!o.html.empty()) std::cout << fmt::format("# chart: {}\n", o.html);
  }
  return 0;
}

}  // namespace

Command add_model(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "model", "Predict NCCL collective time and busbw at scale (nodes x GPUs x size x algorithm); "
               "docs/collectives-model.md");
  auto o = std::make_shared<ModelOptions>();
  sub->add_option("--nodes", o->nodes, "Nodes")->capture_default_str();
  sub->add_option("--gpus-per-node", o->gpus_per_node, "GPUs (ranks) per node")->capture_default_str();
  sub->add_option("--op", o->op, "all_reduce | all_gather | reduce_scatter | broadcast | all_to_all")->capture_default_str();
  sub->add_option("--sizes", o->sizes, "Sizes in bytes: a comma list of sizes and ranges A..B (K, M, G = 2^10, 2^20, 2^30)")
      ->capture_default_str();
  sub->add_option("--step-factor,-f", o->step_factor, "Step factor within a range A..B")->capture_default_str();
  std::string presets;
  for (const LinkPreset& p : link_presets()) presets += (presets.empty() ? "" : " | ") + p.name;
  sub->add_option("--link", o->link, presets)->capture_default_str();
  sub->add_option("--algo", o->algos, "Algorithms (default: all): ring, tree, collnet_direct, collnet_chain "
                                      "(sharp), nvls, nvls_tree")
      ->delimiter(',');
  sub->add_option("--proto", o->protos, "Protocols (default: all): LL, LL128, SIMPLE")->delimiter(',');
  sub->add_option("--html", o->html, "Write an HTML page with the busbw-versus-size chart");
  sub->add_flag("--json", o->json, "Print JSON instead of the table");
  sub->add_option("--calibrate", o->calibrate,
                  "Measured runs (CSV or JSON points, docs/collectives-model.md): fit the model's terms first");
  return {sub, [o] { return run_model_command(*o); }};
}

}  // namespace perflab::cli
