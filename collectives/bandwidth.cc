// nccl-tests' counts and bandwidths (see bandwidth.h).
#include "collectives/bandwidth.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::collectives {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "?";
}

Collective parse_collective(const std::string& text) {
  std::string t;
  for (char ch : text) {
    if (ch != '_') t += ch;
  }
  if (t == "allreduce") return Collective::kAllReduce;
  if (t == "allgather") return Collective::kAllGather;
  if (t == "reducescatter") return Collective::kReduceScatter;
  if (t == "alltoall") return Collective::kAllToAll;
  if (t == "broadcast") return Collective::kBroadcast;
  if (t == "reduce") return Collective::kReduce;
  if (t == "sendrecv") return Collective::kSendRecv;
  throw UsageError(fmt::format("unknown collective '{}': choose all_reduce, all_gather, reduce_scatter, "
                               "all_to_all, broadcast, reduce or sendrecv",
                               text));
}

bool collective_reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}

bool collective_has_root(Collective c) { return c == Collective::kBroadcast || c == Collective::kReduce; }

CollectiveCounts collective_counts(Collective c, size_t bytes, size_t element_size, int ranks) {
  const size_t n = static_cast<size_t>(std::max(ranks, 1));
  const size_t count = bytes / element_size;
  CollectiveCounts k;
  k.count = count;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      k.send = k.recv = k.param = count;
      break;
    case Collective::kAllGather:
      k.send = k.param = count / n;
      k.recv = k.send * n;
      break;
    case Collective::kReduceScatter:
      k.recv = k.param = count / n;
      k.send = k.recv * n;
      break;
    case Collective::kAllToAll:
      k.param = count / n;
      k.send = k.recv = k.param * n;
      break;
  }
  k.size_bytes = std::max(k.send, k.recv) * element_size;
  return k;
}

double algbw_gbps(Collective c, const CollectiveCounts& counts, size_t element_size, int ranks, double seconds) {
  if (seconds <= 0) return 0;
  double bytes = static_cast<double>(counts.param * element_size);
  if (c == Collective::kAllGather || c == Collective::kReduceScatter || c == Collective::kAllToAll) {
    bytes *= std::max(ranks, 1);
  }
  return bytes / 1e9 / seconds;
}

double busbw_factor(Collective c, int ranks) {
  const double n = std::max(ranks, 1);
  switch (c) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1;
  }
  return 1;
}

}  // namespace perflab::collectives
