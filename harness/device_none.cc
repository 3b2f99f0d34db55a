// Device probing for builds without CUDA: there is never a device.
#include "harness/device.h"
#include "base/error.h"
#include "harness/step_driver.h"

namespace perflab {
namespace {

constexpr const char* kNoCuda = "perflab was built without CUDA";

}  // namespace

DeviceProbe probe_devices() {
  DeviceProbe probe;
  probe.reason = kNoCuda;
  return probe;
}

bool device_smoke_test(int /*device*/, std::string* reason) {
  if (reason != nullptr) *reason = kNoCuda;
  return false;
}

std::string built_cuda_architectures() { return "none"; }

std::unique_ptr<DeviceOps> make_cuda_device_ops() { throw Error(kNoCuda); }

}  // namespace perflab
