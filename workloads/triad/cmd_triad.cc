// `perflab triad elements`: the array size STREAM's rule asks for on this
// machine (each array at least four times the last-level caches, all of
// them summed, so no
// iteration is served from it), to pass as --set elements=N. The example of
// a workload's own command: it lives in the workload's folder and registers
// itself (harness/command_registry.h).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "base/error.h"
#include "collectives/byte_size.h"
#include "harness/command_registry.h"

namespace perflab::triad {
namespace {

constexpr int64_t kBytesPerArrayElement = 8;  // one double
constexpr int64_t kMaxElements = int64_t{1} << 32;  // the elements parameter's range

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// sysfs's "32768K" -> 33554432 (collectives' byte-size parser); 0 when unreadable.
int64_t cache_size_bytes(const std::string& text) {
  try {
    return static_cast<int64_t>(collectives::parse_byte_size(text, "cache size"));
  } catch (const UsageError&) {
    return 0;
  }
}

/// STREAM counts every last-level cache of the machine: the sum, over the
/// distinct caches of the highest level in sysfs (one per socket, or per
/// core complex), of their sizes; 0 when sysfs says nothing.
int64_t last_level_caches_bytes() {
  namespace fs = std::filesystem;
  std::map<std::string, int64_t> by_sharing;  // shared_cpu_list -> size, of the highest level
  int top = 0;
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    for (const auto& index : fs::directory_iterator(cpu.path() / "cache", ec)) {
      const std::string type = first_line(index.path() / "type");
      if (type != "Unified" && type != "Data") continue;
      int level = 0;
      try {
        level = std::stoi(first_line(index.path() / "level"));
      } catch (const std::exception&) {
        continue;
      }
      if (level < top) continue;
      if (level > top) {
        top = level;
        by_sharing.clear();
      }
      by_sharing[first_line(index.path() / "shared_cpu_list")] = cache_size_bytes(first_line(index.path() / "size"));
    }
  }
  int64_t total = 0;
  for (const auto& [cpus, bytes] : by_sharing) total += bytes;
  return total;
}

int print_elements(int64_t cache_bytes) {
  if (cache_bytes <= 0) {
    cache_bytes = last_level_caches_bytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (cache_bytes <= 0) cache_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (cache_bytes <= 0) {
      throw UsageError("the last-level cache size is not known here (sysfs and sysconf report none): pass --cache BYTES");
    }
  }
  const int64_t elements = 4 * cache_bytes / kBytesPerArrayElement;
  if (elements > kMaxElements) {
    throw UsageError(fmt::format("--cache {}: STREAM's rule asks for {} elements per array, more than the {} "
                                 "triad's elements parameter allows",
                                 cache_bytes, elements, kMaxElements));
  }
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
  elements->add_option("--cache", *cache,
                       "Last-level cache in bytes, all of them summed (default: every last-level cache sysfs lists)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  return {sub, [cache] { return print_elements(*cache); }};
}

PERFLAB_REGISTER_COMMAND("triad", add_triad);

}  // namespace
}  // namespace perflab::triad
