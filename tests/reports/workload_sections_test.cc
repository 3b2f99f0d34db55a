// The table of workload sections: one entry per workload, each with its
// three renderers, and results of a workload without a section add nothing.
#include "reports/workload_sections.h"

#include <set>

#include <gtest/gtest.h>

#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

TEST(WorkloadSections, OneEntryPerWorkloadWithEveryRenderer) {
  std::set<std::string> seen;
  for (const WorkloadSection& s : workload_sections()) {
    EXPECT_TRUE(seen.insert(s.workload).second) << s.workload << " listed twice";
    EXPECT_TRUE(s.terminal && s.markdown && s.html) << s.workload;
  }
  EXPECT_EQ(seen, (std::set<std::string>{"collectives", "dlrm", "halo_conv", "triad"}));
}

TEST(WorkloadSections, AWorkloadWithoutASectionAddsNothing) {
  const std::vector<Result> dlrm = {parse_result(testing::make_result({}, testing::runs_with_times({1, 2, 3})))};
  EXPECT_EQ(render_workload_terminal(dlrm), "");
  EXPECT_EQ(render_workload_markdown(dlrm), "");
  EXPECT_EQ(render_workload_html(dlrm), "");
  EXPECT_EQ(render_workload_markdown({}), "");
}

// The triad's section (reports/triad_section.cc) prints STREAM's own lines:
// the best rate is 24 bytes per element over the fastest iteration.
TEST(WorkloadSections, TriadPrintsStreamsLines) {
  nlohmann::json doc = testing::make_result({}, testing::runs_with_times({1}));
  doc["spec"]["workload"] = "triad";
  doc["plan"]["global_batch_size"] = 1000000;
  doc["runs"][0]["iteration_ms"] = {{"n", 10}, {"mean", 2.5}, {"min", 2.0}, {"p50", 2.4}, {"p90", 3.0},
                                    {"p99", 3.9}, {"max", 4.0}};
  const std::string out = render_workload_terminal({parse_result(doc)});
  EXPECT_EQ(out,
            "Function    Best Rate MB/s  Avg time     Min time     Max time\n"
            "Triad:          12000.0     0.002500     0.002000     0.004000\n");
  EXPECT_NE(render_workload_markdown({parse_result(doc)}).find("| 1000000 | 8000000 | 12000.0 |"), std::string::npos);
}

}  // namespace
}  // namespace perflab::reports
