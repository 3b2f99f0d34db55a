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
  EXPECT_EQ(seen, (std::set<std::string>{"collectives", "halo_conv"}));
}

TEST(WorkloadSections, AWorkloadWithoutASectionAddsNothing) {
  const std::vector<Result> dlrm = {parse_result(testing::make_result({}, testing::runs_with_times({1, 2, 3})))};
  EXPECT_EQ(render_workload_terminal(dlrm), "");
  EXPECT_EQ(render_workload_markdown(dlrm), "");
  EXPECT_EQ(render_workload_html(dlrm), "");
  EXPECT_EQ(render_workload_markdown({}), "");
}

}  // namespace
}  // namespace perflab::reports
