// Row layouts shared by the CUDA transducer joint and RNN-T loss: the joint's
// output rows are the loss's logit rows. Host-only.
#pragma once

namespace perflab::kernels::cuda {

/// How the rows (b, t, u) of a transducer tensor [.., width] are stored.
///   kPadded: [B, T, U+1, width], row (b, t, u) = (b*T + t)*(U+1) + u; rows
///            outside the valid grid (t >= T_b or u > U_b) are padding.
///   kPacked: [R, width], R = Σ_b T_b*(U_b+1), row (b, t, u) =
///            offsets[b] + t*(U_b+1) + u, offsets from cpu::rnnt_packed_offsets.
enum class TransducerLayout { kPadded, kPacked };

}  // namespace perflab::kernels::cuda
