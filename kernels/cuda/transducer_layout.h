// Row layouts and element types shared by the CUDA transducer joint and
// RNN-T loss: the joint's output rows are the loss's logit rows. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cuda/status.h"

namespace perflab::kernels::cuda {

/// Element type of the loss's logits and gradient and of the joint's
/// activations (f, g, h and dh): the joint's h is the loss's logits.
enum class RnntDType { kFloat32, kFloat16, kBFloat16 };

/// Bytes of one element of `dtype`.
size_t rnnt_dtype_bytes(RnntDType dtype);

/// "fp32", "fp16" or "bf16".
const char* rnnt_dtype_name(RnntDType dtype);

/// How the rows (b, t, u) of a transducer tensor [.., width] are stored.
///   kPadded: [B, T, U+1, width], row (b, t, u) = (b*T + t)*(U+1) + u; rows
///            outside the valid grid (t >= T_b or u > U_b) are padding.
///   kPacked: [R, width], R = Σ_b T_b*(U_b+1), row (b, t, u) =
///            offsets[b] + t*(U_b+1) + u, offsets from cpu::rnnt_packed_offsets.
enum class TransducerLayout { kPadded, kPacked };

/// The layout arguments' checks, shared by the loss and the joint: a known
/// layout and, packed, the offsets and a row count in [0, B*T*(U+1)]
/// (`padded_rows`). Invalid statuses start with `where`.
inline Status check_layout(const std::string& where, TransducerLayout layout, const int64_t* packed_offsets,
                           int64_t packed_rows, int64_t padded_rows) {
  const bool packed = layout == TransducerLayout::kPacked;
  if (!packed && layout != TransducerLayout::kPadded) return Status::invalid(where + "unknown layout");
  if (!packed) return Status::success();
  if (packed_offsets == nullptr) {
    return Status::invalid(where + "packed layout needs packed_offsets (B+1 device values)");
  }
  if (packed_rows < 0 || packed_rows > padded_rows) {
    return Status::invalid(where + "packed_rows " + std::to_string(packed_rows) + " is outside [0, B*T*(U+1)]");
  }
  return Status::success();
}

}  // namespace perflab::kernels::cuda
