// DLRM's projected communication at 8, 64 and 512 GPUs
// (workloads/dlrm/projection.h): the bytes by hand, the times from the
// collectives model, and the SHARP/NVLS column never slower.
#include "workloads/dlrm/projection.h"

#include <gtest/gtest.h>

#include "collectives/model.h"
#include "base/error.h"

namespace perflab::dlrm {
namespace {

ModelShape odd_shape() {
  ModelShape s;
  s.num_dense = 13;
  s.table_sizes = {101, 7, 5003, 11, 3, 997, 29};  // 7 tables
  s.embed_dim = 16;
  s.bottom_mlp = {64, 16};
  s.top_mlp = {32, 1};
  return s;
}

TEST(DlrmProjection, BytesByHandAndTimesFromTheModel) {
  const ModelShape shape = odd_shape();
  const Projection p = project_communication(shape, 37);
  ASSERT_EQ(p.scales.size(), 3u);
  EXPECT_EQ(p.scales[0].gpus(), 8);
  EXPECT_EQ(p.scales[1].gpus(), 64);
  EXPECT_EQ(p.scales[2].gpus(), 512);
  // Dense parameters: bottom 13*64+64 + 64*16+16, top (interaction 16 + C(8,2) = 44)
  // 44*32+32 + 32*1+1.
  const double dense = 13 * 64 + 64 + 64 * 16 + 16 + 44 * 32 + 32 + 32 + 1;
  int64_t rows = 0;
  for (int64_t r : shape.table_sizes) rows += r;
  ASSERT_EQ(parameter_count(shape) - rows * shape.embed_dim, static_cast<int64_t>(dense));
  ASSERT_EQ(dense_parameter_count(shape), static_cast<int64_t>(dense));
  for (const ScaleProjection& s : p.scales) {
    EXPECT_EQ(s.global_batch, 37 * s.gpus());
    EXPECT_DOUBLE_EQ(s.all_to_all_bytes, 37.0 * 7 * 16 * 4);
    EXPECT_DOUBLE_EQ(s.all_reduce_bytes, dense * 4);
    const auto a2a = collectives::predict_all_to_all(37 * 7 * 16 * 4, {s.nodes, s.gpus_per_node},
                                                     collectives::find_link_preset(s.link));
    EXPECT_DOUBLE_EQ(s.all_to_all_us, a2a.time_us);
    EXPECT_LE(s.sharp_all_reduce_us, s.all_reduce_us);
    EXPECT_TRUE(s.all_reduce_algo == "RING" || s.all_reduce_algo == "TREE") << s.all_reduce_algo;
    EXPECT_DOUBLE_EQ(s.communication_us(false), 2 * s.all_to_all_us + s.all_reduce_us);
  }
  EXPECT_EQ(p.scales[0].link, "h100");
  EXPECT_EQ(p.scales[2].sharp_link, "h100-ndr-sharp");
  // More GPUs, more peers: the all-to-all only grows.
  EXPECT_LT(p.scales[0].all_to_all_us, p.scales[1].all_to_all_us);
  EXPECT_LT(p.scales[1].all_to_all_us, p.scales[2].all_to_all_us);
}

TEST(DlrmProjection, TheHybridReductionScalesTheExchangeOnly) {
  const Projection mp = project_communication(odd_shape(), 64);
  const Projection hy = project_communication(odd_shape(), 64, 0.75);
  EXPECT_DOUBLE_EQ(hy.exchange_scale, 0.25);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(hy.scales[i].all_to_all_bytes, mp.scales[i].all_to_all_bytes / 4);
    EXPECT_DOUBLE_EQ(hy.scales[i].all_reduce_us, mp.scales[i].all_reduce_us);
  }
  const nlohmann::json j = projection_json(hy);
  EXPECT_EQ(j["scales"].size(), 3u);
  EXPECT_EQ(j["scales"][2]["gpus"], 512);
  EXPECT_DOUBLE_EQ(j["exchange_scale"].get<double>(), 0.25);
}

// Value bytes per direction: bf16 rows forward with fp32 gradients
// backward, a bf16 all-reduce (what each field scales); the communication
// is the three, nothing overlapped. A bf16 cuda run moves {2, 2, 2}
// (below).
TEST(DlrmProjection, Bf16MovesHalfTheForwardRowsAndHalfTheAllReduce) {
  const Projection fp32 = project_communication(odd_shape(), 64);
  const Projection bf16 = project_communication(odd_shape(), 64, std::nullopt, ValueBytes{2, 4, 2});
  for (size_t i = 0; i < 3; ++i) {
    const ScaleProjection& a = fp32.scales[i];
    const ScaleProjection& b = bf16.scales[i];
    EXPECT_DOUBLE_EQ(b.all_to_all_bytes, a.all_to_all_bytes / 2);
    EXPECT_DOUBLE_EQ(b.all_to_all_backward_bytes, a.all_to_all_backward_bytes);
    EXPECT_DOUBLE_EQ(a.all_to_all_backward_bytes, a.all_to_all_bytes);
    EXPECT_DOUBLE_EQ(b.all_reduce_bytes, a.all_reduce_bytes / 2);
    EXPECT_LE(b.all_to_all_us, a.all_to_all_us);
    EXPECT_DOUBLE_EQ(b.all_to_all_backward_us, a.all_to_all_backward_us);
    EXPECT_DOUBLE_EQ(b.communication_us(false), b.all_to_all_us + b.all_to_all_backward_us + b.all_reduce_us);
    EXPECT_LT(b.communication_us(true), a.communication_us(true));
  }
  const nlohmann::json j = projection_json(bf16);
  EXPECT_EQ(j["value_bytes"]["forward"], 2);
  EXPECT_EQ(j["value_bytes"]["all_reduce"], 2);
  EXPECT_DOUBLE_EQ(j["scales"][0]["all_to_all_backward_bytes"].get<double>(), bf16.scales[0].all_to_all_backward_bytes);
}

// A bf16 cuda run (CudaModel: rows, their gradients and the dense gradient
// all bf16): every byte count half the fp32 run's.
TEST(DlrmProjection, Bf16CudaMovesHalfOfEverything) {
  const Projection fp32 = project_communication(odd_shape(), 64);
  const Projection bf16 = project_communication(odd_shape(), 64, std::nullopt, ValueBytes{2, 2, 2});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(bf16.scales[i].all_to_all_bytes, fp32.scales[i].all_to_all_bytes / 2);
    EXPECT_DOUBLE_EQ(bf16.scales[i].all_to_all_backward_bytes, fp32.scales[i].all_to_all_backward_bytes / 2);
    EXPECT_DOUBLE_EQ(bf16.scales[i].all_reduce_bytes, fp32.scales[i].all_reduce_bytes / 2);
  }
  EXPECT_EQ(projection_json(bf16)["value_bytes"]["backward"], 2);
}

TEST(DlrmProjection, RefusesAnEmptyBatch) { EXPECT_THROW(project_communication(odd_shape(), 0), UsageError); }

}  // namespace
}  // namespace perflab::dlrm
