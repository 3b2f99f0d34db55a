// How halo_conv splits a volume along D: the partitions (slabs), which
// process owns which, their neighbours, and whether the overlapped variant
// can pay on them. Pure functions, tested without a communicator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perflab::halo_conv {

/// Planes [first, first + planes) of the volume.
struct Slab {
  int64_t first = 0;
  int64_t planes = 0;
};

/// `depth` planes split into `parts` slabs in order; the first depth % parts
/// slabs are one plane thicker (D need not be divisible by the parts).
std::vector<Slab> split_planes(int64_t depth, int parts);

/// The partitions of a run: `ranks` processes, each owning
/// `per_rank` consecutive slabs (global slab index rank * per_rank + j).
struct Partitioning {
  int64_t depth = 1;
  int ranks = 1;
  int per_rank = 1;
  int halo = 1;  ///< r = k / 2: planes each slab needs from each neighbour.

  int total() const { return ranks * per_rank; }
  /// Every slab, in global order.
  std::vector<Slab> slabs() const { return split_planes(depth, total()); }
  /// Rank owning global slab `s`.
  int owner(int s) const { return s / per_rank; }
};

/// Halos the `count` consecutive slabs from global slab `first` receive per
/// exchange: one from each neighbour, none beyond the volume's ends.
int halos_received(int first, int count, int total);

/// Throws UsageError with one line when the volume cannot be split this
/// way: a slab thinner than the halo (its neighbour would need planes from
/// two slabs away), or more slabs than planes.
void check_partitioning(const Partitioning& p);

/// The thinnest slab in which the overlapped variant can hide its halo: a
/// slab of fewer than 3 kernel widths is mostly boundary, so its interior
/// convolution is too short to cover the transfer and the correction work
/// is a large share of the slab's.
int64_t overlap_min_planes(int k);

/// One convolution of a slab in the overlapped variant. Plane ranges count
/// from the slab's first own plane: its padded tensors (x, dy) hold planes
/// [-r, L + r), the halo planes outside [0, L) zero where no neighbour sends
/// them. `in` is a range of the padded tensor the pass reads (x forward and
/// for the weight gradient, dy for the data gradient), `out` a range of its
/// output (y forward, dx for the data gradient) or, for the weight gradient,
/// of dy's own planes. Outputs are written, never accumulated.
struct OverlapCall {
  enum class Pass { kForward, kData, kFilter };
  Pass pass = Pass::kForward;
  /// Reads this pass's halo from a neighbour: runs once the halo arrived.
  bool after_halo = false;
  int64_t in_first = 0, in_planes = 0;
  int64_t out_first = 0, out_planes = 0;
  int64_t d_offset = 0;  ///< conv3d's d_offset (kernels/cpu/conv3d.h) between in and out.
};

/// The overlapped variant's calls for a slab of `planes` (L >= r) planes,
/// halo r >= 1, with or without a neighbour before it (top) and after it
/// (bottom): the forward pass, then with `backward` the data and weight
/// gradients, in order. Before the halo: the output planes that need no
/// neighbour's planes, from the slab (and its zero padding at a volume
/// end). After: the r output planes at each side with a neighbour, each
/// recomputed whole from 3r padded planes. The weight gradient runs before
/// dy's halo, over x's padded planes: x's halo arrived in the forward pass.
/// Every call reads exactly 2r planes more than it writes, with the halo
/// planes all inside its input (no zero padding along D): what cuDNN
/// convolves on the views as they are, without staging them.
std::vector<OverlapCall> overlap_calls(int64_t planes, int64_t r, bool top, bool bottom, bool backward);

/// Empty when the overlapped variant is in effect on `p` with kernel `k`,
/// else why not (in words, for "overlap: requested, not in effect: ...").
std::string overlap_not_in_effect_reason(const Partitioning& p, int k);

}  // namespace perflab::halo_conv
