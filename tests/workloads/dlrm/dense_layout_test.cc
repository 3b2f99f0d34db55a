// CudaModel's flat dense buffers, laid out and filled on the CPU
// (workloads/dlrm/dense_layout.h): the layout the model, its per-layer SGD,
// the fused head's update and the declared launches all take, held here
// without a device, at the DeepLearningExamples shape and at odd ones.
#include "workloads/dlrm/dense_layout.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "kernels/cpu/interaction.h"
#include "workloads/dlrm/model.h"

namespace perflab::dlrm {
namespace {

ModelShape shape(int num_dense, int tables, int dim, std::vector<int> bottom, std::vector<int> top) {
  ModelShape s;
  s.num_dense = num_dense;
  s.table_sizes.assign(static_cast<size_t>(tables), 5);
  s.embed_dim = dim;
  s.bottom_mlp = std::move(bottom);
  s.top_mlp = std::move(top);
  return s;
}

ModelShape dle() { return shape(13, 26, 128, {512, 256, 128}, {1024, 1024, 512, 256, 1}); }

/// Odd sizes: inputs that need padding (7 -> 8, 3 tables of 5: 6 + 5 = 11 -> 16),
/// widths that are no multiple of 8, a one-layer bottom MLP.
std::vector<ModelShape> odd_shapes() {
  return {shape(7, 3, 5, {5}, {9, 1}), shape(1, 1, 3, {11, 3}, {1}), shape(16, 4, 8, {33, 8}, {17, 5, 1}),
          shape(13, 26, 16, {64, 16}, {64, 1})};
}

TEST(DenseLayout, DleShapePadsTheFirstWeightsAndTotalsByHand) {
  const DenseLayout layout = dense_layout(dle());
  ASSERT_EQ(layout.slots.size(), 16u);
  EXPECT_EQ(bottom_input_width(dle()), 16);
  EXPECT_EQ(top_input_width(dle()), 480);  // the interaction's 128 + 27 x 26 / 2 = 479, rounded up
  const DenseSlot& bottom0 = layout.weight(true, 0);
  EXPECT_EQ(bottom0.name, "bottom.0.weight");
  EXPECT_EQ(bottom0.rows, 512);
  EXPECT_EQ(bottom0.cols, 13);
  EXPECT_EQ(bottom0.ld, 16);
  const DenseSlot& top0 = layout.weight(false, 0);
  EXPECT_EQ(top0.name, "top.0.weight");
  EXPECT_EQ(top0.cols, 479);
  EXPECT_EQ(top0.ld, 480);
  // Summed by hand, each tensor rounded up to 8 elements: bottom
  // 16x512 + 512 + 512x256 + 256 + 256x128 + 128 = 172,928; top 480x1024 +
  // 1024 + 1024x1024 + 1024 + 1024x512 + 512 + 512x256 + 256 + 256 + 1 (-> 8)
  // = 2,198,536.
  EXPECT_EQ(layout.count, 172928 + 2198536);
  // The fused head's update (the top MLP's last layer: 256 weights and a
  // bias padded to 8) is the buffers' tail.
  const DenseRange head = layout.layer(false, 4);
  EXPECT_EQ(head.first, layout.count - 264);
  EXPECT_EQ(head.count, 264);
}

TEST(DenseLayout, LayerRangesTileTheBuffersInOrder) {
  std::vector<ModelShape> shapes = odd_shapes();
  shapes.push_back(dle());
  for (const ModelShape& s : shapes) {
    const DenseLayout layout = dense_layout(s);
    SCOPED_TRACE(testing::Message() << "num_dense " << s.num_dense << ", dim " << s.embed_dim);
    ASSERT_EQ(layout.bottom_layers, s.bottom_mlp.size());
    ASSERT_EQ(layout.top_layers, s.top_mlp.size());
    int64_t next = 0;
    for (bool bottom : {true, false}) {
      const std::vector<int>& widths = bottom ? s.bottom_mlp : s.top_mlp;
      int64_t in = bottom ? s.num_dense : kernels::cpu::interaction_output_width(static_cast<int>(s.table_sizes.size()), s.embed_dim);
      for (size_t l = 0; l < widths.size(); ++l) {
        const DenseRange r = layout.layer(bottom, l);
        EXPECT_EQ(r.first, next) << (bottom ? "bottom " : "top ") << l;
        EXPECT_EQ(r.first % kDenseSlotAlignment, 0);
        const DenseSlot& w = layout.weight(bottom, l);
        const DenseSlot& b = layout.bias(bottom, l);
        EXPECT_EQ(w.offset, r.first);
        EXPECT_EQ(b.offset % kDenseSlotAlignment, 0);
        EXPECT_EQ(w.rows, widths[l]);
        EXPECT_EQ(b.values(), widths[l]);
        EXPECT_EQ(w.cols, in);
        // Only each MLP's first weight has zero columns, up to its padded input.
        EXPECT_EQ(w.ld, l > 0 ? in : bottom ? bottom_input_width(s) : top_input_width(s));
        // The range holds the weight and the bias, each rounded up to 8.
        EXPECT_EQ(r.count, (w.rows * w.ld + 7) / 8 * 8 + (b.cols + 7) / 8 * 8);
        next = r.first + r.count;
        in = widths[l];
      }
    }
    EXPECT_EQ(next, layout.count);
    EXPECT_THROW(layout.layer(true, s.bottom_mlp.size()), std::out_of_range);
    EXPECT_THROW(layout.layer(false, s.top_mlp.size()), std::out_of_range);
  }
}

TEST(DenseLayout, PackPutsEveryValueAtItsRowAndLeavesThePaddingZero) {
  std::vector<ModelShape> shapes = odd_shapes();
  shapes.push_back(dle());
  for (const ModelShape& s : shapes) {
    CpuModel model(s, /*seed=*/7);
    std::vector<DenseParameter> params = model.dense_parameters();
    const DenseLayout layout = dense_layout(s);
    const std::vector<float> flat = pack_dense(layout, params);
    ASSERT_EQ(static_cast<int64_t>(flat.size()), layout.count);
    std::vector<bool> written(flat.size(), false);
    for (size_t i = 0; i < params.size(); ++i) {
      const DenseSlot& slot = layout.slots[i];
      ASSERT_EQ(params[i].name, slot.name);
      for (int64_t r = 0; r < slot.rows; ++r) {
        for (int64_t c = 0; c < slot.cols; ++c) {
          const auto at = static_cast<size_t>(slot.offset + r * slot.ld + c);
          ASSERT_EQ(flat[at], params[i].value[r * slot.cols + c]) << slot.name << " [" << r << ", " << c << "]";
          written[at] = true;
        }
      }
    }
    // Everything else (the first weights' zero columns, the rounding after
    // each tensor) is zero: the padded model is the unpadded one.
    int64_t padding = 0;
    for (size_t k = 0; k < flat.size(); ++k) {
      if (written[k]) continue;
      ++padding;
      ASSERT_EQ(flat[k], 0.0f) << "padding element " << k;
    }
    EXPECT_EQ(padding, layout.count - dense_parameter_count(s));
  }
}

TEST(DenseLayout, PackRefusesTensorsThatAreNotTheLayouts) {
  const ModelShape s = odd_shapes().front();
  CpuModel model(s, 1);
  const DenseLayout layout = dense_layout(s);
  std::vector<DenseParameter> params = model.dense_parameters();
  std::vector<DenseParameter> fewer(params.begin(), params.end() - 1);
  EXPECT_THROW(pack_dense(layout, fewer), Error);
  std::vector<DenseParameter> resized = params;
  resized[0].size -= 1;
  EXPECT_THROW(pack_dense(layout, resized), Error);
  std::vector<DenseParameter> swapped = params;
  std::swap(swapped[0], swapped[2]);
  EXPECT_THROW(pack_dense(layout, swapped), Error);
}

}  // namespace
}  // namespace perflab::dlrm
