// Seeded tensors drawn on the device where they are used: value i of a
// tensor is counter_value(distribution, seed, stream, first + i)
// (base/counter_random.h), rounded to float and then to the element type
// (nearest even), the same definition the host's fills compute. A workload
// whose inputs are billions of values (the transducer's logits at the MLPerf
// shape: ~2.3e9) draws them in milliseconds instead of minutes on the host
// plus an upload, and a CPU reference can still regenerate any element.
//
// Equal to the host's values within one ulp of the element type: the uniform
// draws are bit-identical; the normal ones pass through the device's double
// log, sqrt, sin and cos (see counter_random.h). run() never allocates or
// synchronises.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/counter_random.h"
#include "kernels/cuda/status.h"
#include "kernels/cuda/transducer_layout.h"

namespace perflab::kernels::cuda {

struct CounterFillArguments {
  int64_t count = 0;    ///< Values to write.
  uint64_t first = 0;   ///< The tensor index of out[0].
  uint64_t seed = 0;    ///< The tensor's seed and stream (counter_value).
  uint64_t stream = 0;
  CounterDistribution distribution = CounterDistribution::kNormal;
  RnntDType dtype = RnntDType::kFloat32;  ///< Element type of `out`.
  void* out = nullptr;                    ///< [count] elements of dtype.
};

/// out[i] = dtype(float(counter_value(distribution, seed, stream, first + i))).
class CounterFill {
 public:
  static Status can_implement(const CounterFillArguments& args);
  /// One launch on `stream`.
  static void run(const CounterFillArguments& args, cudaStream_t stream);
};

}  // namespace perflab::kernels::cuda
