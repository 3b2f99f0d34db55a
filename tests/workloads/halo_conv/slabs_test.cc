// Partitioning of the volume (slabs.h), the seeded tensors and the
// background task: pure parts of halo_conv.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/conv3d.h"
#include "workloads/halo_conv/background_task.h"
#include "workloads/halo_conv/seeded_tensor.h"
#include "workloads/halo_conv/slabs.h"

namespace perflab::halo_conv {
namespace {

TEST(Slabs, SplitCoversTheVolumeInOrderThickerFirst) {
  for (int64_t depth : {1, 7, 13, 128}) {
    for (int parts = 1; parts <= std::min<int64_t>(depth, 9); ++parts) {
      const std::vector<Slab> slabs = split_planes(depth, parts);
      ASSERT_EQ(slabs.size(), static_cast<size_t>(parts));
      int64_t next = 0;
      for (size_t s = 0; s < slabs.size(); ++s) {
        EXPECT_EQ(slabs[s].first, next);
        EXPECT_TRUE(slabs[s].planes == depth / parts || slabs[s].planes == depth / parts + 1);
        if (s > 0) {
          EXPECT_LE(slabs[s].planes, slabs[s - 1].planes);
        }
        next += slabs[s].planes;
      }
      EXPECT_EQ(next, depth);
    }
  }
  EXPECT_EQ(split_planes(13, 4)[0].planes, 4);
  EXPECT_EQ(split_planes(13, 4)[3].planes, 3);
}

TEST(Slabs, RefusesSlabsThinnerThanTheHaloOrMorePartsThanPlanes) {
  EXPECT_NO_THROW(check_partitioning({13, 2, 2, 2}));  // 4 slabs of >= 3 planes, halo 2
  try {
    check_partitioning({13, 3, 2, 3});  // 6 slabs of 2 planes, halo 3
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "depth 13 in 6 partitions gives slabs of 2 plane(s), thinner than the halo of 3 planes (kernel 7); "
                 "use at most 4 partitions or a deeper volume");
  }
  EXPECT_THROW(check_partitioning({3, 2, 2, 1}), UsageError);
  EXPECT_EQ(Partitioning({13, 3, 2, 1}).owner(5), 2);
}

TEST(Slabs, HalosComeFromEachNeighbourButNotBeyondTheEnds) {
  EXPECT_EQ(halos_received(0, 1, 1), 0);  // the whole volume
  EXPECT_EQ(halos_received(0, 2, 4), 3);  // slabs 0, 1 of 4: 0 gets one, 1 gets two
  EXPECT_EQ(halos_received(2, 2, 4), 3);
  EXPECT_EQ(halos_received(1, 2, 4), 4);
  EXPECT_EQ(halos_received(0, 4, 4), 6);  // 3 boundaries, 2 halos each
}

TEST(Slabs, OverlapIsInEffectOnlyWhereItCanPay) {
  EXPECT_EQ(overlap_not_in_effect_reason({64, 2, 1, 1}, 3), "");
  EXPECT_EQ(overlap_not_in_effect_reason({64, 1, 1, 1}, 3), "one partition: there is no halo to exchange");
  EXPECT_EQ(overlap_not_in_effect_reason({64, 2, 1, 0}, 1), "kernel 1 needs no halo");
  EXPECT_EQ(overlap_not_in_effect_reason({16, 2, 1, 1}, 3),
            "slabs of 8 plane(s) are thinner than 3 kernel widths (9 planes): the interior is too short to hide "
            "the transfer; ran naive");
  EXPECT_EQ(overlap_not_in_effect_reason({18, 2, 1, 1}, 3), "");
}

TEST(SeededTensor, AnyRegionEqualsTheWholeTensorThereAndZeroBeyond) {
  const VolumeShape shape{2, 3, 5, 4, 3};
  const int64_t hw = 12;
  std::vector<float> whole(static_cast<size_t>(2 * 3 * 5 * hw));
  fill_planes(kernels::cpu::dense_view(whole.data(), 5, 3, 4, 3), shape, 0, 42, TensorTag::kInput, 1.0f);
  std::vector<float> part(static_cast<size_t>(2 * 3 * 4 * hw), -7.0f);
  fill_planes(kernels::cpu::dense_view(part.data(), 4, 3, 4, 3), shape, 3, 42, TensorTag::kInput, 1.0f);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t p = 0; p < 4; ++p) {
        for (int64_t i = 0; i < hw; ++i) {
          const float got = part[static_cast<size_t>(((n * 3 + c) * 4 + p) * hw + i)];
          const float want = 3 + p < 5 ? whole[static_cast<size_t>(((n * 3 + c) * 5 + 3 + p) * hw + i)] : 0.0f;
          ASSERT_EQ(got, want) << n << " " << c << " " << p << " " << i;
        }
      }
    }
  }
  // Values lie in [-scale, scale) and differ between tensors and seeds.
  for (uint64_t i = 0; i < 1000; ++i) {
    const float v = seeded_value(1, TensorTag::kWeight, i, 0.5f);
    ASSERT_GE(v, -0.5f);
    ASSERT_LT(v, 0.5f);
  }
  EXPECT_NE(seeded_value(1, TensorTag::kWeight, 0, 1), seeded_value(1, TensorTag::kInput, 0, 1));
  EXPECT_NE(seeded_value(1, TensorTag::kWeight, 0, 1), seeded_value(2, TensorTag::kWeight, 0, 1));
}

TEST(BackgroundTask, RunsTasksInTurnAndRethrowsTheirErrors) {
  BackgroundTask task;
  int value = 0;
  task.start([&] { value = 1; });
  task.wait();
  EXPECT_EQ(value, 1);
  task.start([] { throw std::runtime_error("task failed"); });
  EXPECT_THROW(task.wait(), std::runtime_error);
  task.start([&] { value = 2; });  // usable again after an error
  task.wait();
  EXPECT_EQ(value, 2);
}

// The overlapped variant's calls (overlap_calls) run with the CPU kernels on
// one slab's padded tensors give what the naive variant's whole-slab calls
// give: y, dx and dw, for slabs from r planes up, with and without each
// neighbour (a missing neighbour's halo planes zero, as the layers keep
// them). Every call reads exactly 2r planes more than it writes, inside the
// padded tensor, and writes inside the slab: what cuDNN runs on the views as
// they are (kernels/cuda/conv3d.h's direct form). Outputs start as NaN, so
// a plane no call writes fails.
TEST(Slabs, OverlapCallsGiveTheWholeSlabsConvolutions) {
  namespace kc = kernels::cpu;
  using Pass = OverlapCall::Pass;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int cases = 0;
  for (int k : {3, 5}) {
    const int64_t r = k / 2;
    for (int64_t L : {r, 2 * r - 1, 2 * r, 2 * r + 1, 3 * r + 2, int64_t{9}}) {
      for (int neighbours = 0; neighbours < 4; ++neighbours) {
        const bool top = (neighbours & 1) != 0, bottom = (neighbours & 2) != 0;
        SCOPED_TRACE(testing::Message() << "k=" << k << " L=" << L << " top=" << top << " bottom=" << bottom);
        const kc::Conv3dGeometry g{2, 3, 2, 3, 4, k};
        const int64_t hw = g.height * g.width, padded = L + 2 * r;
        // Padded x [N][C_in][L + 2r] and dy [N][C_out][L + 2r]; halo planes
        // drawn where a neighbour sends them, zero otherwise.
        const auto tensor = [&](int64_t channels) {
          std::vector<float> t(static_cast<size_t>(g.batch * channels * padded * hw));
          for (int64_t row = 0; row < g.batch * channels; ++row) {
            for (int64_t p = 0; p < padded; ++p) {
              const bool zero = (p < r && !top) || (p >= r + L && !bottom);
              for (int64_t i = 0; i < hw; ++i) t[static_cast<size_t>((row * padded + p) * hw + i)] = zero ? 0.0f : value(rng);
            }
          }
          return t;
        };
        std::vector<float> x = tensor(g.c_in), dy = tensor(g.c_out);
        std::vector<float> w(static_cast<size_t>(g.c_out * g.c_in * k * k * k));
        for (float& e : w) e = value(rng);
        std::vector<float> ws(kc::conv3d_workspace_floats(g));
        const kc::ConstPlaneView xw = kc::dense_view<const float>(x.data(), padded, g.c_in, g.height, g.width);
        const kc::ConstPlaneView dyw = kc::dense_view<const float>(dy.data(), padded, g.c_out, g.height, g.width);
        const kc::ConstPlaneView dy_own = kc::plane_range(dyw, r, L, g.height, g.width);
        const size_t y_size = static_cast<size_t>(g.batch * g.c_out * L * hw);
        const size_t dx_size = static_cast<size_t>(g.batch * g.c_in * L * hw);
        // The naive variant's calls (cpu_layer.cc, cuda_layer.cc).
        std::vector<float> y_ref(y_size), dx_ref(dx_size), dw_ref(w.size());
        kc::conv3d_forward(g, xw, w.data(), kc::dense_view(y_ref.data(), L, g.c_out, g.height, g.width), r, false,
                           ws.data());
        kc::conv3d_backward_data(g, dyw, w.data(), kc::dense_view(dx_ref.data(), L, g.c_in, g.height, g.width), -r,
                                 false, ws.data());
        kc::conv3d_backward_filter(g, xw, dy_own, dw_ref.data(), r, false, ws.data());
        // The overlapped variant's, in order.
        const float nan = std::nanf("");
        std::vector<float> y(y_size, nan), dx(dx_size, nan), dw(w.size(), nan);
        const kc::PlaneView yv = kc::dense_view(y.data(), L, g.c_out, g.height, g.width);
        const kc::PlaneView dxv = kc::dense_view(dx.data(), L, g.c_in, g.height, g.width);
        bool after[3] = {false, false, false};  // a pass's calls after its halo come last in it
        int last_pass = 0;
        for (const OverlapCall& c : overlap_calls(L, r, top, bottom, true)) {
          const int pass = static_cast<int>(c.pass);
          EXPECT_GE(pass, last_pass) << "forward, then the data and weight gradients";
          last_pass = pass == static_cast<int>(Pass::kFilter) ? static_cast<int>(Pass::kData) : pass;
          EXPECT_TRUE(c.after_halo || !after[pass]);
          after[pass] = after[pass] || c.after_halo;
          EXPECT_GE(c.in_first, -r);
          EXPECT_LE(c.in_first + c.in_planes, L + r);
          EXPECT_GE(c.out_first, 0);
          EXPECT_LE(c.out_first + c.out_planes, L);
          EXPECT_GT(c.out_planes, 0);
          EXPECT_EQ(c.in_planes, c.out_planes + 2 * r);
          EXPECT_EQ(c.d_offset, c.pass == Pass::kData ? -r : r);
          // Before the halo, a call reads no neighbour's planes.
          const bool reads_halo = (top && c.in_first < 0) || (bottom && c.in_first + c.in_planes > L);
          if (c.pass == Pass::kFilter) {
            EXPECT_FALSE(c.after_halo) << "x's halo arrived in the forward pass";
          } else {
            EXPECT_EQ(c.after_halo, reads_halo);
          }
          switch (c.pass) {
            case Pass::kForward:
              kc::conv3d_forward(g, kc::plane_range(xw, c.in_first + r, c.in_planes, g.height, g.width), w.data(),
                                 kc::plane_range(yv, c.out_first, c.out_planes, g.height, g.width), c.d_offset,
                                 false, ws.data());
              break;
            case Pass::kData:
              kc::conv3d_backward_data(g, kc::plane_range(dyw, c.in_first + r, c.in_planes, g.height, g.width),
                                       w.data(), kc::plane_range(dxv, c.out_first, c.out_planes, g.height, g.width),
                                       c.d_offset, false, ws.data());
              break;
            case Pass::kFilter:
              kc::conv3d_backward_filter(g, kc::plane_range(xw, c.in_first + r, c.in_planes, g.height, g.width),
                                         kc::plane_range(dy_own, c.out_first, c.out_planes, g.height, g.width),
                                         dw.data(), c.d_offset, false, ws.data());
              break;
          }
        }
        const auto expect_near = [](const std::vector<float>& got, const std::vector<float>& want, const char* what) {
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            // fp32 sums of at most C_in * k^3 = 375 products of values in
            // [-1, 1] (dw: N * L * H * W more terms), in another order.
            ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << what << " element " << i;
          }
        };
        expect_near(y, y_ref, "y");
        expect_near(dx, dx_ref, "dx");
        expect_near(dw, dw_ref, "dw");
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 48);
}

TEST(Slabs, OverlapCallsWithoutBackwardAreTheForwardOnes) {
  const std::vector<OverlapCall> forward = overlap_calls(20, 1, true, true, false);
  ASSERT_EQ(forward.size(), 3u);  // the interior, then the top and bottom r planes
  for (const OverlapCall& c : forward) EXPECT_EQ(c.pass, OverlapCall::Pass::kForward);
  EXPECT_FALSE(forward[0].after_halo);
  EXPECT_EQ(forward[0].out_first, 1);
  EXPECT_EQ(forward[0].out_planes, 18);
  EXPECT_EQ(overlap_calls(20, 1, true, true, true).size(), 7u);  // + the data gradient's three, the filter's one
  // No neighbour: one call a pass, the naive one.
  const std::vector<OverlapCall> alone = overlap_calls(20, 2, false, false, true);
  ASSERT_EQ(alone.size(), 3u);
  EXPECT_EQ(alone[0].in_first, -2);
  EXPECT_EQ(alone[0].in_planes, 24);
  EXPECT_FALSE(alone[1].after_halo);
}

}  // namespace
}  // namespace perflab::halo_conv
