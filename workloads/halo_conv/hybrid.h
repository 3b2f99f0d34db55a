// The hybrid scheme of NVIDIA's MLPerf 3D U-Net submission (scheme=hybrid):
// the first two levels of the network are spatially split (the layer at
// full resolution, then at half resolution with twice the channels), the
// small quarter-resolution bottleneck is gathered onto every partition and
// computed whole there (replicated: no halo, no weight-gradient
// all-reduce), and its result is split back into the slabs the next level
// continues with. Each level is a real training step on its own seeded
// tensors (no pooling between levels: the scheme's communication and
// compute are what is timed); the run's facts give each part's time and
// what the gather cost.
#pragma once

#include <vector>

#include "collectives/communicator.h"
#include "harness/workload.h"
#include "workloads/halo_conv/cpu_layer.h"

namespace perflab::halo_conv {

/// The levels derived from the configured (first) level.
struct HybridLevels {
  LayerConfig level1, level2;
  LayerConfig bottleneck;  ///< Its whole volume; split like the others for the gather and the split.
};

/// Level 2: half of D, H, W (at least 1), 2x the output channels in and
/// out; bottleneck: a quarter, 4x.
/// Throws UsageError naming the level when `ranks` cannot split it.
HybridLevels hybrid_levels(const LayerConfig& first, int ranks);

/// Multiply-adds of one training step of every level (forward and both gradients).
double hybrid_macs(const HybridLevels& levels);

class CpuHybridStep {
 public:
  CpuHybridStep(const HybridLevels& levels, collectives::Communicator& comm);

  void fill(uint64_t seed);
  void step();

  /// The parts alone, for the measurements.
  void level1() { level1_.step(); }
  void level2() { level2_.step(); }
  void gather();
  void bottleneck();
  void split();

  /// The gate (collective): both split levels against their unpartitioned
  /// convolutions, the gathered bottleneck input against the whole volume,
  /// its output against the whole convolution, the split against it.
  CorrectnessReport check(uint64_t seed);
  /// Bytes every partition receives in the gather (the whole bottleneck
  /// input but its own planes), summed over this process's slabs.
  double gather_bytes() const;

 private:
  void gather_tensor(const std::vector<float>& local, std::vector<float>& whole);

  HybridLevels levels_;
  collectives::Communicator& comm_;
  CpuHaloLayer level1_, level2_;
  std::vector<Slab> all_, mine_;   ///< The bottleneck volume's slabs; this process's.
  int64_t mine_first_ = 0, mine_planes_ = 0, block_planes_ = 0;
  std::vector<float> x_local_, x_whole_, y_whole_, dy_whole_, dx_whole_, w_, dw_;
  std::vector<float> dy_local_, y_local_, dx_local_;
  std::vector<float> send_, recv_, workspace_;
};

}  // namespace perflab::halo_conv
