// `perflab model`'s pieces: the size sweep with its best algorithm and
// crossovers (collectives/model_sweep.h), the renderers
// (reports/collectives_model.h) and the calibration input
// (reports/collectives_measurements.h).
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "collectives/model_sweep.h"
#include "base/error.h"
#include "reports/collectives_measurements.h"
#include "reports/collectives_model.h"

namespace perflab::collectives {
namespace {

using namespace perflab::reports;  // the renderers and the measurements' reader

ModelTable one_node_h100() {
  ModelQuery q;
  q.topo = {1, 8};
  q.link = "h100";
  for (uint64_t b = 1 << 20; b <= (uint64_t{256} << 20); b *= 2) q.sizes.push_back(b);
  return run_model(q);
}

TEST(ModelSweep, OneNodeRunsTreeRingNvlsAndSaysWhyNotTheRest) {
  ModelTable t = one_node_h100();
  ASSERT_EQ(t.algos, (std::vector<NcclAlgo>{NcclAlgo::kTree, NcclAlgo::kRing, NcclAlgo::kNvls}));
  ASSERT_EQ(t.not_run.size(), 3u);
  EXPECT_EQ(t.not_run[0].first, NcclAlgo::kCollNetDirect);
  EXPECT_EQ(t.not_run[0].second, "CollNet needs SHARP; preset 'h100' has none");
  EXPECT_EQ(t.not_run[2].second, "NVLS_TREE needs at least 2 nodes");
  ASSERT_EQ(t.rows.size(), 9u);
  // 1 MiB: ring (LL) 28.01 us beats NVLS 28.74 us; from 2 MiB NVLS wins (the table
  // in docs/collectives-model.md).
  EXPECT_EQ(t.algos[t.rows[0].best], NcclAlgo::kRing);
  EXPECT_EQ(t.algos[t.rows[1].best], NcclAlgo::kNvls);
  auto cross = crossovers(t);
  ASSERT_EQ(cross.size(), 1u);
  EXPECT_EQ(cross[0].before, NcclAlgo::kRing);
  EXPECT_EQ(cross[0].after, NcclAlgo::kNvls);
  EXPECT_EQ(cross[0].last_bytes, 1u << 20);
  EXPECT_EQ(cross[0].first_bytes, 2u << 20);
  EXPECT_EQ(model_sentence(t),
            "at 1 node x 8 H100, 256 MiB all_reduce: tree 1.81 ms, ring 1.32 ms, NVLS 983 us; best NVLS");
}

TEST(ModelSweep, TheSentenceTakesTheSizeNearest256MiB) {
  ModelQuery q;
  q.topo = {64, 8};
  q.link = "h100-ndr-sharp";
  q.sizes = {1 << 20, uint64_t{1} << 30};
  q.algos = {NcclAlgo::kRing, NcclAlgo::kTree, NcclAlgo::kCollNetChain};
  ModelTable t = run_model(q);
  EXPECT_EQ(model_sentence(t).rfind("at 64 nodes x 8 H100, 1 GiB all_reduce: ring ", 0), 0u) << model_sentence(t);
  EXPECT_NE(model_sentence(t).find(", SHARP (CollNet chain) "), std::string::npos);
}

TEST(ModelSweep, BadQueriesAreUsageErrors) {
  ModelQuery q;
  q.sizes = {1024};
  q.link = "h100";
  q.topo = {0, 8};
  EXPECT_THROW(run_model(q), UsageError);
  q.topo = {1, 8};
  q.link = "nope";
  EXPECT_THROW(run_model(q), UsageError);
  q.link = "h100";
  q.sizes.clear();
  EXPECT_THROW(run_model(q), UsageError);
  q.sizes = {1024};
  q.algos = {NcclAlgo::kCollNetChain};
  try {
    run_model(q);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--algo: no requested algorithm runs all_reduce on 1 nodes x 8 GPUs (COLLNET_CHAIN: CollNet needs "
                 "SHARP; preset 'h100' has none)");
  }
  q.algos.clear();
  q.protos = {NcclProto::kLL};
  ModelTable t = run_model(q);  // LL alone: ring and tree run, NVLS does not
  EXPECT_EQ(t.algos, (std::vector<NcclAlgo>{NcclAlgo::kTree, NcclAlgo::kRing}));
  EXPECT_EQ(t.rows[0].by_algo[1]->proto, NcclProto::kLL);
}

TEST(ModelReport, TextTableParsesLikeNcclTests) {
  ModelTable t = one_node_h100();
  std::string text = render_model_text(t);
  // Every line that is not a data row starts with '#'; a data row has the size,
  // three (time, busbw, proto) groups and the best algorithm.
  std::istringstream in(text);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
    ASSERT_EQ(f.size(), 11u) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 9);
  EXPECT_NE(text.find("   268435456     1813.04    259.10  SIMPLE     1322.89    355.10  SIMPLE      983.15    477.81  "
                      "SIMPLE  NVLS\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# crossover: ring -> NVLS between 1 MiB and 2 MiB\n"), std::string::npos);
  EXPECT_NE(text.find("# not run: COLLNET_CHAIN: CollNet needs SHARP; preset 'h100' has none\n"), std::string::npos);
}

TEST(ModelReport, JsonCarriesEveryPrediction) {
  nlohmann::json doc = model_json(one_node_h100());
  EXPECT_EQ(doc["schema"], "perflab.model/1");
  EXPECT_EQ(doc["ranks"], 8);
  EXPECT_EQ(doc["link"]["name"], "h100");
  EXPECT_DOUBLE_EQ(doc["link"]["nvlink_gbs"].get<double>(), 18 * 20.6);
  ASSERT_EQ(doc["rows"].size(), 9u);
  const auto& last = doc["rows"][8];
  EXPECT_EQ(last["bytes"], uint64_t{256} << 20);
  EXPECT_EQ(last["best"], "NVLS");
  EXPECT_NEAR(last["predictions"]["NVLS"]["busbw_gbs"].get<double>(), 477.81, 0.01);
  EXPECT_EQ(last["predictions"]["RING"]["proto"], "SIMPLE");
  EXPECT_EQ(doc["crossovers"].size(), 1u);
  EXPECT_EQ(doc["not_run"]["NVLS_TREE"], "NVLS_TREE needs at least 2 nodes");
}

TEST(ModelReport, HtmlIsOnePageWithTheChartOnALogSizeAxis) {
  std::string html = render_model_html(one_node_h100());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find(">256M</text>"), std::string::npos);  // byte-size ticks
  EXPECT_NE(html.find(">1M</text>"), std::string::npos);
  EXPECT_NE(html.find("NVLS 256 MiB: 477.81 GB/s busbw"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);  // self-contained: nothing fetched
  EXPECT_EQ(html.find("href="), std::string::npos);
}

TEST(Measurements, CsvWithColumnsInAnyOrder) {
  auto points = parse_measurements_csv(
      "# measured on 2 nodes\n"
      "bytes,time_us,op,algorithm,nranks,nnodes,comment\n"
      "1048576,45.5,all_reduce,ring,16,2,first\n"
      "\n"
      "64M,1400,AllReduce,sharp,16,2,\n",
      "m.csv");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(points[0].time_us, 45.5);
  EXPECT_EQ(points[0].algo, NcclAlgo::kRing);
  EXPECT_EQ(points[0].where, "m.csv:3");
  EXPECT_EQ(points[1].bytes, uint64_t{64} << 20);
  EXPECT_EQ(points[1].algo, NcclAlgo::kCollNetChain);
  EXPECT_EQ(points[1].nranks, 16);
  EXPECT_EQ(points[1].where, "m.csv:5");
}

TEST(Measurements, BadRowsNameFileAndLine) {
  auto message = [](const std::string& text) {
    try {
      parse_measurements_csv(text, "m.csv");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string header = "op,nranks,nnodes,bytes,time_us,algorithm\n";
  EXPECT_EQ(message("op,nranks,bytes\n"),
            "m.csv:1: the header has no column 'nnodes' (it needs op, nranks, nnodes, bytes, time_us, algorithm)");
  EXPECT_EQ(message(header + "all_reduce,16,2,1024,-3,ring\n"), "m.csv:2: time_us '-3' is not a positive number");
  EXPECT_EQ(message(header + "all_to_all,16,2,1024,3,ring\n"),
            "m.csv:2: op 'all_to_all' is not all_reduce, all_gather, reduce_scatter or broadcast");
  EXPECT_EQ(message(header + "all_reduce,16,2,1024,3,butterfly\n"),
            "m.csv:2: algorithm 'butterfly' is not one of NCCL's (ring, tree, collnet_direct, collnet_chain, nvls, "
            "nvls_tree)");
  EXPECT_EQ(message(header + "all_reduce,sixteen,2,1024,3,ring\n"),
            "m.csv:2: nranks 'sixteen' is not an integer in [1, 1048576]");
  EXPECT_EQ(message(header + "all_reduce,16,2,1024,3\n"), "m.csv:2: 5 fields, the header has 6");
  EXPECT_EQ(message(header + "all_reduce,16,2,0,3,ring\n").rfind("m.csv:2: bytes: '0' is not a size", 0), 0u);
  EXPECT_EQ(message("# nothing\n"), "m.csv: no header line (op,nranks,nnodes,bytes,time_us,algorithm)");
}

TEST(Measurements, JsonPointsAndResultFilesSaySo) {
  auto points = parse_measurements_json(
      R"({"points": [{"op": "all_reduce", "nranks": 8, "nnodes": 1, "bytes": "1M", "time_us": 28.5,
                      "algorithm": "NVLS"}]})",
      "p.json");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].bytes, 1u << 20);
  EXPECT_EQ(points[0].algo, NcclAlgo::kNvls);
  EXPECT_EQ(points[0].where, "p.json: points[0]");
  EXPECT_THROW(parse_measurements_json("{", "p.json"), UsageError);
  EXPECT_THROW(parse_measurements_json(R"({"points": [{"op": "all_reduce"}]})", "p.json"), UsageError);
  EXPECT_THROW(parse_measurements_json(R"({"points": [{"op": "all_reduce", "nranks": 1e300, "nnodes": 1,
               "bytes": 8, "time_us": 1, "algorithm": "ring"}]})",
                                       "p.json"),
               UsageError);
  try {
    parse_measurements_json(R"({"schema_version": 2, "runs": []})", "result.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("result.json: not a perflab result", 0), 0u) << e.what();
  }
}

TEST(Measurements, CalibrationSummaryShowsTheFit) {
  const LinkPreset& link = find_link_preset("h100");
  auto pr = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kRing, 1 << 20, {1, 8}, link);
  CalibrationResult r = calibrate(
      {{CollOp::kAllReduce, 8, 1, 1 << 20, 2 * pr->time_us, NcclAlgo::kRing, "x:1"}}, link);
  std::string text = render_calibration_text(r, "h100");
  EXPECT_NE(text.find("  all_reduce     RING                1    2.000    2.000       50.0%       50.0%        0.0%"
                      "        0.0%  (one common scale: the points do not separate the terms)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace perflab::collectives
