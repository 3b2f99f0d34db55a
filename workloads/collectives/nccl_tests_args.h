// nccl-tests' command line, carried over: `perflab run collectives -b 8
// -e 64M -f 2 -n 20` means what `all_reduce_perf -b 8 -e 64M -f 2 -n 20`
// means. Each nccl-tests flag becomes the perflab flags it stands for
// (sizes -> --set bytes=<list> and in_place=0,1, a sweep; -n -> iters;
// -G -> --cuda-graphs), before the command line is parsed. Pure: tested
// without running anything.
#pragma once

#include <string>
#include <vector>

namespace perflab::collectives_workload {

/// nccl-tests' sizes: "8", "64K", "64M", "1G" (powers of 1024). Throws
/// UsageError on anything else.
size_t parse_nccl_tests_bytes(const std::string& flag, const std::string& text);

/// The message sizes nccl-tests visits from min to max: multiplied by
/// `factor` when factor > 1, else stepped by `step` bytes.
std::vector<size_t> nccl_tests_sizes(size_t min_bytes, size_t max_bytes, double factor, size_t step);

/// `args` (what follows `perflab run collectives`) with nccl-tests' flags
/// replaced by perflab's; perflab's own flags pass through unchanged (the
/// backend then needs its long form, --backend: -b is nccl-tests' minbytes).
std::vector<std::string> translate_nccl_tests_args(const std::vector<std::string>& args);

}  // namespace perflab::collectives_workload
