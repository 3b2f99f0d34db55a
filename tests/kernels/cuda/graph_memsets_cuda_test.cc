// A captured graph's memset nodes as kernel nodes (graph_memsets.h): the
// plan of stores on the host, and on the GPU the same bytes written in the
// same order as the memsets they replace, none left. Exact: bytes are set,
// not computed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/graph_memsets.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

cudaMemsetParams memset_params(uintptr_t dst, unsigned value, unsigned element_size, size_t width, size_t height = 1,
                               size_t pitch = 0) {
  cudaMemsetParams p{};
  p.dst = reinterpret_cast<void*>(dst);
  p.value = value;
  p.elementSize = element_size;
  p.width = width;
  p.height = height;
  p.pitch = pitch;
  return p;
}

TEST(GraphMemsets, PlanTakesTheWidestStoreTheAddressPitchAndRowAllow) {
  MemsetPlan p = plan_memset(memset_params(4096, 0x01020304u, 4, 64));  // 256 aligned bytes
  EXPECT_EQ(p.store_bytes, 16u);
  EXPECT_EQ(p.stores_per_row, 16u);
  EXPECT_EQ(p.rows, 1u);
  for (unsigned w : p.pattern) EXPECT_EQ(w, 0x01020304u);
  p = plan_memset(memset_params(4096 + 4, 7, 4, 3));  // 4-byte aligned only
  EXPECT_EQ(p.store_bytes, 4u);
  EXPECT_EQ(p.stores_per_row, 3u);
  p = plan_memset(memset_params(4096, 0x1AB, 1, 7));  // a byte value: its low byte, repeated
  EXPECT_EQ(p.store_bytes, 1u);
  EXPECT_EQ(p.stores_per_row, 7u);
  EXPECT_EQ(p.pattern[0], 0xABABABABu);
  p = plan_memset(memset_params(4096, 0x1ABCD, 2, 8));  // 16 bytes of 16-bit elements
  EXPECT_EQ(p.store_bytes, 16u);
  EXPECT_EQ(p.pattern[3], 0xABCDABCDu);
  p = plan_memset(memset_params(4096, 0, 4, 8, 3, 48));  // rows of 32 bytes, 48 apart
  EXPECT_EQ(p.store_bytes, 16u);
  EXPECT_EQ(p.stores_per_row, 2u);
  EXPECT_EQ(p.rows, 3u);
  p = plan_memset(memset_params(4096, 0, 4, 8, 3, 36));  // rows 36 apart: 4-byte stores
  EXPECT_EQ(p.store_bytes, 4u);
  EXPECT_EQ(p.stores_per_row, 8u);
}

size_t count_nodes(cudaGraph_t graph, cudaGraphNodeType type) {
  size_t found = 0;
  for (cudaGraphNode_t node : graph_nodes(graph)) {
    cudaGraphNodeType t{};
    PERFLAB_CUDA_CHECK(cudaGraphNodeGetType(node, &t));
    found += t == type;
  }
  return found;
}

// Five memset nodes in a chain over one buffer (32-bit, 2D 32-bit, 16-bit,
// byte and 2D byte; every store width), each overlapping the one before:
// replaced, the graph holds none and the same chain of edges, and a launch
// leaves the bytes the memsets in that order would.
TEST(GraphMemsets, ReplacedNodesWriteTheSameBytesInTheSameOrder) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr size_t kBytes = 1000;
  DeviceBuffer<uint8_t> buffer(std::vector<uint8_t>(kBytes, 0x5A));
  const auto base = reinterpret_cast<uintptr_t>(buffer.data());
  const std::vector<cudaMemsetParams> memsets = {
      memset_params(base + 16, 0x01020304u, 4, 48),         // bytes 16..207: 16-byte stores
      memset_params(base + 200, 0x0A0B0C0Du, 4, 9, 3, 52),  // three rows of 36 bytes, 52 apart: 4-byte stores
      memset_params(base + 202, 0xBEEFu, 2, 41),            // 202..283: 2-aligned only, byte stores
      memset_params(base + 281, 0x77u, 1, 33),              // 281..313: byte stores
      memset_params(base + 320, 0xC3u, 1, 48, 5, 64)};      // five rows of 48 bytes, 64 apart: 16-byte stores
  const unsigned stores[] = {16, 4, 1, 1, 16};
  for (size_t i = 0; i < memsets.size(); ++i) EXPECT_EQ(plan_memset(memsets[i]).store_bytes, stores[i]) << i;
  std::vector<uint8_t> expected(kBytes, 0x5A);
  for (const cudaMemsetParams& p : memsets) {
    const size_t start = reinterpret_cast<uintptr_t>(p.dst) - base;
    for (size_t row = 0; row < p.height; ++row) {
      for (size_t i = 0; i < p.width * p.elementSize; ++i) {
        expected[start + row * p.pitch + i] = static_cast<uint8_t>(p.value >> (8 * (i % p.elementSize)));
      }
    }
  }
  cudaGraph_t graph = nullptr;
  PERFLAB_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t last = nullptr;
  for (const cudaMemsetParams& p : memsets) {
    cudaGraphNode_t node = nullptr;
    PERFLAB_CUDA_CHECK(cudaGraphAddMemsetNode(&node, graph, last == nullptr ? nullptr : &last, last == nullptr ? 0 : 1,
                                              &p));
    last = node;
  }
  EXPECT_EQ(replace_memset_nodes(graph), 5);
  EXPECT_EQ(count_nodes(graph, cudaGraphNodeTypeMemset), 0u);
  EXPECT_EQ(count_nodes(graph, cudaGraphNodeTypeKernel), 5u);
  // Still a chain: four edges, each node but the first after one other.
  size_t edges = 0;
  PERFLAB_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  EXPECT_EQ(edges, 4u);
  size_t roots = 0;
  PERFLAB_CUDA_CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  EXPECT_EQ(roots, 1u);
  cudaGraphExec_t exec = nullptr;
  PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const Stream stream;
  PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::vector<uint8_t> got(kBytes);
  PERFLAB_CUDA_CHECK(cudaMemcpy(got.data(), buffer.data(), kBytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(got[i], expected[i]) << "byte " << i;
}

// The real path: memsets captured from a stream (a byte memset and a 2D
// one) around a copy, ended by GraphExec (which replaces them by default),
// replayed twice: the bytes of the eager calls.
TEST(GraphMemsets, ACapturedStepWithMemsetsReplaysTheEagerBytes) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  constexpr size_t kBytes = 777;
  DeviceBuffer<uint8_t> buffer(std::vector<uint8_t>(kBytes, 0x11)), copy(std::vector<uint8_t>(kBytes, 0));
  const Stream stream;
  const auto step = [&] {
    PERFLAB_CUDA_CHECK(cudaMemsetAsync(buffer.data() + 5, 0xE1, 301, stream.get()));
    PERFLAB_CUDA_CHECK(cudaMemset2DAsync(buffer.data() + 320, 64, 0x2C, 48, 6, stream.get()));
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(copy.data(), buffer.data(), kBytes, cudaMemcpyDeviceToDevice, stream.get()));
  };
  step();
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::vector<uint8_t> eager(kBytes);
  PERFLAB_CUDA_CHECK(cudaMemcpy(eager.data(), copy.data(), kBytes, cudaMemcpyDeviceToHost));
  PERFLAB_CUDA_CHECK(cudaMemset(buffer.data(), 0x11, kBytes));
  PERFLAB_CUDA_CHECK(cudaMemset(copy.data(), 0, kBytes));

  begin_capture(stream.get());
  step();
  GraphExec graph;
  graph.end_capture(stream.get());
  for (int replay = 0; replay < 2; ++replay) graph.launch(stream.get());
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::vector<uint8_t> replayed(kBytes);
  PERFLAB_CUDA_CHECK(cudaMemcpy(replayed.data(), copy.data(), kBytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(eager.data(), replayed.data(), kBytes));
  if (std::getenv("PERFLAB_GRAPH_MEMSETS") == nullptr) {
    EXPECT_TRUE(graph_memsets_as_kernels()) << "the default, with PERFLAB_GRAPH_MEMSETS unset";
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
