// OpenBLAS's integer type for the sizes the CPU kernels pass to it.
#pragma once

#include <cblas.h>

#include <cstdint>

namespace perflab::kernels::cpu {

/// `n` as OpenBLAS's blasint (int, or int64 in an ILP64 build).
inline blasint blas_int(int64_t n) { return static_cast<blasint>(n); }

}  // namespace perflab::kernels::cpu
