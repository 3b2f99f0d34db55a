#include "workloads/halo_conv/slabs.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::halo_conv {

std::vector<Slab> split_planes(int64_t depth, int parts) {
  std::vector<Slab> out;
  if (parts < 1) return out;
  out.reserve(static_cast<size_t>(parts));
  const int64_t base = depth / parts, extra = depth % parts;
  int64_t first = 0;
  for (int s = 0; s < parts; ++s) {
    const int64_t planes = base + (s < extra ? 1 : 0);
    out.push_back({first, planes});
    first += planes;
  }
  return out;
}

int halos_received(int first, int count, int total) {
  int halos = 0;
  for (int s = first; s < first + count; ++s) halos += (s > 0 ? 1 : 0) + (s + 1 < total ? 1 : 0);
  return halos;
}

void check_partitioning(const Partitioning& p) {
  const int total = p.total();
  if (total > p.depth) {
    throw UsageError(fmt::format("{} partitions ({} rank(s) x partitions={}) but depth is {} planes; "
                                 "use at most {} partitions or a deeper volume",
                                 total, p.ranks, p.per_rank, p.depth, p.depth));
  }
  if (total < 2) return;
  const int64_t thinnest = p.depth / total;
  if (thinnest < p.halo) {
    throw UsageError(fmt::format("depth {} in {} partitions gives slabs of {} plane(s), thinner than the "
                                 "halo of {} planes (kernel {}); use at most {} partitions or a deeper volume",
                                 p.depth, total, thinnest, p.halo, 2 * p.halo + 1,
                                 std::max<int64_t>(1, p.depth / p.halo)));
  }
}

int64_t overlap_min_planes(int k) { return 3 * static_cast<int64_t>(k); }

std::vector<OverlapCall> overlap_calls(int64_t planes, int64_t r, bool top, bool bottom, bool backward) {
  using Pass = OverlapCall::Pass;
  std::vector<OverlapCall> calls;
  const int64_t first = top ? r : 0, end = bottom ? planes - r : planes;  // needs no neighbour's planes
  // out [f, f + n) from in [f - r, f + n + r): d_offset r forward, -r for
  // the data gradient (its input is the output's side of the forward).
  const auto add = [&](Pass pass, bool after_halo, int64_t f, int64_t n) {
    if (n <= 0) return;
    calls.push_back({pass, after_halo, f - r, n + 2 * r, f, n, pass == Pass::kData ? -r : r});
  };
  for (const Pass pass : {Pass::kForward, Pass::kData}) {
    if (pass == Pass::kData && !backward) break;
    add(pass, false, first, end - first);  // none when the sides meet
    if (pass == Pass::kData) calls.push_back({Pass::kFilter, false, -r, planes + 2 * r, 0, planes, r});
    if (top) add(pass, true, 0, r);
    if (bottom) add(pass, true, planes - r, r);
  }
  return calls;
}

std::string overlap_not_in_effect_reason(const Partitioning& p, int k) {
  if (p.total() < 2) return "one partition: there is no halo to exchange";
  if (k < 3) return "kernel 1 needs no halo";
  const int64_t thinnest = p.depth / p.total();
  if (thinnest < overlap_min_planes(k)) {
    return fmt::format("slabs of {} plane(s) are thinner than 3 kernel widths ({} planes): the interior is "
                       "too short to hide the transfer; ran naive",
                       thinnest, overlap_min_planes(k));
  }
  return "";
}

}  // namespace perflab::halo_conv
