// Message sizes as people write them: "8", "1K", "256M", "8G" (powers of
// 1024, as nccl-tests' -b/-e read them), and ranges "8,1K..8G" with a step
// factor. Shared by `perflab model` and the SHARP verdict's wording.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perflab::collectives {

/// "1048576", "1K", "256M", "8G", "1T" (K = 1024; k, m, g, t accepted too) as
/// bytes; UsageError naming `what` when it is not a positive size of at most
/// 2^50 bytes.
uint64_t parse_byte_size(std::string_view text, std::string_view what = "size");

/// A comma list of sizes and ranges "A..B" (A, A*factor, ... up to B),
/// sorted and without repeats: "8,1K..8G" with factor 2 is 8, 1K, 2K, ... 8G.
/// UsageError (one line) on a bad item, factor < 2, A > B or more than 4096
/// sizes.
std::vector<uint64_t> parse_size_list(std::string_view text, uint64_t factor = 2);

/// "8 B", "1 KiB", "256 MiB", "1.5 GiB": the largest unit the value reaches,
/// at most one decimal.
std::string format_bytes(uint64_t bytes);

}  // namespace perflab::collectives
