// bf16 rounding on the CPU (see bf16.h).
#include "kernels/cpu/bf16.h"

#include "kernels/cpu/dispatch.h"
#include "kernels/half_precision.h"

namespace perflab::kernels::cpu {
namespace {

constexpr int64_t kBf16MinParallelElements = 1 << 15;

}  // namespace

PERFLAB_CPU_DISPATCH
void round_to_bf16(int64_t n, const float* x, float* y) {
#pragma omp parallel for schedule(static) if (n >= kBf16MinParallelElements)
  for (int64_t i = 0; i < n; ++i) y[i] = from_bf16(to_bf16(x[i]));
}

}  // namespace perflab::kernels::cpu
