// GPU tests skip with the runtime's reason when no usable device is
// present; they never pass vacuously.
#pragma once

#include <gtest/gtest.h>

#include "harness/device.h"

#define PERFLAB_REQUIRE_CUDA_DEVICE()                                  \
  do {                                                                 \
    ::perflab::DeviceProbe perflab_probe_ = ::perflab::probe_devices(); \
    if (!perflab_probe_.available) GTEST_SKIP() << perflab_probe_.reason; \
    std::string perflab_reason_;                                       \
    if (!::perflab::device_smoke_test(0, &perflab_reason_))            \
      FAIL() << perflab_reason_;                                       \
  } while (0)
