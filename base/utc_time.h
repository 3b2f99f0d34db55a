// The current UTC time as text, for file names and result timestamps.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace perflab {

/// Now, in UTC, formatted with strftime's `format` (e.g. "%Y%m%d-%H%M%S").
inline std::string utc_now(const char* format) {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  return std::string(buf, std::strftime(buf, sizeof buf, format, &tm));
}

}  // namespace perflab
