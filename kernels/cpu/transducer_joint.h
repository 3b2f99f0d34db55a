// RNN-T joint on the CPU: the broadcast sum of encoder and prediction-network
// outputs followed by an activation, and its backward pass. This is the
// reference the CUDA joint kernel is tested against.
//
// For sequence b with T_b frames and U_b labels (U_b + 1 prediction steps):
//   h[b, t, u, :] = act(f[b, t, :] + g[b, u, :])     for t < T_b, u <= U_b
// with act = identity or ReLU. Backward, with dh' = dh * act'(h):
//   df[b, t, :] = Σ_{u <= U_b} dh'[b, t, u, :]        (zero for t >= T_b)
//   dg[b, u, :] = Σ_{t < T_b}  dh'[b, t, u, :]        (zero for u > U_b)
// ReLU's derivative is taken as [h > 0] (0 at the kink).
//
// Layout (all row-major):
//   f  [B, T, H]      g  [B, U+1, H]
//   h, dh padded: [B, T, U+1, H]; packed: [R, H] with R = Σ_b T_b*(U_b+1), row
//   (b, t, u) = offsets[b] + t*(U_b+1) + u, offsets from rnnt_packed_offsets
//   (the same rows as the packed RNN-T loss, so the joint's output feeds it).
// Padding rows of the padded output are written as zero; padding rows of dh
// are never read. Dropout is left out (the MLPerf RNN-T joint applies it after
// the activation; it would be a separate elementwise op).
//
// Sums run in a fixed order (u ascending for df, t ascending for dg) in the
// Scalar type, one output row per thread, so results do not depend on the
// thread count. Nothing here allocates.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// Problem size of a transducer joint (padded dimensions).
struct JointShape {
  int64_t batch = 0;       ///< B: sequences.
  int64_t max_time = 0;    ///< T: encoder frames per sequence (T_b <= T).
  int64_t max_labels = 0;  ///< U: labels at most (U_b <= U); g has U+1 rows per sequence.
  int64_t hidden = 0;      ///< H: joint width.
};

/// Activation applied to f + g.
enum class JointActivation { kIdentity, kRelu };

/// Checks the shape and lengths (0 <= T_b <= T, 0 <= U_b <= U); throws
/// UsageError naming the offending sequence. The joint functions call it.
void transducer_joint_validate(const JointShape& shape, const int32_t* frames,
                               const int32_t* label_lengths);

/// Padded forward: h [B, T, U+1, H] (padding rows zeroed). `frames` = T_b,
/// `label_lengths` = U_b. `h` must not alias f or g.
template <typename Scalar>
void transducer_joint_forward(const JointShape& shape, JointActivation act, const Scalar* f,
                              const Scalar* g, const int32_t* frames, const int32_t* label_lengths,
                              Scalar* h);

/// Packed forward: h [R, H] with the rows of rnnt_packed_offsets (`offsets`, B+1 values).
template <typename Scalar>
void transducer_joint_forward_packed(const JointShape& shape, JointActivation act, const Scalar* f,
                                     const Scalar* g, const int32_t* frames,
                                     const int32_t* label_lengths, const int64_t* offsets,
                                     Scalar* h);

/// Padded backward: df [B, T, H] and dg [B, U+1, H], overwritten (padding
/// rows zeroed). `h` is the forward output, read only for ReLU (may be
/// nullptr for identity). No output may alias an input.
template <typename Scalar>
void transducer_joint_backward(const JointShape& shape, JointActivation act, const Scalar* h,
                               const Scalar* dh, const int32_t* frames,
                               const int32_t* label_lengths, Scalar* df, Scalar* dg);

/// Packed backward: h and dh are [R, H] in the rows of `offsets`.
template <typename Scalar>
void transducer_joint_backward_packed(const JointShape& shape, JointActivation act, const Scalar* h,
                                      const Scalar* dh, const int32_t* frames,
                                      const int32_t* label_lengths, const int64_t* offsets,
                                      Scalar* df, Scalar* dg);

}  // namespace perflab::kernels::cpu
