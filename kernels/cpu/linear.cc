// Fully connected layer on the CPU: OpenBLAS GEMMs plus a deterministic
// bias-gradient reduction.
#include "kernels/cpu/linear.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

namespace perflab::kernels::cpu {
namespace {

/// Below this many output elements a parallel region costs more than it saves.
constexpr int64_t kMinParallelElements = 1 << 14;

blasint blas_int(int64_t n) { return static_cast<blasint>(n); }

}  // namespace

void linear_forward(const LinearShape& shape, const float* x, const float* w, const float* b,
                    float* y) {
  const int64_t batch = shape.batch;
  const int64_t in = shape.in;
  const int64_t out = shape.out;
  if (batch == 0) return;
    // Start from the broadcast bias so the GEMM can accumulate onto it.
#pragma omp parallel for schedule(static) if (batch * out >= kMinParallelElements)
  for (int64_t i = 0; i < batch; ++i) std::copy(b, b + out, y + i * out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(batch), blas_int(out), blas_int(in),
              1.0f, x, blas_int(in), w, blas_int(in), 1.0f, y, blas_int(out));
}

void linear_backward(const LinearShape& shape, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* db) {
  const int64_t batch = shape.batch;
  const int64_t in = shape.in;
  const int64_t out = shape.out;
  if (batch == 0) {
    std::fill(dw, dw + out * in, 0.0f);
    std::fill(db, db + out, 0.0f);
    return;
  }
  // dW[out,in] = dyᵀ[out,B] · x[B,in]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(out), blas_int(in), blas_int(batch),
              1.0f, dy, blas_int(out), x, blas_int(in), 0.0f, dw, blas_int(in));
  // dx[B,in] = dy[B,out] · W[out,in]
  if (dx != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(batch), blas_int(in),
                blas_int(out), 1.0f, dy, blas_int(out), w, blas_int(in), 0.0f, dx, blas_int(in));
  }
  // db: each thread owns a contiguous block of columns and walks the batch in
  // order, so every column is summed in the same order whatever the threads.
#pragma omp parallel if (batch * out >= kMinParallelElements)
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t thread = omp_get_thread_num();
    const int64_t begin = out * thread / threads;
    const int64_t end = out * (thread + 1) / threads;
    std::fill(db + begin, db + end, 0.0f);
    for (int64_t i = 0; i < batch; ++i) {
      const float* row = dy + i * out;
      for (int64_t o = begin; o < end; ++o) db[o] += row[o];
    }
  }
}

}  // namespace perflab::kernels::cpu
