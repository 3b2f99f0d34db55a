// Memset nodes of a captured graph as kernel nodes (see graph_memsets.h).
#include "kernels/cuda/graph_memsets.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {
namespace {

/// Writes `rows` rows of `stores` stores of `store_bytes` each, the row
/// starts `pitch` bytes apart, every store the same pattern.
__global__ void graph_memset_kernel(unsigned char* dst, size_t pitch, size_t stores, size_t rows,
                                    unsigned store_bytes, uint4 pattern) {
  const size_t total = stores * rows;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < total; i += size_t{gridDim.x} * blockDim.x) {
    const size_t row = rows == 1 ? 0 : i / stores, column = rows == 1 ? i : i % stores;  // no division in 1D
    unsigned char* at = dst + row * pitch + column * store_bytes;
    if (store_bytes == 16) {
      *reinterpret_cast<uint4*>(at) = pattern;
    } else if (store_bytes == 4) {
      *reinterpret_cast<unsigned*>(at) = pattern.x;
    } else {
      *at = static_cast<unsigned char>(pattern.x >> (8 * (column % 4)));
    }
  }
}

}  // namespace

MemsetPlan plan_memset(const cudaMemsetParams& p) {
  MemsetPlan plan;
  // The element's bytes repeated over a 4-byte word (little-endian).
  unsigned word = p.value;
  if (p.elementSize == 1) word = (p.value & 0xffu) * 0x01010101u;
  if (p.elementSize == 2) word = (p.value & 0xffffu) * 0x00010001u;
  for (unsigned& w : plan.pattern) w = word;
  const size_t row_bytes = p.width * p.elementSize;
  const size_t pitch = p.height > 1 ? p.pitch : row_bytes;
  const auto address = reinterpret_cast<uintptr_t>(p.dst);
  const auto fits = [&](size_t bytes) { return address % bytes == 0 && pitch % bytes == 0 && row_bytes % bytes == 0; };
  plan.store_bytes = fits(16) ? 16 : fits(4) ? 4 : 1;
  plan.stores_per_row = row_bytes / plan.store_bytes;
  plan.rows = p.height;
  plan.pitch = pitch;
  return plan;
}

bool graph_memsets_as_kernels() {
  static const bool as_kernels = [] {
    const char* value = std::getenv("PERFLAB_GRAPH_MEMSETS");
    const std::string v = value == nullptr ? "" : value;
    if (v.empty() || v == "kernels") return true;
    if (v == "nodes") return false;
    throw UsageError("PERFLAB_GRAPH_MEMSETS=" + v + ": use kernels (the default: a captured graph's memset nodes "
                     "become kernel nodes) or nodes (the graph as captured)");
  }();
  return as_kernels;
}

std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph) {
  size_t count = 0;
  PERFLAB_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) PERFLAB_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  return nodes;
}

int replace_memset_nodes(cudaGraph_t graph) {
  int replaced = 0;
  for (cudaGraphNode_t node : graph_nodes(graph)) {
    cudaGraphNodeType type{};
    PERFLAB_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeMemset) continue;
    cudaMemsetParams p{};
    PERFLAB_CUDA_CHECK(cudaGraphMemsetNodeGetParams(node, &p));
    // The edges are read with their data (filling the lists without it
    // fails on an edge that has any: a memset has no programmatic edge,
    // those join two kernels, but an edge from a kernel's launch-completion
    // port would have some) and added back as full dependencies, the data
    // dropped: the fill neither triggers early nor waits programmatically,
    // so at worst a dependent waits longer than it did.
    size_t in = 0, out = 0;
    PERFLAB_CUDA_CHECK(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &in));
    PERFLAB_CUDA_CHECK(cudaGraphNodeGetDependentNodes(node, nullptr, nullptr, &out));
    std::vector<cudaGraphNode_t> before(in), after(out);
    std::vector<cudaGraphEdgeData> in_data(in), out_data(out);
    if (in > 0) PERFLAB_CUDA_CHECK(cudaGraphNodeGetDependencies(node, before.data(), in_data.data(), &in));
    if (out > 0) PERFLAB_CUDA_CHECK(cudaGraphNodeGetDependentNodes(node, after.data(), out_data.data(), &out));

    const MemsetPlan plan = plan_memset(p);
    auto* dst = static_cast<unsigned char*>(p.dst);
    size_t pitch = plan.pitch;
    size_t stores = plan.stores_per_row, rows = plan.rows;
    unsigned store_bytes = plan.store_bytes;
    uint4 pattern{plan.pattern[0], plan.pattern[1], plan.pattern[2], plan.pattern[3]};
    void* args[] = {&dst, &pitch, &stores, &rows, &store_bytes, &pattern};
    constexpr unsigned kThreads = 256;
    const size_t total = stores * rows;
    const size_t blocks = total == 0 ? 1 : std::min<size_t>((total + kThreads - 1) / kThreads, 1024);
    cudaKernelNodeParams k{};
    k.func = reinterpret_cast<void*>(&graph_memset_kernel);
    k.gridDim = dim3(static_cast<unsigned>(blocks));
    k.blockDim = dim3(kThreads);
    k.kernelParams = args;
    cudaGraphNode_t fill = nullptr;
    PERFLAB_CUDA_CHECK(cudaGraphAddKernelNode(&fill, graph, before.data(), before.size(), &k));
    // The priority of the most urgent kernel either side of it (numerically
    // the lowest): GraphExec instantiates with each node's own priority, and
    // a fill on the step's chain should not queue behind side-stream blocks.
    bool found = false;
    int priority = 0;
    for (const std::vector<cudaGraphNode_t>* side : {&after, &before}) {
      for (cudaGraphNode_t n : *side) {
        cudaGraphNodeType t{};
        PERFLAB_CUDA_CHECK(cudaGraphNodeGetType(n, &t));
        if (t != cudaGraphNodeTypeKernel) continue;
        cudaKernelNodeAttrValue value{};
        PERFLAB_CUDA_CHECK(cudaGraphKernelNodeGetAttribute(n, cudaKernelNodeAttributePriority, &value));
        priority = found ? std::min(priority, value.priority) : value.priority;
        found = true;
      }
    }
    if (found) {
      cudaKernelNodeAttrValue value{};
      value.priority = priority;
      PERFLAB_CUDA_CHECK(cudaGraphKernelNodeSetAttribute(fill, cudaKernelNodeAttributePriority, &value));
    }
    for (cudaGraphNode_t next : after) PERFLAB_CUDA_CHECK(cudaGraphAddDependencies(graph, &fill, &next, nullptr, 1));
    PERFLAB_CUDA_CHECK(cudaGraphDestroyNode(node));
    ++replaced;
  }
  return replaced;
}

}  // namespace perflab::kernels::cuda
