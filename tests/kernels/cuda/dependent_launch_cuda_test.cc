// Programmatic dependent launch (kernels/cuda/dependent_launch.*).
// Without a device: the thread's setting nests and restores, and a machine
// without a device says "unsupported". With one, a query (of it, or of a
// device that does not exist) leaves no error behind for the next launch
// to report. On a GPU (skipped otherwise): a chain of
// transposes, each reading what the one before wrote, launched with
// dependent launches, eagerly and from a captured graph, gives back the
// source's bits (no tolerance: the kernel moves bits); and the graph
// captured with dependent launches on holds programmatic edges between
// those kernels (none with them off): the setting changes what runs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "harness/device.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/transpose.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

TEST(DependentLaunches, TheThreadsSettingNestsAndRestores) {
  EXPECT_FALSE(dependent_launches());
  {
    const DependentLaunches on(true);
    EXPECT_TRUE(dependent_launches());
    {
      const DependentLaunches off(false);
      EXPECT_FALSE(dependent_launches());
    }
    EXPECT_TRUE(dependent_launches());
  }
  EXPECT_FALSE(dependent_launches());
}

TEST(DependentLaunches, SupportFollowsTheComputeCapabilityAndLeavesNoError) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available) {  // (without a driver every runtime call fails: no error state to check)
    EXPECT_FALSE(device_supports_dependent_launch(0)) << "no device: " << probe.reason;
    return;
  }
  (void)cudaGetLastError();
  const bool supported = device_supports_dependent_launch(0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the query left an error for the next launch to report";
  EXPECT_FALSE(device_supports_dependent_launch(1 << 20)) << "a device that does not exist";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "an invalid device's query left an error behind";
  int major = 0;
  PERFLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  EXPECT_EQ(supported, major >= 9);
}

/// `a` [rows, cols] transposed into `b` and back, `round_trips` times, on
/// `stream`: each launch reads what the one before it wrote.
void transpose_back_and_forth(uint32_t* a, uint32_t* b, int64_t rows, int64_t cols, int round_trips,
                              cudaStream_t stream) {
  const TransposeBatch there = transpose_batches({{a, b, rows, cols}}, 4).front();
  const TransposeBatch back = transpose_batches({{b, a, cols, rows}}, 4).front();
  for (int i = 0; i < round_trips; ++i) {
    TransposeMatrices::run(there, stream);
    TransposeMatrices::run(back, stream);
  }
}

/// The edges of `graph` whose type is programmatic. (CUDA 13's
/// cudaGraphGetEdges takes the edges' data; 12.x named that form _v2.)
size_t programmatic_edges(cudaGraph_t graph) {
#if CUDART_VERSION >= 13000
  const auto get_edges = cudaGraphGetEdges;
#else
  const auto get_edges = cudaGraphGetEdges_v2;
#endif
  size_t count = 0;
  PERFLAB_CUDA_CHECK(get_edges(graph, nullptr, nullptr, nullptr, &count));
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> data(count);
  PERFLAB_CUDA_CHECK(get_edges(graph, from.data(), to.data(), data.data(), &count));
  size_t programmatic = 0;
  for (const cudaGraphEdgeData& e : data) programmatic += e.type == cudaGraphDependencyTypeProgrammatic ? 1 : 0;
  return programmatic;
}

TEST(DependentLaunchCuda, AChainOfDependentKernelsKeepsItsBitsEagerAndGraphed) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  if (!device_supports_dependent_launch(0)) GTEST_SKIP() << "compute capability below 9.0";
  constexpr int64_t kRows = 333, kCols = 517;  // odd: partial tiles at both edges
  constexpr int kRoundTrips = 32;
  std::vector<uint32_t> source(static_cast<size_t>(kRows * kCols));
  std::mt19937 rng(7);
  for (uint32_t& v : source) v = static_cast<uint32_t>(rng());
  DeviceBuffer<uint32_t> a(source), b(source.size());
  const Stream stream;
  {
    const DependentLaunches on(true);
    transpose_back_and_forth(a.data(), b.data(), kRows, kCols, kRoundTrips, stream.get());
  }
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  ASSERT_EQ(a.download(), source) << "eager chain with dependent launches";

  for (bool on : {true, false}) {
    cudaGraph_t graph = nullptr;
    begin_capture(stream.get());
    {
      const DependentLaunches setting(on);
      transpose_back_and_forth(a.data(), b.data(), kRows, kCols, kRoundTrips, stream.get());
    }
    PERFLAB_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    note_capture_stream(nullptr);
    const size_t edges = programmatic_edges(graph);
    if (on) {
      EXPECT_EQ(edges, size_t{2 * kRoundTrips - 1}) << "every kernel after the first waits programmatically";
    } else {
      EXPECT_EQ(edges, 0u);
    }
    cudaGraphExec_t exec = nullptr;
    PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaGraphDestroy(graph);
    for (int replay = 0; replay < 3; ++replay) PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    cudaGraphExecDestroy(exec);
    ASSERT_EQ(a.download(), source) << "graphed chain, dependent launches " << (on ? "on" : "off");
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
