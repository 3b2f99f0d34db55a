// Fuzzes the sweep-file parser (harness/sweep_file.cc) with every workload
// registered, as `perflab sweep FILE` reads files, then resolves each point
// as run_sweep does before running anything. Properties: a bad file is a
// UsageError, never another exception (yaml-cpp's included) or undefined
// behaviour; a plan read has between 1 and kMaxSweepPoints points; resolving
// a point fails only with UsageError or Error (a backend not here).
#include <cstdint>
#include <string>

#include "harness/device.h"
#include "base/error.h"
#include "harness/registry.h"
#include "harness/sweep.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab;
  using namespace perflab::fuzz;
  SweepPlan plan;
  try {
    plan = parse_sweep_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz/sweep.yaml");
  } catch (const UsageError&) {
    return 0;
  }
  require(!plan.points.empty() && plan.points.size() <= kMaxSweepPoints,
          "a plan has 1 to kMaxSweepPoints points, not " + std::to_string(plan.points.size()));
  require(!plan.name.empty() && plan.name.find('/') == std::string::npos, "the name is one folder: " + plan.name);
  for (const RunRequest& request : plan.points) {
    try {
      const RunSpec spec = resolve_run_spec(request, Registry::instance().get(request.workload), DeviceProbe{});
      require(!spec.seeds.empty() && spec.seeds.size() <= static_cast<size_t>(kMaxSeeds), "seeds in range");
      run_key(spec, spec.seeds.front());
    } catch (const UsageError&) {
    } catch (const Error&) {
    }
  }
  return 0;
}
