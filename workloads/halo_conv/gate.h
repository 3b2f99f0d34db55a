// The halo_conv gate: a process's partitioned results (forward output and
// input gradient of its slabs, the weight gradient summed over every
// partition) against the unpartitioned convolution of the same seeded
// tensors, computed here on the CPU (kernels/cpu/conv3d). The output and
// input gradient are compared at the slab's planes of the whole volume's
// convolution (its input planes drawn from the seed, zero beyond the
// volume's ends); the weight gradient with the whole volume's at once. In
// bf16 (LayerConfig::bf16) the reference draws the same bf16-rounded inputs
// and computes in fp32.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "collectives/communicator.h"
#include "harness/workload.h"
#include "workloads/halo_conv/cpu_layer.h"

namespace perflab::halo_conv {

/// fp32 storage and math: partitioned and whole convolutions sum the same
/// products in different orders (GEMM blocking, slabs, ranks).
constexpr double kFp32Tolerance = 1e-4;
/// TF32 tensor-core math (10-bit mantissa products) against the fp32 CPU.
constexpr double kTf32Tolerance = 5e-3;
/// bf16 storage (LayerConfig::bf16), against the fp32 convolution of the
/// same bf16 inputs, over P partitions: the products are exact in fp32 and
/// summed in fp32, so the error is the roundings of stored results, each at
/// most 2^-8 of the value rounded (round to nearest, bf16's 8-bit
/// significand). An output element is rounded at most 3 times (the cpu
/// backend's overlap: the interior, two corrections), an input-gradient
/// element at most 5 (allowed for a staged correction rounding its block,
/// then the sum; the cuda backend's overlap writes each element once); a
/// partition's weight gradient at most 3 times (interior, two halos), then
/// summed over the P partitions in fp32, whose partial sums of these
/// zero-mean terms are about 1/sqrt(P) of the whole's: 3 sqrt(P) roundings
/// at the whole's largest value. The tolerance (a share of each tensor's
/// largest value) is the larger count plus 3 roundings of headroom for
/// partial values above the final largest: 2^-8 (max(5, 3 sqrt(P)) + 3):
/// 2^-5 for 1 or 2 partitions, 0.035 for 4, 0.045 for 8.
inline double bf16_tolerance(int partitions) {
  return std::ldexp(std::max(5.0, 3.0 * std::sqrt(static_cast<double>(partitions))) + 3.0, -8);
}

/// What one process computed, in host memory.
struct SlabResults {
  const LayerConfig* config = nullptr;
  std::vector<Slab> slabs;
  std::vector<kernels::cpu::ConstPlaneView> y, dx;  ///< Per slab (dx empty for pass=forward).
  const float* w = nullptr;
  const float* dw = nullptr;  ///< Summed over partitions (null for pass=forward).
  size_t weights = 0;
  /// The host copies the views point into, when the results were downloaded
  /// from a device (moving SlabResults keeps them where they are).
  std::vector<std::vector<float>> storage;
};

/// The CPU layer's results, as they are.
SlabResults slab_results(const CpuHaloLayer& layer);

/// The gate on every rank (collective: host reductions over `comm`): an
/// element is wrong when it differs from the whole convolution's by more
/// than `tolerance` times that tensor's largest value.
CorrectnessReport check_against_whole(const SlabResults& got, collectives::Communicator& comm, uint64_t seed,
                                      double tolerance);

}  // namespace perflab::halo_conv
