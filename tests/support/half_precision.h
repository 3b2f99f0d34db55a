// Half-precision conversions for tests: the production ones
// (kernels/half_precision.h) under the tests' namespace.
#pragma once

#include "kernels/half_precision.h"

namespace perflab::test_support {
using perflab::from_bf16;
using perflab::from_fp16;
using perflab::to_bf16;
using perflab::to_fp16;
}  // namespace perflab::test_support
