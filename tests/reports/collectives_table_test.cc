// nccl-tests' table read from results edited by hand or damaged: a count
// that is not one of its type is left at its default (get<size_t> of 1e300
// was an undefined cast), and #wrong is N/A when a run's count is not a
// count or the sum would not fit.
#include "reports/collectives_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace perflab::reports {
namespace {

Result all_reduce(const nlohmann::json& size_bytes, const std::vector<nlohmann::json>& wrong) {
  Result r;
  r.spec.workload = "collectives";
  r.plan.data = {{"collective", "all_reduce"}, {"dtype", "float"}, {"redop", "sum"},
                 {"size_bytes", size_bytes},   {"count", 256},     {"param_count", 256},
                 {"element_bytes", 4},         {"ranks", 2},       {"communicator", "mpi"}};
  for (const nlohmann::json& w : wrong) {
    ResultRun run;
    run.status = "success";
    run.iteration_ms.n = 10;
    run.iteration_ms.p50 = 0.01;
    run.facts["wrong_elements"] = w;
    r.runs.push_back(run);
  }
  return r;
}

TEST(CollectivesTable, CountsThatAreNotCountsKeepTheirDefaults) {
  const std::vector<CollectivesRow> rows = collectives_rows({all_reduce(1e300, {0, 0})});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].size_bytes, 0u);
  EXPECT_EQ(rows[0].count, 256u);
  ASSERT_TRUE(rows[0].out_of_place.has_value());
  EXPECT_EQ(rows[0].out_of_place->wrong, 0);
}

TEST(CollectivesTable, WrongIsTheSumOfCountsOrNotAvailable) {
  const auto wrong = [](const std::vector<nlohmann::json>& runs) {
    return collectives_rows({all_reduce(1024, runs)}).at(0).out_of_place->wrong;
  };
  EXPECT_EQ(wrong({1, 2.0}), 3);  // an integral float is its count
  EXPECT_EQ(wrong({1, -1}), -1);
  EXPECT_EQ(wrong({1, 2.5}), -1);
  EXPECT_EQ(wrong({1, "2"}), -1);
  EXPECT_EQ(wrong({1, 1e300}), -1);
  EXPECT_EQ(wrong({std::numeric_limits<int64_t>::max(), 1}), -1);  // the sum would overflow
  EXPECT_EQ(wrong({std::numeric_limits<uint64_t>::max()}), -1);
}

}  // namespace
}  // namespace perflab::reports
