// `perflab triad elements`: the array size STREAM's rule asks for on this
// machine (each array at least four times the last-level cache, so no
// iteration is served from it), to pass as --set elements=N. The example of
// a workload's own command: it lives in the workload's folder and registers
// itself (harness/command_registry.h).
#include <unistd.h>

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/command_registry.h"

namespace perflab::triad {
namespace {

constexpr int64_t kBytesPerArrayElement = 8;  // one double

int print_elements(int64_t cache_bytes) {
  if (cache_bytes <= 0) {
#ifdef _SC_LEVEL3_CACHE_SIZE
    cache_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (cache_bytes <= 0) cache_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (cache_bytes <= 0) {
      throw UsageError("the last-level cache size is not known here (sysconf reports none): pass --cache BYTES");
    }
  }
  const int64_t elements = 4 * cache_bytes / kBytesPerArrayElement;
  std::cout << fmt::format("elements: {} (each array {} bytes: 4 x the {} bytes of last-level cache, STREAM's rule)\n"
                           "run:      perflab run triad --set elements={} --iterations 20\n",
                           elements, elements * kBytesPerArrayElement, cache_bytes, elements);
  return 0;
}

cli::Command add_triad(CLI::App& app) {
  auto* sub = app.add_subcommand("triad", "The triad workload's own commands");
  sub->require_subcommand(1);
  auto* elements = sub->add_subcommand(
      "elements", "The array size STREAM's rule asks for here: each array 4x the last-level cache");
  auto cache = std::make_shared<int64_t>(0);
  elements->add_option("--cache", *cache, "Last-level cache in bytes (default: what sysconf reports)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  return {sub, [cache] { return print_elements(*cache); }};
}

PERFLAB_REGISTER_COMMAND("triad", add_triad);

}  // namespace
}  // namespace perflab::triad
