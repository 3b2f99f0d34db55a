// Compute backends.
#pragma once

#include <string>

namespace perflab {

enum class Backend { kCpu, kCuda };

inline const char* backend_name(Backend b) { return b == Backend::kCpu ? "cpu" : "cuda"; }

}  // namespace perflab
