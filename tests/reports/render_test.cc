// Sweep report renderers: Markdown and CSV golden output, JSON fields, HTML
// structure and escaping. With PERFLAB_HTML_OUT set, the sweep HTML page is
// also written there for a look in a browser.
#include "reports/render.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

using testing::FakeSpec;
using testing::make_result;
using testing::runs_with_times;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

ResultSet set_of(const std::vector<nlohmann::json>& docs) {
  ResultSet set;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::filesystem::path path = "/r/" + std::to_string(i) + "/result.json";
    set.results.push_back({path, parse_result(docs[i], path)});
  }
  return set;
}

/// Two points: all off (10 s, 12 s) and cuda_graphs requested, not in effect (8 s).
SweepReport small_report() {
  FakeSpec graphs;
  graphs.toggles_on = {"cuda_graphs"};
  ResultSet set = set_of(
      {make_result({}, runs_with_times({10, 12})), make_result(graphs, runs_with_times({8}))});
  set.skipped.push_back("/r/bad/result.json: not valid JSON");
  return make_sweep_report(set, "small");
}

/// Batch sizes 256, 512, 1024 with toggles off, and 512 with cuda_graphs.
SweepReport sweep_report() {
  std::vector<nlohmann::json> docs;
  const std::vector<std::vector<double>> times = {{30, 32, 35}, {20, 22, 21}, {25, 40, 27}};
  const std::vector<std::vector<double>> epochs = {
      {1.0, 1.25, 1.5}, {1.5, 1.75, 1.5}, {2.5, 3, 2.75}};
  for (size_t i = 0; i < 3; ++i) {
    FakeSpec s;
    const int64_t b = 256 << i;
    s.params = {{"batch_size", b}, {"learning_rate", static_cast<double>(1 << i)}};
    s.iterations_per_epoch = 65536 / b;
    std::vector<testing::FakeRun> runs = runs_with_times(times[i]);
    for (size_t k = 0; k < runs.size(); ++k) {
      runs[k].epochs = epochs[i][k];
      runs[k].iterations = static_cast<int64_t>(epochs[i][k] * static_cast<double>(65536 / b));
      runs[k].iteration_ms = 2.0 * static_cast<double>(1 << i) * 0.8;
      runs[k].curve = {0.70, 0.72 + 0.005 * static_cast<double>(k), 0.741};
      runs[k].throughput = 100000 + 20000 * static_cast<double>(i);
    }
    if (i == 2) runs[1].success = false;
    docs.push_back(make_result(s, runs));
  }
  FakeSpec graphs;
  graphs.params = {{"batch_size", 512}, {"learning_rate", 2.0}};
  graphs.toggles_on = {"cuda_graphs"};
  docs.push_back(make_result(graphs, runs_with_times({19, 20, 18})));
  ResultSet set = set_of(docs);
  set.skipped.push_back("/r/v2/result.json: not a perflab result: schema_version 2");
  return make_sweep_report(set, "DLRM <tiny> sweep & toggles");
}

TEST(Render, MarkdownGolden) {
  const std::string want =
      "# small\n\n"
      "2 result file(s), 3 run(s), 2 point(s); 1 file(s) skipped.\n\n"
      "Time to train is the olympic mean over a point's runs (an aborted run counts as the "
      "slowest; "
      "more than one gives no score).\n\n"
      "## Time to train per point\n\n"
      "| point | runs | converged | time to train (s) | per-run times (s) | samples/s (median) | "
      "last "
      "quality per run |\n|---|---|---|---|---|---|---|\n"
      "| cuda_graphs=off | 2 | 2 | 11.00 | 10.00, 12.00 | 1000 | AUC 0.7500, 0.7500 |\n"
      "| cuda_graphs=on | 1 | 1 | 8.00 | 8.00 | 1000 | AUC 0.7500 |\n"
      "\n## Toggle matrix: dlrm preset=tiny\n\n"
      "| toggles requested | runs | converged | time to train (s) | 95% CI of mean | speedup | in "
      "effect | not in effect (why) |\n|---|---|---|---|---|---|---|---|\n"
      "| all off | 2 | 2 | 11.00 | [-1.71, 23.71] | 1.00x | none | - |\n"
      "| cuda_graphs | 1 | 1 | 8.00 | - | 1.38x | none | cuda_graphs (no cuda_graphs on cpu) |\n"
      "\n## Skipped files\n\n- /r/bad/result.json: not valid JSON\n";
  EXPECT_EQ(render_sweep_markdown(small_report()), want);
}

TEST(Render, CsvGolden) {
  std::string csv = render_sweep_csv(small_report());
  const std::string head =
      "table,point,run,field,value\n"
      "point,cuda_graphs=off,,workload,dlrm\n"
      "point,cuda_graphs=off,,preset,tiny\n"
      "point,cuda_graphs=off,,backend,cpu\n"
      "point,cuda_graphs=off,,metric,AUC\n"
      "point,cuda_graphs=off,,target,0.74\n"
      "point,cuda_graphs=off,,runs,2\n"
      "point,cuda_graphs=off,,converged,2\n"
      "point,cuda_graphs=off,,time_to_train_s,11\n"
      "point,cuda_graphs=off,,score_method,mean of 2 (olympic mean needs 3 or more runs)\n"
      "point,cuda_graphs=off,,score_reason,\n"
      "point,cuda_graphs=off,,median_throughput,1000\n"
      "run,cuda_graphs=off,0,result,/r/0/result.json\n"
      "run,cuda_graphs=off,0,seed,1\n"
      "run,cuda_graphs=off,0,status,success\n"
      "run,cuda_graphs=off,0,reason,\n"
      "run,cuda_graphs=off,0,time_to_train_s,10\n"
      "run,cuda_graphs=off,0,epochs,1\n"
      "run,cuda_graphs=off,0,iterations,100\n"
      "run,cuda_graphs=off,0,throughput_samples_per_s,1000\n"
      "run,cuda_graphs=off,0,iteration_ms_mean,1\n"
      "run,cuda_graphs=off,0,last_quality,0.75\n";
  EXPECT_EQ(csv.substr(0, head.size()), head);
  const std::string tail =
      "toggle_matrix,cuda_graphs=on,,group,dlrm preset=tiny\n"
      "toggle_matrix,cuda_graphs=on,,combination,cuda_graphs\n"
      "toggle_matrix,cuda_graphs=on,,baseline,false\n"
      "toggle_matrix,cuda_graphs=on,,value_name,time to train (s)\n"
      "toggle_matrix,cuda_graphs=on,,value,8\n"
      "toggle_matrix,cuda_graphs=on,,ci_mean,8\n"
      "toggle_matrix,cuda_graphs=on,,ci_low,8\n"
      "toggle_matrix,cuda_graphs=on,,ci_high,8\n"
      "toggle_matrix,cuda_graphs=on,,ci_n,1\n"
      "toggle_matrix,cuda_graphs=on,,speedup,1.375\n"
      "toggle_matrix,cuda_graphs=on,,runs,1\n"
      "toggle_matrix,cuda_graphs=on,,converged,1\n"
      "toggle_matrix,cuda_graphs=on,,in_effect,none\n"
      "toggle_matrix,cuda_graphs=on,,not_in_effect,cuda_graphs (no cuda_graphs on cpu)\n"
      "skipped,,,file,/r/bad/result.json: not valid JSON\n";
  ASSERT_GE(csv.size(), tail.size());
  EXPECT_EQ(csv.substr(csv.size() - tail.size()), tail);
  // Every line has five fields (no field here needs quoting).
  size_t lines = count(csv, "\n");
  EXPECT_EQ(lines, 1 + 2 * 11 + 3 * 10 + 2 * 14 + 1);
}

TEST(Render, CsvQuotesFields) {
  FakeSpec odd;
  odd.params = {{"batch_size", 256}, {"data", "a,\"b\""}};
  SweepReport r = make_sweep_report(
      set_of({make_result({}, runs_with_times({1})), make_result(odd, runs_with_times({1}))}));
  EXPECT_NE(render_sweep_csv(r).find("point,\"data=a,\"\"b\"\"\",,workload,dlrm\n"),
            std::string::npos);
}

TEST(Render, JsonHasSchemaVersionAndNulls) {
  nlohmann::json j = nlohmann::json::parse(render_sweep_json(sweep_report()));
  EXPECT_EQ(j["schema_version"], kSweepReportSchemaVersion);
  EXPECT_EQ(j["kind"], "sweep_report");
  EXPECT_EQ(j["summary"]["points"], 4);
  EXPECT_EQ(j["summary"]["runs"], 12);
  EXPECT_EQ(j["summary"]["skipped"], 1);
  ASSERT_EQ(j["batch_sweeps"].size(), 1u);
  const nlohmann::json& rows = j["batch_sweeps"][0]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1]["batch_size"], 512);
  EXPECT_EQ(rows[1]["best"], true);
  EXPECT_DOUBLE_EQ(rows[1]["time_to_train_s"].get<double>(), 21);
  ASSERT_EQ(j["toggle_matrices"].size(), 1u);
  const nlohmann::json& m = j["toggle_matrices"][0];
  EXPECT_EQ(m["rows"][0]["combination"], "all off");
  EXPECT_NEAR(m["rows"][1]["speedup"].get<double>(), 21.0 / 19.0, 1e-12);
  EXPECT_EQ(m["rows"][0]["ci"]["n"], 3);
  EXPECT_TRUE(j["points"][0]["spec"].contains("params"));
}

TEST(Render, HtmlIsSelfContainedWithChartsAndTables) {
  SweepReport r = sweep_report();
  std::string html = render_sweep_html(r);
  EXPECT_EQ(html, render_sweep_html(r));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // 4 quality charts, 1 toggle-matrix chart, 1 batch-sweep chart.
  EXPECT_EQ(count(html, "<svg "), 6u);
  EXPECT_EQ(count(html, "</svg>"), 6u);
  // Points, toggle matrix, batch sweep.
  EXPECT_EQ(count(html, "<table>"), 3u);
  EXPECT_EQ(count(html, "<tr class=\"best\">"), 1u);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "http://"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(count(html, "https://"), 0u);
  EXPECT_NE(html.find("<h1>DLRM &lt;tiny&gt; sweep &amp; toggles</h1>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Toggle matrix: dlrm preset=tiny batch_size=512 learning_rate=2.0</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("<h2>Batch-size sweep: dlrm preset=tiny cuda_graphs=off</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("<h2>Skipped files</h2>"), std::string::npos);
  if (const char* out = std::getenv("PERFLAB_HTML_OUT")) std::ofstream(out) << html;
}

TEST(Render, HtmlEscapesLabels) {
  FakeSpec odd;
  odd.params = {{"batch_size", 256}, {"data", "<b>&x"}};
  SweepReport r = make_sweep_report(
      set_of({make_result({}, runs_with_times({1})), make_result(odd, runs_with_times({1}))}));
  std::string html = render_sweep_html(r);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("data=&lt;b&gt;&amp;x"), std::string::npos);
  std::string md = render_sweep_markdown(r);
  EXPECT_NE(md.find("data=<b>&x"), std::string::npos);  // Markdown keeps the text as is.
}

TEST(Render, EmptySetRendersWithoutPoints) {
  ResultSet set;
  set.skipped.push_back("x/result.json: cannot read");
  SweepReport r = make_sweep_report(set);
  EXPECT_NE(render_sweep_markdown(r).find("0 result file(s)"), std::string::npos);
  EXPECT_EQ(count(render_sweep_html(r), "<svg "), 0u);
  EXPECT_EQ(count(render_sweep_csv(r), "\n"), 2u);
  EXPECT_EQ(nlohmann::json::parse(render_sweep_json(r))["points"].size(), 0u);
}

}  // namespace
}  // namespace perflab::reports
