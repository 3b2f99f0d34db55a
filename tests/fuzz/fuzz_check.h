// Shared by the fuzz targets: a property that must hold for every input.
// A violation aborts, which libFuzzer reports as a crash and saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace perflab::fuzz {

/// Aborts with `what` when `ok` is false.
inline void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

/// A file in the temp folder private to this process, for readers that take a
/// path; removed when the process exits.
std::string private_temp_file(const std::string& name);

}  // namespace perflab::fuzz
