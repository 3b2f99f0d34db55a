// Build identity: the project version, from CMake.
#include "harness/version.h"

namespace perflab {

const char* perflab_version() { return PERFLAB_VERSION; }

}  // namespace perflab
