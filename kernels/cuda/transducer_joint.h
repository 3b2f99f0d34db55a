// RNN-T joint on a CUDA device: the twin of kernels/cpu/transducer_joint.h
// (same formulas, layouts, activation, and summation order). Activations
// (f, g, h, dh) are fp32, bf16 or fp16 (`dtype`); every sum is fp32 and h is
// rounded to dtype once (nearest even), so the loss reads it as its logits
// (RnntLossArguments with the same dtype and layout); df and dg are fp32.
// On inputs already of dtype, results equal the CPU reference's on those
// values with h rounded to dtype (and its rounded h as the ReLU mask).
//   forward:  h[b,t,u,:] = act(f[b,t,:] + g[b,u,:])   for t < T_b, u <= U_b
//   backward: df[b,t,:] = Σ_{u<=U_b} dh'[b,t,u,:],  dg[b,u,:] = Σ_{t<T_b} dh'[b,t,u,:]
//             with dh' = dh * [h > 0] for ReLU (h is read only then).
// Padded outputs zero their padding rows; in the packed layout only the rows
// of the sequences exist. Sums run in the CPU reference's order (u ascending
// for df, t ascending for dg) in fp32, so results match it bit for bit.
// Dropout is left out, as in the CPU reference.
//
// Lifecycle as for every CUDA operator: can_implement() (host only),
// workspace_bytes(), run() on a stream, which never allocates, never
// synchronises and reads lengths only on the device. A sequence the device
// finds invalid (T_b outside [0, T], U_b outside [0, U], packed offsets that
// disagree with the lengths) gets NaN in every padded row of h, df and dg
// that belongs to it; packed rows whose owner is unknown are not written.
//
// Variants (forward; the backward is the same two kernels for both):
//   kFused:   packed or padded h written straight from f and g, one launch.
//   kUnfused: h computed into the padded layout (into the workspace when h
//             is packed) and then packed by a second kernel; for a padded h it
//             is the one launch of kFused.
//   backward: launch 1 df (one block per frame), launch 2 dg (one block per
//             label position).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/transducer_joint.h"
#include "kernels/cuda/status.h"
#include "kernels/cuda/transducer_layout.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// One joint problem; every pointer is device memory.
struct TransducerJointArguments {
  cpu::JointShape shape;  ///< B, T, U, H.
  cpu::JointActivation activation = cpu::JointActivation::kRelu;
  TransducerLayout layout = TransducerLayout::kPadded;  ///< Of h and dh.
  const int32_t* frames = nullptr;          ///< [B]: T_b.
  const int32_t* label_lengths = nullptr;   ///< [B]: U_b.
  const int64_t* packed_offsets = nullptr;  ///< [B+1] from cpu::rnnt_packed_offsets (packed only).
  int64_t packed_rows = 0;                  ///< offsets[B] as computed on the host (packed only).
  RnntDType dtype = RnntDType::kFloat32;  ///< Of f, g, h and dh.
  const void* f = nullptr;   ///< Forward in: [B, T, H].
  const void* g = nullptr;   ///< Forward in: [B, U+1, H].
  void* h = nullptr;         ///< Forward out; backward in (ReLU only): [B,T,U+1,H] or [R,H].
  const void* dh = nullptr;  ///< Backward in: like h.
  float* df = nullptr;       ///< Backward out: [B, T, H], fp32.
  float* dg = nullptr;       ///< Backward out: [B, U+1, H], fp32.
};

/// Which half of the joint a run computes.
enum class JointPass { kForward, kBackward };

/// The transducer joint operator; stateless.
class TransducerJoint {
 public:
  enum class Variant { kUnfused, kFused };

  /// Whether the pass can run, and why not (host only; checks the shape,
  /// layout, the pointers the pass needs and launch limits).
  static Status can_implement(const TransducerJointArguments& args, Variant variant,
                              JointPass pass);

  /// Workspace run() needs: B*T*(U+1)*H elements of dtype for an unfused
  /// packed forward, otherwise 0.
  static size_t workspace_bytes(const TransducerJointArguments& args, Variant variant,
                                JointPass pass);

  /// Enqueues the pass on `stream`; returns the can_implement status (or a
  /// missing workspace) without launching; throws CudaError on a failed launch.
  Status run(const TransducerJointArguments& args, Variant variant, JointPass pass,
             void* workspace, cudaStream_t stream) const;
  /// What run() launches for the pass (the file comment's list), with each
  /// kernel's compulsory bytes (f and g read, h written; backward: dh, and
  /// h for ReLU, read, df and dg written). Host only.
  static LaunchList launches(const TransducerJointArguments& args, Variant variant, JointPass pass);
};

}  // namespace perflab::kernels::cuda
