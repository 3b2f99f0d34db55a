// Memset nodes of a captured CUDA graph turned into kernel nodes.
//
// Why: in the H200 traces at 32e4a50 (docs/results/2026-11-27-h200-gpu-check-32e4a50)
// the DLRM step's graphs at batch 65,536 held 17 (bf16) and 22 (TF32)
// memset nodes, cuBLASLt's and CUB's (4 bytes to 193 KiB each). Where one sat
// on the step's chain, the kernel after it started 13-20 us after the
// kernel before it (about 7-9 us to the memset, 1-5 us of memset, 6-8 us to
// the next kernel), where two kernels in a row were 0.4 us apart; the TF32
// step ran faster eagerly (5.675 ms) than graphed (5.754). A kernel node
// that writes the same bytes stays on the compute engine's path.
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace perflab::kernels::cuda {

/// The substring of the replacement kernel's name, for a profiler that
/// counts it as the memset it stands for.
inline constexpr const char* kGraphMemsetKernelName = "graph_memset_kernel";

/// What a memset node's bytes come to, one store at a time: the widest
/// store (16, 4 or 1 bytes) that every row's start, the pitch and the row's
/// length allow, and the value repeated to fill it. Host-only.
struct MemsetPlan {
  unsigned store_bytes = 1;     ///< 16, 4 or 1.
  unsigned pattern[4] = {};     ///< The store's bytes (the value repeated), little-endian words.
  size_t stores_per_row = 0;
  size_t rows = 0;
  size_t pitch = 0;             ///< Bytes between row starts (the row's own length for one row).
};
MemsetPlan plan_memset(const cudaMemsetParams& p);

/// Whether GraphExec::end_capture replaces memset nodes (raii.h): yes
/// unless the environment's PERFLAB_GRAPH_MEMSETS is "nodes" (the graph
/// as captured, for a comparison); "kernels" or unset: yes. Any other value
/// throws UsageError naming it. Read once.
bool graph_memsets_as_kernels();

/// Every node of `graph` (not those inside child graphs).
std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph);

/// Replaces every memset node of `graph` (not inside a child graph) by a
/// kernel node writing the same bytes, with the same dependencies and
/// dependents (as full dependencies). Returns how many it replaced; throws
/// CudaError when the graph cannot be edited.
int replace_memset_nodes(cudaGraph_t graph);

}  // namespace perflab::kernels::cuda
