// Host memory checked before it is allocated: a workload estimates what its
// plan needs and is refused with one line (what needs how much, what is
// here, what to change) instead of ending in std::bad_alloc.
#pragma once

#include <string>

namespace perflab {

/// Physical memory of this machine in bytes (0 when unknown).
double physical_memory_bytes();

/// Throws UsageError "<what> needs about X GB of host memory, more than 75%
/// of the Y GB here; <advice>" when `need_bytes` exceeds 75% of physical
/// memory. Does nothing when physical memory is unknown.
void check_host_memory(const std::string& what, double need_bytes, const std::string& advice);

}  // namespace perflab
