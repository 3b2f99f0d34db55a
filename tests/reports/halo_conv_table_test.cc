// The halo convolution's report rows: each point's parts, the overlap
// efficiency against its naive twin (a share hidden, or by how much the
// overlap was slower), the cost against one partition, and which points are
// never paired (another precision, a transfer under 1% of the step).
#include "reports/halo_conv_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perflab::reports {
namespace {

/// A successful halo_conv point of the U-Net level-1 shape.
Result point(int partitions, const std::string& halo, double step_ms, double compute_ms, double transfer_ms,
             const std::string& precision = "fp32") {
  Result r;
  r.spec.workload = "halo_conv";
  r.spec.backend = "cuda";
  r.plan.global_batch_size = 1;
  r.plan.data = {{"batch", 1},          {"channels", 32},  {"depth", 128},        {"height", 128},
                 {"width", 128},        {"out_channels", 32}, {"kernel", 3},      {"pass", "train"},
                 {"partitions", partitions}, {"ranks", 1}, {"halo", halo},       {"precision", precision}};
  ResultRun run;
  run.status = "success";
  run.iteration_ms.n = 20;
  run.iteration_ms.p50 = step_ms;
  run.parts = {{"compute", compute_ms, 20, "cuda events"}, {"transfer", transfer_ms, 20, "cuda events"}};
  run.facts["overlap"] = halo == "overlap" && partitions > 1 ? "in effect" : "not requested";
  r.runs.push_back(run);
  return r;
}

// (Views, not strings: a reference returned beside a temporary string
// argument reads to GCC 13 as one that may dangle.)
const HaloConvRow& row(const std::vector<HaloConvRow>& rows, int partitions, std::string_view halo,
                       std::string_view shape_suffix = {}) {
  for (const HaloConvRow& r : rows) {
    const bool suffix = shape_suffix.empty() ? r.shape.find(", bf16") == std::string::npos
                                             : r.shape.find(shape_suffix) != std::string::npos;
    if (r.partitions == partitions && r.halo == halo && suffix) return r;
  }
  throw std::runtime_error("no row");
}

std::string efficiency_cell(const std::vector<HaloConvRow>& rows, const HaloConvRow& r) {
  const std::vector<std::string> header = halo_conv_header();
  const auto column = static_cast<size_t>(
      std::find(header.begin(), header.end(), "overlap efficiency") - header.begin());
  const std::vector<std::vector<std::string>> cells = halo_conv_cells(rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (&rows[i] == &r) return cells[i].at(column);
  }
  return "?";
}

TEST(HaloConvTable, OverlapEfficiencyIsTheShareHiddenOrHowMuchSlowerTheOverlapWas) {
  // As the H200 measured at c9d4b27 (TF32, P = 4), and an overlap that
  // hides 80% of a 0.5 ms transfer at P = 2; one partition for the cost.
  const std::vector<Result> results = {
      point(1, "naive", 5.576, 5.706, 0.003), point(4, "naive", 5.762, 5.881, 0.094),
      point(4, "overlap", 7.678, 7.690, 0.078), point(2, "naive", 6.0, 5.5, 0.5),
      point(2, "overlap", 5.6, 5.5, 0.5)};
  const std::vector<HaloConvRow> rows = halo_conv_rows(results);
  ASSERT_EQ(rows.size(), 5u);

  const HaloConvRow& slower = row(rows, 4, "overlap");
  ASSERT_TRUE(slower.efficiency.has_value());
  EXPECT_NEAR(*slower.efficiency, (5.762 - 7.678) / 0.078, 1e-9);
  EXPECT_EQ(efficiency_cell(rows, slower), "none (1.916 ms slower)");

  const HaloConvRow& hidden = row(rows, 2, "overlap");
  ASSERT_TRUE(hidden.efficiency.has_value());
  EXPECT_NEAR(*hidden.efficiency, 0.8, 1e-9);
  EXPECT_EQ(efficiency_cell(rows, hidden), "80%");

  // Naive rows and the one-partition row have no efficiency; every row its
  // cost against one partition, and exposed time never below zero.
  EXPECT_FALSE(row(rows, 4, "naive").efficiency.has_value());
  EXPECT_EQ(efficiency_cell(rows, row(rows, 4, "naive")), "-");
  ASSERT_TRUE(slower.vs_whole.has_value());
  EXPECT_NEAR(*slower.vs_whole, 7.678 / 5.576, 1e-9);
  ASSERT_TRUE(slower.exposed_ms.has_value());
  EXPECT_EQ(*slower.exposed_ms, 0.0);  // compute timed alone took longer than the step
  EXPECT_NEAR(*row(rows, 2, "naive").exposed_ms, 0.5, 1e-9);
}

// A result edited by hand or damaged: a count that is not an int reads as 0
// (get<int> of 1e300 was an undefined cast), an integral float as its value.
TEST(HaloConvTable, CountsThatAreNotIntsReadAsZero) {
  Result r = point(2, "naive", 6.0, 5.5, 0.5);
  r.plan.data["partitions"] = 1e300;
  r.plan.data["ranks"] = -2.5;
  r.plan.data["depth"] = 64.0;
  const std::vector<HaloConvRow> rows = halo_conv_rows({r});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].partitions, 0);
  EXPECT_EQ(rows[0].ranks, 0);
  EXPECT_NE(rows[0].shape.find("1x32x64x128x128"), std::string::npos) << rows[0].shape;
}

TEST(HaloConvTable, NoEfficiencyAcrossPrecisionsOrUnderOnePercentOfTransfer) {
  const std::vector<Result> results = {
      point(2, "naive", 6.0, 5.5, 0.5),            // fp32's naive twin
      point(2, "overlap", 3.0, 2.9, 0.2, "bf16"),  // bf16: never paired with fp32
      point(4, "naive", 6.0, 5.9, 0.05),
      point(4, "overlap", 5.9, 5.9, 0.05)};        // transfer under 1% of the step: noise
  const std::vector<HaloConvRow> rows = halo_conv_rows(results);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(row(rows, 2, "overlap", ", bf16").efficiency.has_value());
  EXPECT_FALSE(row(rows, 4, "overlap").efficiency.has_value());
  EXPECT_EQ(efficiency_cell(rows, row(rows, 4, "overlap")), "-");
}

}  // namespace
}  // namespace perflab::reports
