// Fully connected layer on the CPU: OpenBLAS GEMMs plus a deterministic
// bias-gradient reduction.
#include "kernels/cpu/linear.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "kernels/cpu/blas_int.h"
#include "kernels/cpu/dispatch.h"

namespace perflab::kernels::cpu {
namespace {

/// Below this many output elements a parallel region costs more than it saves.
constexpr int64_t kLinearMinParallelElements = 1 << 14;

}  // namespace

void linear_forward(const LinearShape& shape, const float* x, const float* w, const float* b,
                    float* y) {
  const int64_t batch = shape.batch;
  const int64_t in = shape.in;
  const int64_t out = shape.out;
  if (batch == 0) return;
    // Start from the broadcast bias so the GEMM can accumulate onto it.
#pragma omp parallel for schedule(static) if (batch * out >= kLinearMinParallelElements)
  for (int64_t i = 0; i < batch; ++i) std::copy(b, b + out, y + i * out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(batch), blas_int(out), blas_int(in),
              1.0f, x, blas_int(in), w, blas_int(in), 1.0f, y, blas_int(out));
}

PERFLAB_CPU_DISPATCH
void linear_relu_forward(const LinearShape& shape, const float* x, const float* w, const float* b,
                         float* y) {
  const int64_t batch = shape.batch;
  const int64_t in = shape.in;
  const int64_t out = shape.out;
  if (batch == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(batch), blas_int(out), blas_int(in),
              1.0f, x, blas_int(in), w, blas_int(in), 0.0f, y, blas_int(out));
#pragma omp parallel for schedule(static) if (batch * out >= kLinearMinParallelElements)
  for (int64_t i = 0; i < batch; ++i) {
    float* row = y + i * out;
#pragma omp simd
    for (int64_t o = 0; o < out; ++o) {
      const float v = row[o] + b[o];
      row[o] = v < 0.0f ? 0.0f : v;
    }
  }
}

namespace {

/// db[out] = Σ_batch dy, each column summed in batch order. With `y`, dy is
/// first masked where y ≤ 0 (the ReLU's backward) into `masked` (which may
/// be dy) and the masked values are summed. Each thread owns
/// a contiguous block of columns and walks the batch in order, so every
/// column is summed in the same order whatever the threads.
PERFLAB_CPU_DISPATCH
void bias_gradient(int64_t batch, int64_t out, const float* y, const float* dy, float* masked,
                   float* db) {
#pragma omp parallel if (batch * out >= kLinearMinParallelElements)
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t thread = omp_get_thread_num();
    const int64_t begin = out * thread / threads;
    const int64_t end = out * (thread + 1) / threads;
    std::fill(db + begin, db + end, 0.0f);
    for (int64_t i = 0; i < batch; ++i) {
      const float* row = dy + i * out;
      if (y != nullptr) {
        const float* y_row = y + i * out;
        float* masked_row = masked + i * out;
#pragma omp simd
        for (int64_t o = begin; o < end; ++o) masked_row[o] = y_row[o] > 0.0f ? row[o] : 0.0f;
        row = masked_row;
      }
#pragma omp simd
      for (int64_t o = begin; o < end; ++o) db[o] += row[o];
    }
  }
}

/// dW and dx by OpenBLAS (dx skipped when null).
void weight_and_input_gradients(const LinearShape& shape, const float* x, const float* w,
                                const float* dy, float* dx, float* dw) {
  const int64_t batch = shape.batch;
  const int64_t in = shape.in;
  const int64_t out = shape.out;
  // dW[out,in] = dyᵀ[out,B] · x[B,in]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(out), blas_int(in), blas_int(batch),
              1.0f, dy, blas_int(out), x, blas_int(in), 0.0f, dw, blas_int(in));
  // dx[B,in] = dy[B,out] · W[out,in]
  if (dx != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(batch), blas_int(in),
                blas_int(out), 1.0f, dy, blas_int(out), w, blas_int(in), 0.0f, dx, blas_int(in));
  }
}

}  // namespace

void linear_backward(const LinearShape& shape, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* db) {
  if (shape.batch == 0) {
    std::fill(dw, dw + shape.out * shape.in, 0.0f);
    std::fill(db, db + shape.out, 0.0f);
    return;
  }
  weight_and_input_gradients(shape, x, w, dy, dx, dw);
  bias_gradient(shape.batch, shape.out, nullptr, dy, nullptr, db);
}

void linear_relu_backward(const LinearShape& shape, const float* x, const float* w,
                          const float* y, float* dy, float* dx, float* dw, float* db) {
  if (shape.batch == 0) {
    std::fill(dw, dw + shape.out * shape.in, 0.0f);
    std::fill(db, db + shape.out, 0.0f);
    return;
  }
  bias_gradient(shape.batch, shape.out, y, dy, dy, db);
  weight_and_input_gradients(shape, x, w, dy, dx, dw);
}

}  // namespace perflab::kernels::cpu
