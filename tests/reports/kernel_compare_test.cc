// compare's per-kernel section and the profile's rendering, on the golden
// profile (tests/harness/fixtures/dlrm_like.profile.json) and a copy whose
// interaction kernel got slower and whose memset went away.
#include "reports/kernel_compare.h"

#include <gtest/gtest.h>

#include <fstream>

#include "reports/kernel_table.h"

namespace perflab::reports {
namespace {

KernelProfile golden() {
  std::ifstream in(std::string(PERFLAB_SOURCE_DIR) +
                   "/tests/harness/fixtures/dlrm_like.profile.json");
  return kernel_profile_from_json(nlohmann::json::parse(in));
}

/// The interaction kernel 8 -> 12 us per iteration, the memset gone.
KernelProfile slower() {
  KernelProfile p = golden();
  std::vector<KernelRow> rows;
  for (KernelRow r : p.rows) {
    if (r.kind == "memset") continue;
    if (r.name.find("interaction_forward_kernel") != std::string::npos) r.us_per_iteration = 12;
    rows.push_back(r);
  }
  p.rows = rows;
  p.iteration_us = 54;
  return p;
}

TEST(KernelCompare, NamesTheKernelThatChangedMostFirst) {
  const KernelComparison c = compare_kernels(
      {{"point-a", "dlrm dle", {golden(), golden()}}, {"point-b", "only here", {golden()}}},
      {{"point-a", "dlrm dle", {slower()}}, {"point-c", "new point", {slower()}}});
  ASSERT_EQ(c.points.size(), 1u);
  const PointKernelComparison& p = c.points[0];
  EXPECT_EQ(p.base_runs, 2u);
  EXPECT_EQ(p.candidate_runs, 1u);
  EXPECT_DOUBLE_EQ(p.base_iteration_us, 50);
  EXPECT_DOUBLE_EQ(p.candidate_iteration_us, 54);
  ASSERT_FALSE(p.kernels.empty());
  const KernelChange& top = p.kernels[0];
  EXPECT_NE(top.kernel.find("interaction_forward_kernel<32>"), std::string::npos) << top.kernel;
  EXPECT_DOUBLE_EQ(*top.base_us, 8);
  EXPECT_DOUBLE_EQ(*top.candidate_us, 12);
  EXPECT_DOUBLE_EQ(top.delta_us(), 4);
  EXPECT_DOUBLE_EQ(*top.change(), 0.5);
  const KernelChange& gone = p.kernels[1];
  EXPECT_EQ(gone.kind, "memset");
  EXPECT_FALSE(gone.candidate_us);
  EXPECT_FALSE(gone.change());
  EXPECT_DOUBLE_EQ(gone.delta_us(), -1);
  EXPECT_EQ(c.only_base, std::vector<std::string>{"only here"});
  EXPECT_EQ(c.only_candidate, std::vector<std::string>{"new point"});

  const std::string console = render_kernel_compare_console(c);
  EXPECT_NE(
      console.find(
          "dlrm dle: device time 50.0 -> 54.0 us/it, kernels 4 -> 4 per iteration (2 vs 1 runs)"),
      std::string::npos)
      << console;
  EXPECT_NE(console.find("+50.0%"), std::string::npos) << console;
  EXPECT_NE(console.find("gone"), std::string::npos) << console;
  EXPECT_NE(console.find("only here: profiled in BASE only"), std::string::npos) << console;
  const std::string md = render_kernel_compare_markdown(c);
  EXPECT_NE(md.find("## Kernels (profiled points)"), std::string::npos) << md;
  EXPECT_NE(md.find("| 8.0 | 12.0 | +50.0% | +4.0 | 1 -> 1 |"), std::string::npos) << md;
  const nlohmann::json j = kernel_compare_to_json(c);
  EXPECT_DOUBLE_EQ(j["points"][0]["kernels"][0]["change"].get<double>(), 0.5);
  EXPECT_TRUE(j["points"][0]["kernels"][1]["candidate_us_per_iteration"].is_null());
}


TEST(KernelCompare, PairsAPointAcrossAVersionThatAddedAParameter) {
  const std::string before = R"({"params":{"batch":512},"workload":"dlrm"})";
  const std::string after = R"({"params":{"batch":512,"epilogues":"auto"},"workload":"dlrm"})";
  const KernelComparison c = compare_kernels({{before, "dlrm dle", {golden()}}}, {{after, "dlrm dle", {slower()}}});
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_NE(c.points[0].across_versions.find("epilogues=auto only in the candidate"), std::string::npos);
  EXPECT_NE(render_kernel_compare_console(c).find("paired across versions"), std::string::npos);
  EXPECT_NE(render_kernel_compare_markdown(c).find("paired across versions"), std::string::npos);
  EXPECT_TRUE(kernel_compare_to_json(c)["points"][0]["across_versions"].is_string());
  // Set with --set on the candidate's side: two points, each on one side.
  const KernelComparison apart =
      compare_kernels({{before, "dlrm dle", {golden()}}}, {{after, "dlrm dle", {slower()}, {"epilogues"}}});
  EXPECT_TRUE(apart.points.empty());
  EXPECT_EQ(apart.only_base.size(), 1u);
  EXPECT_EQ(apart.only_candidate.size(), 1u);
}
TEST(KernelCompare, ARunWithoutTheKernelCountsZero) {
  // Two base runs, one without the memset: its median is (1 + 0) / 2.
  KernelProfile without = golden();
  std::vector<KernelRow> rows;
  for (const KernelRow& r : without.rows) {
    if (r.kind != "memset") rows.push_back(r);
  }
  without.rows = rows;
  const KernelComparison c = compare_kernels({{"p", "l", {golden(), without}}}, {{"p", "l", {golden()}}});
  for (const KernelChange& k : c.points[0].kernels) {
    if (k.kind == "memset") {
      EXPECT_DOUBLE_EQ(*k.base_us, 0.5);
      EXPECT_DOUBLE_EQ(*k.candidate_us, 1);
    }
  }
}

TEST(KernelCompare, NothingProfiledRendersNothing) {
  const KernelComparison c = compare_kernels({}, {});
  EXPECT_EQ(render_kernel_compare_console(c), "");
  EXPECT_EQ(render_kernel_compare_markdown(c), "");
}

TEST(KernelTable, ShortNamesDropParametersReturnTypeTemplatesThenTheMiddle) {
  const std::string name =
      "void perflab::kernels::cuda::interaction_forward_kernel<32, perflab::Layout<float, 4> "
      ">(float const*, float*, int)";
  EXPECT_EQ(short_kernel_name(name, 200), name);
  EXPECT_EQ(short_kernel_name(name, 92),
            "void perflab::kernels::cuda::interaction_forward_kernel<32, perflab::Layout<float, 4> "
            ">(...)");
  EXPECT_EQ(
      short_kernel_name(name, 87),
      "perflab::kernels::cuda::interaction_forward_kernel<32, perflab::Layout<float, 4> >(...)");
  EXPECT_EQ(short_kernel_name(name, 64),
            "perflab::kernels::cuda::interaction_forward_kernel<>(...)");
  const std::string cut = short_kernel_name(name, 30);
  EXPECT_EQ(cut.size(), 30u);
  EXPECT_NE(cut.find("..."), std::string::npos);
}

}  // namespace
}  // namespace perflab::reports
