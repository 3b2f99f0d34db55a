// DLRM's learning-rate schedule, as the MLPerf DLRM reference uses it:
// linear warm-up, constant, then polynomial (power 2) decay to a floor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace perflab::dlrm {

struct LrSchedule {
  double base = 1.0;              ///< Peak learning rate.
  int64_t warmup_steps = 0;       ///< Linear ramp from base/warmup_steps to base.
  int64_t decay_start_step = 0;   ///< First step of the decay (0 with decay_steps 0: none).
  int64_t decay_steps = 0;        ///< Length of the decay; 0 disables it.
  double end_fraction = 0.0;      ///< The floor, as a fraction of base.

  /// Learning rate for 0-based optimizer step `step`.
  double at(int64_t step) const {
    if (warmup_steps > 0 && step < warmup_steps) {
      return base * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    }
    if (decay_steps > 0 && step >= decay_start_step) {
      double t = std::min(1.0, static_cast<double>(step - decay_start_step) /
                                   static_cast<double>(decay_steps));
      return base * (end_fraction + (1.0 - end_fraction) * (1.0 - t) * (1.0 - t));
    }
    return base;
  }
};

}  // namespace perflab::dlrm
