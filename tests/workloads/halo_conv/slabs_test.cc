// Partitioning of the volume (slabs.h), the seeded tensors and the
// background task: pure parts of halo_conv.
#include <gtest/gtest.h>

#include <stdexcept>

#include "base/error.h"
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

}  // namespace
}  // namespace perflab::halo_conv
