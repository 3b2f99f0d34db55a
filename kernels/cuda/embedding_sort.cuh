// The embedding update's sort input written on the device (embedding.h's
// EmbeddingSortInput): by the gather (keys_in_forward), make_keys_kernel, or
// a kernel with the lookup fused in (the interaction's LookupRows).
#pragma once

#include <cstdint>

#include "kernels/cuda/embedding.h"

namespace perflab::kernels::cuda {

/// Slot `slot`'s sort key (its global row) and slot, and its done counter
/// zeroed: one thread per slot.
__device__ inline void write_sort_input(const EmbeddingSortInput& s, int64_t slot, int64_t row) {
  s.keys[slot] = static_cast<uint32_t>(row);
  s.slots[slot] = static_cast<int32_t>(slot);
  if (slot < s.tiles) s.done[slot] = 0;
}

}  // namespace perflab::kernels::cuda
