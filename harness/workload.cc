// Defaults of the workload contracts (workload.h).
#include "harness/workload.h"

#include "base/error.h"

namespace perflab {

void TimedStep::run_iteration(int64_t /*iteration*/) {
  throw Error("internal: this step runs on a device (device_step()) and has no host iteration");
}

}  // namespace perflab
