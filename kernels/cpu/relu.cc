// Rectified linear unit on the CPU: elementwise, parallel over the buffer.
#include "kernels/cpu/relu.h"

#include "kernels/cpu/dispatch.h"

namespace perflab::kernels::cpu {
namespace {

/// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kMinParallelElements = 1 << 15;

}  // namespace

PERFLAB_CPU_DISPATCH
void relu_forward(int64_t n, const float* x, float* y) {
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelElements)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

PERFLAB_CPU_DISPATCH
void relu_backward(int64_t n, const float* y, const float* dy, float* dx) {
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelElements)
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace perflab::kernels::cpu
