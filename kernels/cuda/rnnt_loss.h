// RNN-T (transducer) loss on a CUDA device, with its gradient with respect to
// the joint network's logits: the twin of kernels/cpu/rnnt_loss.h, whose
// formulas, layouts and reductions it follows (costs[b] = -log P(y_b|x_b);
// loss = Σ costs for kNone and kSum, Σ costs / B for kMean; the gradient is
// that of the reduced loss, padding rows exactly 0). Logits may be fp32, fp16
// or bf16; everything on the device is accumulated in fp32.
//
// Lifecycle (CUTLASS-like): fill RnntLossArguments, ask can_implement() (host
// only, never touches the device), allocate workspace_bytes() at setup, then
// run() on a stream. run() never allocates, never synchronises and never reads
// lengths back: lengths and labels are read only on the device, so a run can
// be captured in a CUDA graph. Lengths are validated on the host by the caller
// at setup (cpu::rnnt_validate); a sequence the device finds invalid (T_b
// outside [1, T], U_b outside [0, U], a label outside [0, V) or equal to
// blank, packed offsets that disagree with the lengths) gets cost NaN, so the
// reduced loss is NaN, and in the padded layout every gradient row of that
// sequence is NaN. (The CPU reference throws instead; the device cannot.)
//
// Variants and the kernels each launches on the stream (in order):
//   kUnfused: (1) log-softmax of every valid row into a [rows, V] fp32
//             workspace; (2) alpha and beta by anti-diagonal wavefront, one
//             block per sequence for alpha and one for beta, writing costs;
//             (3) gradient from the stored log-probabilities (block 0 also
//             reduces costs into loss).
//   kFused:   (1) per-row statistics: log-sum-exp over V plus the two
//             log-probabilities the recursions need (blank and next label);
//             (2) alpha and beta as above, reading those two values per row;
//             (3) gradient in one pass over the logits, softmax recomputed
//             from the row's log-sum-exp (block 0 also reduces the loss).
// Without a gradient (grad == nullptr) step (2) runs alpha only and step (3)
// is a one-block kernel that reduces costs into loss (skipped when loss is
// null too). Workspace: unfused rows*(V+2) floats, fused rows*5 floats.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/rnnt_loss.h"
#include "kernels/cuda/status.h"
#include "kernels/cuda/transducer_layout.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// One RNN-T loss problem; every pointer is device memory.
struct RnntLossArguments {
  cpu::RnntShape shape;      ///< B, T, U, V (padded dimensions).
  cpu::RnntOptions options;  ///< Blank (-1 = V-1) and reduction.
  TransducerLayout layout = TransducerLayout::kPadded;
  RnntDType dtype = RnntDType::kFloat32;  ///< Of logits and grad.
  const void* logits = nullptr;           ///< [B,T,U+1,V] padded or [packed_rows, V] packed.
  const int32_t* labels = nullptr;        ///< [B, U]; entries past U_b are ignored.
  const int32_t* logit_lengths = nullptr;  ///< [B]: T_b.
  const int32_t* label_lengths = nullptr;  ///< [B]: U_b.
  const int64_t* packed_offsets = nullptr;  ///< [B+1] from cpu::rnnt_packed_offsets (packed only).
  int64_t packed_rows = 0;                  ///< offsets[B] as computed on the host (packed only).
  float* costs = nullptr;  ///< [B] out: -log P(y_b|x_b), unreduced.
  void* grad = nullptr;    ///< Out, same dtype and layout as logits; nullptr = costs only.
  float* loss = nullptr;   ///< Out: the reduced loss (one float); may be nullptr.
};

/// The RNN-T loss operator; stateless.
class RnntLoss {
 public:
  enum class Variant { kUnfused, kFused };

  /// Whether the problem can run, and why not. Host only: checks the shape,
  /// blank, layout, dtype, pointers (presence and alignment) and the launch
  /// limits; never dereferences a device pointer (lengths are the device's).
  static Status can_implement(const RnntLossArguments& args, Variant variant);

  /// Workspace run() needs, in bytes (0 only for an empty problem).
  static size_t workspace_bytes(const RnntLossArguments& args, Variant variant);

  /// Logit rows of the problem: B*T*(U+1) padded, packed_rows packed.
  static int64_t rows(const RnntLossArguments& args);

  /// Enqueues the loss on `stream`. Returns can_implement's status without
  /// launching anything when the problem is invalid or the workspace is
  /// missing; throws CudaError when a launch fails. Never allocates or
  /// synchronises.
  Status run(const RnntLossArguments& args, Variant variant, void* workspace,
             cudaStream_t stream) const;
  /// What run() launches for `variant` (the file comment's list), with each
  /// kernel's compulsory bytes: the logits read once per pass over them, the
  /// gradient written once, the per-row values and the recursions' alpha and
  /// beta. Host only; nothing for an invalid problem.
  static LaunchList launches(const RnntLossArguments& args, Variant variant);
};

/// "unfused" or "fused".
const char* rnnt_variant_name(RnntLoss::Variant variant);

}  // namespace perflab::kernels::cuda
