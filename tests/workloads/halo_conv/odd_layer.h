// The layer both backends' tests partition: N=2, 3 -> 5 channels, 7x9
// pixels, 13 planes (no count of 2 to 4 slabs divides it), training step.
#pragma once

#include "workloads/halo_conv/cpu_layer.h"

namespace perflab::halo_conv {

inline LayerConfig odd_layer(int k, int per_rank, bool overlap) {
  LayerConfig c;
  c.geometry = {2, 3, 5, 7, 9, k};  // N, C_in, C_out, H, W, k
  c.depth = 13;
  c.per_rank = per_rank;
  c.overlap = overlap;
  c.backward = true;
  return c;
}

}  // namespace perflab::halo_conv
