// Message sizes: parsing "1K..8G" lists and printing "256 MiB".
#include "collectives/byte_size.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace perflab::collectives {
namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 50;
constexpr size_t kMaxSizes = 4096;

}  // namespace

uint64_t parse_byte_size(std::string_view text, std::string_view what) {
  const std::string_view original = text;
  text = trim_space(text);
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K': scale = uint64_t{1} << 10; break;
      case 'M': scale = uint64_t{1} << 20; break;
      case 'G': scale = uint64_t{1} << 30; break;
      case 'T': scale = uint64_t{1} << 40; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > kMaxBytes / scale) {
    throw UsageError(fmt::format("{}: '{}' is not a size in bytes (a positive integer, optionally "
                                 "with K, M, G or T, at most 1024T)",
                                 what, original));
  }
  return value * scale;
}

std::vector<uint64_t> parse_size_list(std::string_view text, uint64_t factor) {
  if (factor < 2) throw UsageError(fmt::format("size step factor must be at least 2, got {}", factor));
  std::vector<uint64_t> sizes;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item =
        trim_space(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) throw UsageError(fmt::format("sizes '{}': an empty item", text));
    size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      sizes.push_back(parse_byte_size(item));
    } else {
      uint64_t lo = parse_byte_size(item.substr(0, dots));
      uint64_t hi = parse_byte_size(item.substr(dots + 2));
      if (lo > hi) throw UsageError(fmt::format("sizes '{}': {} is larger than {}", text, lo, hi));
      for (uint64_t s = lo; s <= hi; s *= factor) {
        sizes.push_back(s);
        if (sizes.size() > kMaxSizes || s > hi / factor) break;
      }
    }
    if (sizes.size() > kMaxSizes) {
      throw UsageError(fmt::format("sizes '{}': more than {} sizes", text, kMaxSizes));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0 || value == static_cast<double>(static_cast<uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<uint64_t>(value), kUnits[unit]);
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace perflab::collectives
