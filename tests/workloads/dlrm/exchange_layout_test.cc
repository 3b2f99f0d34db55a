// The index arithmetic of the cuda backend's embedding exchange
// (workloads/dlrm/exchange_layout.h, used by the pack/unpack kernels)
// against the CPU ShardedModel's own layout (gather_to_send and
// scatter_received), on the CPU. Every rank of P = 1, 2, 3, 4 is played in
// turn by a communicator that only says its rank and size (the layout
// functions communicate nothing), with 7 tables (divisible by none of 2, 3,
// 4) of uneven sizes and local batches of 1, 5 and 8 samples. Exact: the
// layouts move floats, so every value must land in the same place.
#include "workloads/dlrm/exchange_layout.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "collectives/communicator.h"
#include "workloads/dlrm/sharded_model.h"

namespace perflab::dlrm {
namespace {

/// Rank `rank` of `size` with no collective: ShardedModel's constructor and
/// its layout functions only ask for the rank and the size.
class PlacedCommunicator final : public collectives::Communicator {
 public:
  PlacedCommunicator(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "placed"; }
  void barrier() override { fail(); }
  void all_reduce_host(double*, size_t, collectives::ReduceOp) override { fail(); }
  void broadcast_host(void*, size_t, int) override { fail(); }
  void all_reduce(const void*, void*, size_t, collectives::DataType,
                  collectives::ReduceOp) override {
    fail();
  }
  void all_gather(const void*, void*, size_t, collectives::DataType) override { fail(); }
  void reduce_scatter(const void*, void*, size_t, collectives::DataType,
                      collectives::ReduceOp) override {
    fail();
  }
  void all_to_all(const void*, void*, size_t, collectives::DataType) override { fail(); }
  void broadcast(const void*, void*, size_t, collectives::DataType, int) override { fail(); }
  void reduce(const void*, void*, size_t, collectives::DataType, collectives::ReduceOp,
              int) override {
    fail();
  }
  void send_recv(const collectives::PeerTransfer*, size_t, collectives::DataType) override {
    fail();
  }

 private:
  [[noreturn]] static void fail() {
    throw std::logic_error("the layout test communicates nothing");
  }
  int rank_, size_;
};

ModelShape seven_tables() {
  ModelShape shape;
  shape.num_dense = 3;
  shape.table_sizes = {97, 13, 50, 31, 8, 64, 5};
  shape.embed_dim = 3;
  shape.bottom_mlp = {4, 3};
  shape.top_mlp = {4, 1};
  return shape;
}

TEST(ExchangeLayout, SlotsFollowThePlacement) {
  const ModelShape shape = seven_tables();
  const auto tables = static_cast<int>(shape.table_sizes.size());
  for (int ranks = 1; ranks <= 4; ++ranks) {
    const TablePlacement p = place_tables(shape.table_sizes, ranks);
    const std::vector<ExchangeSlot> slots = exchange_slots(p.tables_of, tables);
    int32_t before = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<int>& mine = p.tables_of[static_cast<size_t>(r)];
      for (size_t q = 0; q < mine.size(); ++q) {
        const ExchangeSlot& s = slots[static_cast<size_t>(mine[q])];
        EXPECT_EQ(s.tables_before, before) << ranks << " ranks, table " << mine[q];
        EXPECT_EQ(s.owner_tables, static_cast<int32_t>(mine.size()))
            << ranks << " ranks, table " << mine[q];
        EXPECT_EQ(s.index, static_cast<int32_t>(q)) << ranks << " ranks, table " << mine[q];
      }
      before += static_cast<int32_t>(mine.size());
    }
    EXPECT_EQ(before, tables);
  }
}

/// For every (sample, table) of n samples, segment_row and sample_row name
/// the same row that the CPU model's gather_to_send moves, and
/// scatter_received moves it back; every segment row is used exactly once.
TEST(ExchangeLayout, MatchesTheCpuShardedModel) {
  const ModelShape shape = seven_tables();
  const auto tables = static_cast<int64_t>(shape.table_sizes.size());
  const int64_t dim = shape.embed_dim;
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (int rank = 0; rank < ranks; ++rank) {
      for (int64_t batch : {int64_t{4}, int64_t{21}, int64_t{32}}) {
        PlacedCommunicator comm(rank, ranks);
        ShardedModel model(shape, 3, comm, batch);
        const std::vector<ExchangeSlot> slots =
            exchange_slots(model.placement().tables_of, static_cast<int>(tables));
        const int64_t n = model.local_batch();
        ASSERT_EQ(n, slice_first(batch, ranks, rank + 1) - slice_first(batch, ranks, rank));
        const auto size = static_cast<size_t>(n * tables * dim);
        std::vector<float> embeddings(size), segments(size, -1.0f), back(size, -1.0f);
        for (size_t i = 0; i < size; ++i) embeddings[i] = static_cast<float>(i);
        model.gather_to_send(n, embeddings.data(), segments.data());
        std::set<int64_t> used;
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t t = 0; t < tables; ++t) {
            const int64_t seg = segment_row(slots[static_cast<size_t>(t)], n, b);
            const int64_t row = sample_row(tables, b, t);
            ASSERT_GE(seg, 0);
            ASSERT_LT(seg, n * tables);
            EXPECT_TRUE(used.insert(seg).second) << "segment row " << seg << " used twice";
            for (int64_t d = 0; d < dim; ++d) {
              ASSERT_EQ(segments[static_cast<size_t>(seg * dim + d)],
                        embeddings[static_cast<size_t>(row * dim + d)])
                  << ranks << " ranks, rank " << rank << ", batch " << batch << ": sample " << b
                  << ", table " << t << ", element " << d << " (segment row " << seg << ")";
            }
          }
        }
        model.scatter_received(n, segments.data(), back.data());
        EXPECT_EQ(back, embeddings) << ranks << " ranks, rank " << rank << ", batch " << batch;
      }
    }
  }
}

}  // namespace
}  // namespace perflab::dlrm
