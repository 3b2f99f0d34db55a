// The communicator of this process (collectives/communicator.h) on every
// collective, type, reduction and placement, at odd sizes, with the
// wrong-element count of collectives/check.h. Discovered by ctest as a
// single-rank test (the single communicator), and run again whole under
// `mpirun -np 2` and `-np 4` (tests/CMakeLists.txt: collectives_mpi_np*),
// where every rank must agree.
#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "collectives/check.h"
#include "collectives/communicator.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

Communicator& world() {
  static std::unique_ptr<Communicator> comm = make_world_communicator();
  return *comm;
}

const Collective kCollectives[] = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                                   Collective::kAllToAll,  Collective::kBroadcast, Collective::kReduce,
                                   Collective::kSendRecv};
const DataType kTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32,
                           DataType::kFloat64};

/// Runs `call` once on fresh buffers and returns this rank's output bytes.
std::vector<unsigned char> run_once(Communicator& comm, const CollectiveCall& call, bool in_place) {
  const BufferLayout layout = buffer_layout(call, in_place);
  const size_t esize = dtype_size(call.dtype);
  std::vector<unsigned char> input, send(layout.send_elements * esize, 0xAB), recv(layout.recv_elements * esize, 0xCD);
  fill_input(call, input);
  std::memcpy(send.data() + layout.send_offset * esize, input.data(), input.size());
  unsigned char* out = layout.shared ? send.data() + layout.recv_offset * esize : recv.data();
  run_collective(comm, call, send.data() + layout.send_offset * esize, out);
  return {out, out + call.counts.recv * esize};
}

TEST(Ranks, EveryCollectiveTypeReductionAndPlacementIsExact) {
  Communicator& comm = world();
  const int n = comm.size();
  int cases = 0;
  double failures = 0;
  for (Collective c : kCollectives) {
    for (DataType t : kTypes) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
        if (!collective_reduces(c) && op != ReduceOp::kSum) continue;
        for (bool in_place : {false, true}) {
          if (in_place && c == Collective::kSendRecv) continue;
          // Odd element counts per rank: 1, 37 and 1001.
          for (size_t per_rank : {size_t{1}, size_t{37}, size_t{1001}}) {
            CollectiveCall call;
            call.collective = c;
            call.dtype = t;
            call.op = op;
            call.root = n - 1;
            call.rank = comm.rank();
            call.ranks = n;
            const size_t elements = c == Collective::kAllGather || c == Collective::kReduceScatter ||
                                            c == Collective::kAllToAll
                                        ? per_rank * static_cast<size_t>(n)
                                        : per_rank;
            call.counts = collective_counts(c, elements * dtype_size(t), dtype_size(t), n);
            ASSERT_EQ(call.counts.param, per_rank);
            const std::vector<unsigned char> out = run_once(comm, call, in_place);
            size_t first = 0;
            const size_t wrong = count_wrong(call, out.data(), first);
            EXPECT_EQ(wrong, 0u) << fmt::format("rank {} of {}: {} {} {} {} {} elements/rank: first wrong at {}",
                                                 comm.rank(), n, collective_name(c), dtype_name(t), op_name(op),
                                                 in_place ? "in place" : "out of place", per_rank, first);
            failures += wrong > 0 ? 1 : 0;
            ++cases;
          }
        }
      }
    }
  }
  // Every rank saw every case pass.
  comm.all_reduce_host(&failures, 1, ReduceOp::kSum);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(cases, 3 * (3 * 5 * 2 * 3) + 4 * (5 * 2 * 3) - 5 * 3);
}

TEST(Ranks, PlantedWrongElementIsCountedOnItsRankOnly) {
  Communicator& comm = world();
  CollectiveCall call;
  call.rank = comm.rank();
  call.ranks = comm.size();
  call.counts = collective_counts(Collective::kAllReduce, 101 * 4, 4, comm.size());
  std::vector<unsigned char> out = run_once(comm, call, false);
  const bool planter = comm.rank() == comm.size() - 1;
  if (planter) store_element(call.dtype, out.data(), 57, load_element(call.dtype, out.data(), 57) + 1);
  size_t first = 0;
  const size_t wrong = count_wrong(call, out.data(), first);
  EXPECT_EQ(wrong, planter ? 1u : 0u);
  if (planter) {
    EXPECT_EQ(first, 57u);
  }
  double total = static_cast<double>(wrong);
  comm.all_reduce_host(&total, 1, ReduceOp::kSum);
  EXPECT_EQ(total, 1);
}

TEST(Ranks, HostReductionsAndBroadcast) {
  Communicator& comm = world();
  const int n = comm.size(), r = comm.rank();
  std::vector<double> v = {double(r), double(-r), 1.5};
  std::vector<double> mx = v, mn = v;
  comm.all_reduce_host(v.data(), v.size(), ReduceOp::kSum);
  comm.all_reduce_host(mx.data(), mx.size(), ReduceOp::kMax);
  comm.all_reduce_host(mn.data(), mn.size(), ReduceOp::kMin);
  EXPECT_EQ(v[0], n * (n - 1) / 2.0);
  EXPECT_EQ(v[2], 1.5 * n);
  EXPECT_EQ(mx[0], n - 1);
  EXPECT_EQ(mn[1], -(n - 1));
  char word[8] = {};
  if (r == n - 1) std::memcpy(word, "perflab", 8);
  comm.broadcast_host(word, sizeof word, n - 1);
  EXPECT_STREQ(word, "perflab");
  comm.barrier();
}

TEST(Ranks, RootOutsideTheRanksIsRefusedOnEveryRank) {
  Communicator& comm = world();
  float x = 1, y = 0;
  EXPECT_THROW(comm.broadcast(&x, &y, 1, DataType::kFloat32, comm.size()), UsageError);
  EXPECT_THROW(comm.reduce(&x, &y, 1, DataType::kFloat32, ReduceOp::kSum, -1), UsageError);
}

}  // namespace
}  // namespace perflab::collectives
