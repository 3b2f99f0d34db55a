// The partitioned layer against the unpartitioned convolution: forward
// output, input gradient and weight gradient for 1 to 4 slabs per process,
// both variants, k = 3 and 5, odd channel counts, a depth no partition
// count divides. Discovered by ctest on one process, and run again whole
// under `mpirun -np 2` and `-np 3` (tests/CMakeLists.txt:
// halo_conv_mpi_np*), where the slabs are spread over the ranks.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "base/error.h"
#include "kernels/cpu/bf16.h"
#include "kernels/half_precision.h"
#include "workloads/halo_conv/cpu_layer.h"
#include "workloads/halo_conv/gate.h"
#include "workloads/halo_conv/halo_conv_benchmark.h"
#include "tests/workloads/halo_conv/odd_layer.h"

namespace perflab::halo_conv {
namespace {

namespace kc = kernels::cpu;

collectives::Communicator& world() {
  static std::unique_ptr<collectives::Communicator> comm = collectives::make_world_communicator();
  return *comm;
}

/// The whole volume's forward output, input gradient and weight gradient.
struct Whole {
  std::vector<float> y, dx, dw;
};

/// With `c.bf16`, of the same bf16-rounded inputs (the weights given are the layer's).
Whole whole_volume(const LayerConfig& c, const std::vector<float>& w, uint64_t seed) {
  const kc::Conv3dGeometry& g = c.geometry;
  const VolumeShape in = input_shape(c), out = output_shape(c);
  const int64_t hw = g.height * g.width;
  std::vector<float> x(static_cast<size_t>(g.batch * g.c_in * c.depth * hw));
  std::vector<float> dy(static_cast<size_t>(g.batch * g.c_out * c.depth * hw));
  fill_planes(kc::dense_view(x.data(), c.depth, g.c_in, g.height, g.width), in, 0, seed, TensorTag::kInput, 1.0f);
  fill_planes(kc::dense_view(dy.data(), c.depth, g.c_out, g.height, g.width), out, 0, seed, TensorTag::kOutputGrad,
              1.0f);
  if (c.bf16) {
    kc::round_to_bf16(static_cast<int64_t>(x.size()), x.data(), x.data());
    kc::round_to_bf16(static_cast<int64_t>(dy.size()), dy.data(), dy.data());
  }
  std::vector<float> ws(kc::conv3d_workspace_floats(g));
  Whole whole{std::vector<float>(dy.size()), std::vector<float>(x.size()), std::vector<float>(w.size())};
  const auto xv = kc::dense_view(static_cast<const float*>(x.data()), c.depth, g.c_in, g.height, g.width);
  const auto dyv = kc::dense_view(static_cast<const float*>(dy.data()), c.depth, g.c_out, g.height, g.width);
  kc::conv3d_forward(g, xv, w.data(), kc::dense_view(whole.y.data(), c.depth, g.c_out, g.height, g.width), 0, false,
                     ws.data());
  kc::conv3d_backward_data(g, dyv, w.data(), kc::dense_view(whole.dx.data(), c.depth, g.c_in, g.height, g.width), 0,
                           false, ws.data());
  kc::conv3d_backward_filter(g, xv, dyv, whole.dw.data(), 0, false, ws.data());
  return whole;
}

/// Largest |slab - whole at the slab's planes| relative to the whole's largest value.
double slab_error(kc::ConstPlaneView slab, const std::vector<float>& whole, int64_t first, int64_t depth,
                  int64_t batch, int64_t channels, int64_t hw) {
  double diff = 0, scale = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t p = 0; p < slab.planes; ++p) {
        for (int64_t i = 0; i < hw; ++i) {
          const float got = slab.data[n * slab.batch_stride + c * slab.channel_stride + p * hw + i];
          const float want = whole[static_cast<size_t>(((n * channels + c) * depth + first + p) * hw + i)];
          diff = std::max(diff, static_cast<double>(std::abs(got - want)));
          scale = std::max(scale, static_cast<double>(std::abs(want)));
        }
      }
    }
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(HaloLayer, EveryPartitioningAndVariantEqualsTheWholeConvolution) {
  collectives::Communicator& comm = world();
  int cases = 0;
  for (int k : {3, 5}) {
    for (int per_rank = 1; per_rank <= 4; ++per_rank) {
      for (bool overlap : {false, true}) {
        const LayerConfig c = odd_layer(k, per_rank, overlap);
        const int total = comm.size() * per_rank;
        SCOPED_TRACE(fmt::format("k={} partitions={} ({} rank(s)) halo={}", k, total, comm.size(),
                                 overlap ? "overlap" : "naive"));
        if (c.depth / total < k / 2) {  // a slab thinner than the halo is refused
          EXPECT_THROW(CpuHaloLayer(c, comm), UsageError);
          continue;
        }
        const uint64_t seed = 100 + static_cast<uint64_t>(k * 10 + per_rank);
        CpuHaloLayer layer(c, comm);
        layer.fill(seed);
        layer.step();
        layer.step();  // a second step must not accumulate anything of the first
        const Whole whole = whole_volume(c, layer.weights(), seed);
        const kc::Conv3dGeometry& g = c.geometry;
        const int64_t hw = g.height * g.width;
        for (size_t j = 0; j < layer.my_slabs().size(); ++j) {
          const Slab s = layer.my_slabs()[j];
          EXPECT_LT(slab_error(layer.output(j), whole.y, s.first, c.depth, g.batch, g.c_out, hw), 1e-5)
              << "output of slab at plane " << s.first;
          EXPECT_LT(slab_error(layer.input_grad(j), whole.dx, s.first, c.depth, g.batch, g.c_in, hw), 1e-5)
              << "input gradient of slab at plane " << s.first;
        }
        const kc::ConstPlaneView dw{layer.weight_grad().data(), 1, static_cast<int64_t>(whole.dw.size()),
                                    static_cast<int64_t>(whole.dw.size())};
        EXPECT_LT(slab_error(dw, whole.dw, 0, 1, 1, 1, static_cast<int64_t>(whole.dw.size())), 1e-5)
            << "weight gradient";
        const CorrectnessReport gate = check_against_whole(slab_results(layer), comm, seed, kFp32Tolerance);
        EXPECT_TRUE(gate.passed) << gate.detail;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 8);
}

/// Elements of `v` (batch x channels rows) that are not bf16 values.
int64_t not_bf16(kc::ConstPlaneView v, int64_t batch, int64_t channels, int64_t hw) {
  int64_t count = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < v.planes * hw; ++i) {
        const float e = v.data[n * v.batch_stride + c * v.channel_stride + i];
        count += from_bf16(to_bf16(e)) != e ? 1 : 0;
      }
    }
  }
  return count;
}

// precision=bf16 on the cpu backend: bf16 numbers where the cuda backend
// stores them, fp32 arithmetic. Its error against the fp32 convolution of
// the same bf16 inputs is the roundings of stored results (gate.h): on the
// cpu backend an output or input-gradient element is rounded at most 3
// times (no staged block), each at most 2^-8 of a partial sum; the weight
// gradient at most 3 times per partition. The check below allows 3
// roundings at the whole's largest value for y and dx, and the gate's
// bf16_tolerance for dw; that the error exceeds fp32's tolerance shows the
// rounding is done at all.
TEST(HaloLayer, Bf16EmulationStoresBf16AndStaysWithinItsRoundingBound) {
  collectives::Communicator& comm = world();
  int cases = 0;
  for (int k : {3, 5}) {
    for (int per_rank = 1; per_rank <= 4; ++per_rank) {
      for (bool overlap : {false, true}) {
        LayerConfig c = odd_layer(k, per_rank, overlap);
        c.bf16 = true;
        const int total = comm.size() * per_rank;
        if (c.depth / total < k / 2) continue;
        SCOPED_TRACE(fmt::format("bf16 k={} partitions={} halo={}", k, total, overlap ? "overlap" : "naive"));
        const uint64_t seed = 300 + static_cast<uint64_t>(k * 10 + per_rank);
        CpuHaloLayer layer(c, comm);
        layer.fill(seed);
        layer.step();
        layer.step();
        const kc::Conv3dGeometry& g = c.geometry;
        const int64_t hw = g.height * g.width;
        for (float w : layer.weights()) ASSERT_EQ(from_bf16(to_bf16(w)), w) << "weights are bf16 values";
        const Whole whole = whole_volume(c, layer.weights(), seed);
        const double three_roundings = 3.0 / 256;
        for (size_t j = 0; j < layer.my_slabs().size(); ++j) {
          const Slab s = layer.my_slabs()[j];
          EXPECT_EQ(not_bf16(layer.output(j), g.batch, g.c_out, hw), 0);
          EXPECT_EQ(not_bf16(layer.input_grad(j), g.batch, g.c_in, hw), 0);
          EXPECT_LT(slab_error(layer.output(j), whole.y, s.first, c.depth, g.batch, g.c_out, hw), three_roundings);
          EXPECT_LT(slab_error(layer.input_grad(j), whole.dx, s.first, c.depth, g.batch, g.c_in, hw), three_roundings);
        }
        const CorrectnessReport gate = check_against_whole(slab_results(layer), comm, seed, bf16_tolerance(total));
        EXPECT_TRUE(gate.passed) << gate.detail;
        EXPECT_FALSE(check_against_whole(slab_results(layer), comm, seed, kFp32Tolerance).passed)
            << "bf16 results within fp32's tolerance: the rounding is not done";
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 8);
}

TEST(HaloLayer, TheBf16GateFailsOnAnotherSeedsInput) {
  collectives::Communicator& comm = world();
  LayerConfig c = odd_layer(3, 2, true);
  c.bf16 = true;
  CpuHaloLayer layer(c, comm);
  layer.fill(7);
  layer.step();
  EXPECT_TRUE(check_against_whole(slab_results(layer), comm, 7, bf16_tolerance(comm.size() * 2)).passed);
  EXPECT_FALSE(check_against_whole(slab_results(layer), comm, 8, bf16_tolerance(comm.size() * 2)).passed);
}

// The cuda backend's plan, on the host: bf16 stores 2 bytes a value (half
// the bytes and the device memory of fp32's TF32 plan) and names its
// arithmetic; the bf16 tolerance grows with the partitions past 7.
TEST(HaloLayer, TheDevicePlanFollowsThePrecision) {
  HaloConvConfig config;
  config.layer = odd_layer(3, 2, true);
  config.ranks = 2;
  const StepPlan tf32 = halo_conv_device_plan(config);
  config.layer.bf16 = true;
  const StepPlan bf16 = halo_conv_device_plan(config);
  EXPECT_EQ(tf32.precision, "tf32");
  EXPECT_EQ(tf32.work.flops_precision, "tf32");
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_EQ(bf16.work.flops_precision, "bf16");
  EXPECT_GT(tf32.work.bytes, 0);
  EXPECT_DOUBLE_EQ(bf16.work.bytes, tf32.work.bytes / 2);
  EXPECT_DOUBLE_EQ(bf16.device_bytes, tf32.device_bytes / 2);
  EXPECT_DOUBLE_EQ(bf16.work.flops, tf32.work.flops);
  EXPECT_DOUBLE_EQ(bf16_tolerance(1), 1.0 / 32);
  EXPECT_DOUBLE_EQ(bf16_tolerance(2), 1.0 / 32);
  EXPECT_DOUBLE_EQ(bf16_tolerance(4), 9.0 / 256);
  EXPECT_GT(bf16_tolerance(16), bf16_tolerance(4));
}

TEST(HaloLayer, TheGateFailsOnAnotherSeedsInput) {
  collectives::Communicator& comm = world();
  const LayerConfig c = odd_layer(3, 2, true);
  CpuHaloLayer layer(c, comm);
  layer.fill(7);
  layer.step();
  const CorrectnessReport gate = check_against_whole(slab_results(layer), comm, 8, kFp32Tolerance);
  EXPECT_FALSE(gate.passed);
  EXPECT_NE(gate.detail.find("differ from the unpartitioned convolution"), std::string::npos) << gate.detail;
}

TEST(HaloLayer, ForwardOnlyStepsLeaveTheGradientsAlone) {
  collectives::Communicator& comm = world();
  LayerConfig c = odd_layer(3, 2, true);
  c.backward = false;
  CpuHaloLayer layer(c, comm);
  layer.fill(3);
  layer.step();
  const Whole whole = whole_volume(c, layer.weights(), 3);
  const int64_t hw = c.geometry.height * c.geometry.width;
  for (size_t j = 0; j < layer.my_slabs().size(); ++j) {
    EXPECT_LT(slab_error(layer.output(j), whole.y, layer.my_slabs()[j].first, c.depth, c.geometry.batch,
                         c.geometry.c_out, hw),
              1e-5);
  }
  EXPECT_TRUE(check_against_whole(slab_results(layer), comm, 3, kFp32Tolerance).passed);
  EXPECT_TRUE(layer.weight_grad() == std::vector<float>(layer.weight_grad().size(), 0.0f));
}

TEST(HaloLayer, HaloBytesCountEveryHaloFilled) {
  collectives::Communicator& comm = world();
  const LayerConfig c = odd_layer(5, 2, false);  // r = 2
  CpuHaloLayer layer(c, comm);
  double bytes = layer.halo_bytes_per_step();
  comm.all_reduce_host(&bytes, 1, collectives::ReduceOp::kSum);
  const int total = comm.size() * c.per_rank;
  // Every inner boundary fills two halos (one each way) of r planes, for
  // the input and for the output gradient.
  const double per_halo = static_cast<double>(c.geometry.batch * 2 * c.geometry.height * c.geometry.width) * 4;
  EXPECT_DOUBLE_EQ(bytes, 2.0 * (total - 1) * per_halo * static_cast<double>(c.geometry.c_in + c.geometry.c_out));
}

}  // namespace
}  // namespace perflab::halo_conv
