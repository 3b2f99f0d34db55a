// nccl-tests' counts and bandwidths (collectives/bandwidth.h), against
// values worked by hand from nccl-tests' definitions.
#include <gtest/gtest.h>

#include "collectives/bandwidth.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

TEST(Bandwidth, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduce, 8), 1);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kSendRecv, 2), 1);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 1), 0);
}

TEST(Bandwidth, CountsSplitAcrossRanksRoundDown) {
  // 1000 bytes of floats = 250 elements; on 3 ranks all_gather sends 83 and receives 249.
  const CollectiveCounts ag = collective_counts(Collective::kAllGather, 1000, 4, 3);
  EXPECT_EQ(ag.count, 250u);
  EXPECT_EQ(ag.send, 83u);
  EXPECT_EQ(ag.recv, 249u);
  EXPECT_EQ(ag.param, 83u);
  EXPECT_EQ(ag.size_bytes, 996u);
  const CollectiveCounts rs = collective_counts(Collective::kReduceScatter, 1000, 4, 3);
  EXPECT_EQ(rs.send, 249u);
  EXPECT_EQ(rs.recv, 83u);
  const CollectiveCounts a2a = collective_counts(Collective::kAllToAll, 1000, 4, 3);
  EXPECT_EQ(a2a.param, 83u);
  EXPECT_EQ(a2a.send, 249u);
  const CollectiveCounts ar = collective_counts(Collective::kAllReduce, 1002, 2, 5);
  EXPECT_EQ(ar.param, 501u);
  EXPECT_EQ(ar.size_bytes, 1002u);
}

TEST(Bandwidth, AlgorithmBandwidthCountsTheBytesNcclTestsCounts) {
  // all_reduce of 1 GB in 10 ms: 100 GB/s algbw; on 8 ranks busbw 175 GB/s.
  const CollectiveCounts ar = collective_counts(Collective::kAllReduce, 1000000000, 4, 8);
  const double algbw = algbw_gbps(Collective::kAllReduce, ar, 4, 8, 0.01);
  EXPECT_NEAR(algbw, 100, 1e-9);
  EXPECT_NEAR(algbw * busbw_factor(Collective::kAllReduce, 8), 175, 1e-9);
  // all_gather: the bytes every rank ends up with (param * n).
  const CollectiveCounts ag = collective_counts(Collective::kAllGather, 800, 4, 8);
  EXPECT_NEAR(algbw_gbps(Collective::kAllGather, ag, 4, 8, 1e-6), 800e-9 / 1e-6, 1e-12);
  EXPECT_EQ(algbw_gbps(Collective::kAllGather, ag, 4, 8, 0), 0);
}

TEST(Bandwidth, NamesParseBothSpellings) {
  EXPECT_EQ(parse_collective("allreduce"), Collective::kAllReduce);
  EXPECT_EQ(parse_collective("all_to_all"), Collective::kAllToAll);
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll, Collective::kBroadcast, Collective::kReduce, Collective::kSendRecv}) {
    EXPECT_EQ(parse_collective(collective_name(c)), c);
  }
  EXPECT_THROW(parse_collective("allscatter"), UsageError);
}

}  // namespace
}  // namespace perflab::collectives
