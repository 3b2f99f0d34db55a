// The cuda backend of halo_conv. Without a device: the registration
// (backends, toggle rules). With a device (skipped otherwise): the CUDA
// layer (cuDNN, slabs on streams, halos by device copies) against the
// unpartitioned convolution on the CPU for 1 to 4 slabs, both variants,
// k = 3 and 5, odd channel counts, a depth no slab count divides, at TF32's
// tolerance; the host-sync count of each step (0 sync-free, one per halo
// exchange otherwise); a step captured in a CUDA graph and replayed gives
// the eager step's results; a gate on another seed's input fails. bf16
// storage (cuDNN's bf16 configuration) the same way at bf16's tolerance,
// with its halo bytes half the fp32 layer's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "collectives/communicator.h"
#include "harness/registry.h"

#ifdef PERFLAB_HALO_CONV_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/host_sync.h"
#include "tests/support/cuda_device.h"
#include "workloads/halo_conv/cuda_layer.h"
#include "workloads/halo_conv/gate.h"
#include "workloads/halo_conv/slabs.h"
#include "tests/workloads/halo_conv/odd_layer.h"
#endif

namespace perflab::halo_conv {
namespace {

TEST(HaloConvCudaRegistration, CudaBackendAndToggleRulesMatchTheBuild) {
  const WorkloadInfo& info = Registry::instance().get("halo_conv");
  const bool has_cuda = std::find(info.backends.begin(), info.backends.end(), Backend::kCuda) != info.backends.end();
#ifdef PERFLAB_HALO_CONV_CUDA
  EXPECT_TRUE(has_cuda);
#else
  EXPECT_FALSE(has_cuda);
#endif
  bool graphs_need_sync_free = false;
  for (const ToggleRule& rule : info.toggle_rules) {
    if (rule.toggle != Toggle::kCudaGraphs) continue;
    // The harness's default (graphs need sync-free), not overridden.
    graphs_need_sync_free = !rule.needs_nothing && (rule.needs ? rule.needs : default_toggle_need(rule.toggle)) ==
                                                       std::optional<Toggle>(Toggle::kSyncFree);
  }
  EXPECT_TRUE(graphs_need_sync_free);
}

#ifdef PERFLAB_HALO_CONV_CUDA

collectives::Communicator& one_process() {
  static std::unique_ptr<collectives::Communicator> comm = collectives::make_single_communicator();
  return *comm;
}

TEST(HaloConvCuda, EverySlabCountAndVariantEqualsTheWholeConvolution) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  int cases = 0;
  for (int k : {3, 5}) {
    for (int per_rank = 1; per_rank <= 4; ++per_rank) {
      for (bool overlap : {false, true}) {
        for (bool sync_free : {true, false}) {
          SCOPED_TRACE(testing::Message() << "k=" << k << " slabs=" << per_rank << " overlap=" << overlap
                                          << " sync_free=" << sync_free);
          const LayerConfig c = odd_layer(k, per_rank, overlap);
          const uint64_t seed = 200 + static_cast<uint64_t>(k * 10 + per_rank);
          CudaHaloLayer layer(c, one_process(), nullptr, sync_free);
          layer.fill(seed);
          for (int step = 0; step < 2; ++step) {
            const int64_t before = kernels::cuda::host_sync_count();
            layer.enqueue();
            EXPECT_EQ(kernels::cuda::host_sync_count() - before, layer.expected_host_syncs());
          }
          EXPECT_EQ(layer.expected_host_syncs(), sync_free ? 0 : 2);
          EXPECT_EQ(layer.halo_bytes_per_step(), CpuHaloLayer(c, one_process()).halo_bytes_per_step());
          const CorrectnessReport gate = check_against_whole(layer.download(), one_process(), seed, kTf32Tolerance);
          EXPECT_TRUE(gate.passed) << gate.detail;
          // What the result's data_gradient facts say: a fallback names its
          // shape and cuDNN's answers; none, nothing.
          const auto [calls, via_forward] = layer.data_gradient_calls();
          EXPECT_LE(via_forward, calls);
          const std::string fallback = layer.data_gradient_fallback();
          EXPECT_EQ(fallback.empty(), via_forward == 0) << fallback;
          if (via_forward > 0) {
            EXPECT_NE(fallback.find("cuDNN "), std::string::npos) << fallback;
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 32);
}

TEST(HaloConvCuda, Bf16EverySlabCountAndVariantEqualsTheWholeConvolution) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  int cases = 0;
  for (int k : {3, 5}) {
    for (int per_rank = 1; per_rank <= 4; ++per_rank) {
      for (bool overlap : {false, true}) {
        SCOPED_TRACE(testing::Message() << "bf16 k=" << k << " slabs=" << per_rank << " overlap=" << overlap);
        LayerConfig c = odd_layer(k, per_rank, overlap);
        c.bf16 = true;
        const uint64_t seed = 400 + static_cast<uint64_t>(k * 10 + per_rank);
        const bool sync_free = per_rank % 2 == 1;  // and the host waiting for each exchange
        CudaHaloLayer layer(c, one_process(), nullptr, sync_free);
        layer.fill(seed);
        layer.enqueue();
        layer.enqueue();  // a second step must not accumulate anything of the first
        // The CPU layer counts fp32 halos; the device moves bf16.
        EXPECT_EQ(2 * layer.halo_bytes_per_step(), CpuHaloLayer(c, one_process()).halo_bytes_per_step());
        const SlabResults got = layer.download();
        const CorrectnessReport gate = check_against_whole(got, one_process(), seed, bf16_tolerance(per_rank));
        EXPECT_TRUE(gate.passed) << gate.detail;
        EXPECT_FALSE(check_against_whole(got, one_process(), seed + 1, bf16_tolerance(per_rank)).passed);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 16);
}

// 4x8 planes (H*W = 32): every plane row of the layer's tensors starts on
// 16 bytes, as the U-Net levels' do (where a call is staged, its plane
// copies move 16 bytes a thread: conv3d_detail::plane_pack; the odd layers
// above have 7x9 planes). Both precisions, both variants, 1 to 4 slabs.
TEST(HaloConvCuda, AlignedPlanesEverySlabCountAndVariantEqualsTheWholeConvolution) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  int cases = 0;
  for (bool bf16 : {false, true}) {
    for (int per_rank = 1; per_rank <= 4; ++per_rank) {
      for (bool overlap : {false, true}) {
        SCOPED_TRACE(testing::Message() << "4x8 planes bf16=" << bf16 << " slabs=" << per_rank
                                        << " overlap=" << overlap);
        LayerConfig c = odd_layer(3, per_rank, overlap);
        c.geometry.height = 4;
        c.geometry.width = 8;
        c.bf16 = bf16;
        const uint64_t seed = 600 + static_cast<uint64_t>(per_rank * 2 + (bf16 ? 1 : 0));
        CudaHaloLayer layer(c, one_process(), nullptr, per_rank % 2 == 0);
        layer.fill(seed);
        layer.enqueue();
        layer.enqueue();  // a second step must not accumulate anything of the first
        // The result's convolution_calls fact: the naive variant's three
        // calls a slab, or overlap_calls' for each slab and its neighbours.
        int64_t want_calls = 0;
        const std::vector<Slab> slabs = split_planes(c.depth, per_rank);
        for (size_t j = 0; j < slabs.size(); ++j) {
          want_calls += overlap ? static_cast<int64_t>(
                                      overlap_calls(slabs[j].planes, 1, j > 0, j + 1 < slabs.size(), true).size())
                                : 3;
        }
        EXPECT_EQ(layer.staged_calls().first, want_calls);
        const double tolerance = bf16 ? bf16_tolerance(per_rank) : kTf32Tolerance;
        const CorrectnessReport gate = check_against_whole(layer.download(), one_process(), seed, tolerance);
        EXPECT_TRUE(gate.passed) << gate.detail;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 16);
}

TEST(HaloConvCuda, AStepCapturedInAGraphGivesTheEagerResults) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "fp32");
    LayerConfig c = odd_layer(3, 3, true);
    c.bf16 = bf16;
    CudaHaloLayer layer(c, one_process(), nullptr, true);
    layer.fill(5);
    auto stream = static_cast<cudaStream_t>(layer.stream());
    layer.enqueue();
    const SlabResults eager = layer.download();
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    kernels::cuda::begin_capture(stream);
    layer.enqueue();
    PERFLAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    const SlabResults replayed = layer.download();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    // The same calls in the same order; cuDNN's weight-gradient algorithms
    // may add in a different order each time, so not bit-identical.
    ASSERT_EQ(eager.storage.size(), replayed.storage.size());
    for (size_t j = 0; j < eager.storage.size(); ++j) {
      ASSERT_EQ(eager.storage[j].size(), replayed.storage[j].size());
      float scale = 0, diff = 0;
      for (size_t i = 0; i < eager.storage[j].size(); ++i) {
        scale = std::max(scale, std::abs(eager.storage[j][i]));
        diff = std::max(diff, std::abs(eager.storage[j][i] - replayed.storage[j][i]));
      }
      // bf16: the two results may round apart by one bf16 step (2^-7 of the value).
      EXPECT_LE(diff, (bf16 ? 1.0f / 128 : 1e-5f) * scale) << "host copy " << j;
    }
    EXPECT_TRUE(check_against_whole(replayed, one_process(), 5, bf16 ? bf16_tolerance(3) : kTf32Tolerance).passed);
  }
}

TEST(HaloConvCuda, TheGateFailsOnAnotherSeedsInput) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudaHaloLayer layer(odd_layer(3, 2, true), one_process(), nullptr, true);
  layer.fill(7);
  layer.enqueue();
  EXPECT_FALSE(check_against_whole(layer.download(), one_process(), 8, kTf32Tolerance).passed);
}

#endif

}  // namespace
}  // namespace perflab::halo_conv
