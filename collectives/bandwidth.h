// nccl-tests' arithmetic, as pure functions: how many elements each rank
// sends and receives for a message size, what the table's size and count
// columns say, and algorithm and bus bandwidth. busbw is algbw times the
// factor that makes it comparable with the links' bandwidth whatever the
// rank count: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all
// (n-1)/n; broadcast, reduce, send/recv 1 (nccl-tests' PERFORMANCE.md).
#pragma once

#include <cstddef>
#include <string>

namespace perflab::collectives {

/// The collectives the benchmark times, by nccl-tests' names less "_perf".
enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSendRecv };

/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "sendrecv".
const char* collective_name(Collective c);
/// Parses collective_name's names (and nccl-tests' "allreduce", "alltoall", ...).
Collective parse_collective(const std::string& text);
/// Whether the collective reduces (has a redop) and whether it has a root.
bool collective_reduces(Collective c);
bool collective_has_root(Collective c);

/// Element counts of one operation at `bytes` (nccl-tests' getCollByteCount:
/// counts that are split across ranks are rounded down to a multiple of n).
struct CollectiveCounts {
  size_t send = 0;   ///< Elements in each rank's send buffer.
  size_t recv = 0;   ///< Elements in each rank's receive buffer.
  size_t param = 0;  ///< The count argument of the call.
  size_t size_bytes = 0;  ///< The table's size column: max(send, recv) bytes.
  size_t count = 0;       ///< The table's count column: bytes / element size.
};
CollectiveCounts collective_counts(Collective c, size_t bytes, size_t element_size, int ranks);

/// Algorithm bandwidth in GB/s (10^9 bytes) of one operation taking
/// `seconds`: the bytes nccl-tests counts for it over the time.
double algbw_gbps(Collective c, const CollectiveCounts& counts, size_t element_size, int ranks, double seconds);
/// busbw / algbw for `ranks` ranks.
double busbw_factor(Collective c, int ranks);

}  // namespace perflab::collectives
