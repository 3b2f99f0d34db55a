// Host memory checks (see host_memory.h).
#include "harness/host_memory.h"

#include <unistd.h>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab {

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

void check_host_memory(const std::string& what, double need_bytes, const std::string& advice) {
  const double have = physical_memory_bytes();
  if (have <= 0 || need_bytes <= 0.75 * have) return;
  throw UsageError(fmt::format("{} needs about {:.1f} GB of host memory, more than 75% of the {:.1f} GB here; {}",
                               what, need_bytes / 1e9, have / 1e9, advice));
}

}  // namespace perflab
