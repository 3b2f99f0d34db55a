// The spatially partitioned convolution layer on the CPU: this process's
// slabs of a volume split along D, their halo exchange (copies between
// slabs of this process, the communicator's grouped send/receive between
// ranks), and one training step, forward and backward, in either variant:
//   naive:   exchange the halo, wait, convolve the halo-padded slab;
//   overlap: start the exchange on this thread while a background thread
//            convolves the slab as if its halo were zero, then add the
//            boundary corrections computed from the arrived halo planes.
// The backward pass exchanges the output gradient's halo the same way
// (data gradient), computes the weight gradient from the forward's halo,
// and sums the weight gradient over slabs and ranks (all-reduce). With
// LayerConfig::bf16 the numbers are bf16, emulated (see LayerConfig).
#pragma once

#include <memory>
#include <vector>

#include "collectives/communicator.h"
#include "kernels/cpu/conv3d.h"
#include "workloads/halo_conv/background_task.h"
#include "workloads/halo_conv/seeded_tensor.h"
#include "workloads/halo_conv/slabs.h"

namespace perflab::halo_conv {

/// What one process computes.
struct LayerConfig {
  kernels::cpu::Conv3dGeometry geometry;
  int64_t depth = 1;
  int per_rank = 1;       ///< Slabs in this process.
  bool overlap = false;   ///< The overlapped variant (in effect).
  bool backward = true;   ///< Forward and backward, or forward only.
  /// bf16 storage: input, weights, output gradient, output, input gradient
  /// and each partition's weight gradient hold bf16 values (on the cuda
  /// backend bf16 memory, halos moved as bf16; on the cpu backend fp32
  /// memory rounded to bf16 after each convolution call, as the cuda
  /// backend stores, but for a staged call's extra rounding of its block);
  /// the weight gradient is summed over
  /// partitions in fp32.
  bool bf16 = false;
};

/// One tensor split into this process's slabs: each slab stored with room
/// for its halo (planes [0, r) and [r + L, L + 2r) around its own L), and
/// the halo planes as they arrive, dense ([N][C][r][H][W]).
class HaloField {
 public:
  HaloField(const kernels::cpu::Conv3dGeometry& g, int64_t channels, const std::vector<Slab>& slabs,
            int first_global, int total_slabs);

  bool has_top(size_t j) const { return first_global_ + static_cast<int>(j) > 0; }
  bool has_bottom(size_t j) const { return first_global_ + static_cast<int>(j) + 1 < total_; }
  /// The slab's own planes.
  kernels::cpu::PlaneView interior(size_t j);
  /// The slab with its halo planes (zero where the volume ends).
  kernels::cpu::ConstPlaneView padded(size_t j) const;
  /// The r planes above / below the slab, as received.
  kernels::cpu::ConstPlaneView top(size_t j) const;
  kernels::cpu::ConstPlaneView bottom(size_t j) const;

  /// Every slab's halo filled from its neighbours: copies between this
  /// process's slabs, send/receive with the ranks above and below.
  void exchange(collectives::Communicator& comm);
  /// The received halos copied into the padded slabs (the naive variant).
  void unpack();
  /// Bytes of the halos this process's slabs receive per exchange (from
  /// each other and from the ranks around).
  double halo_bytes() const;

 private:
  void pack(kernels::cpu::ConstPlaneView from, std::vector<float>& to) const;

  int64_t channels_, hw_, r_, batch_;
  std::vector<Slab> slabs_;
  int first_global_, total_;
  std::vector<std::vector<float>> padded_, top_, bottom_;
  std::vector<float> send_top_, send_bottom_;
};

class CpuHaloLayer {
 public:
  CpuHaloLayer(const LayerConfig& config, collectives::Communicator& comm);

  /// Input, weights and output gradient drawn from `seed` (this process's slabs).
  void fill(uint64_t seed);
  /// One step: forward, then backward when configured.
  void step();
  void forward();
  void backward();

  /// The halo exchanges of one step alone (input, and output gradient when
  /// backward), for the measurements.
  void exchange_alone();
  /// This variant's convolutions of one step alone (no exchange; the halos
  /// as they last arrived), for the measurements.
  void compute_alone();
  /// The weight gradient's all-reduce alone.
  void all_reduce_alone();

  const LayerConfig& config() const { return config_; }
  const std::vector<Slab>& my_slabs() const { return mine_; }
  kernels::cpu::ConstPlaneView output(size_t j) const;
  kernels::cpu::ConstPlaneView input_grad(size_t j) const;
  const std::vector<float>& weight_grad() const { return dw_; }
  const std::vector<float>& weights() const { return w_; }
  /// Halo bytes this process sends per step.
  double halo_bytes_per_step() const;

 private:
  void forward_naive();
  void forward_overlap();
  void backward_naive();
  void backward_overlap();
  // The convolutions, each over every slab of this process, into a workspace:
  // the padded slab (naive); the interior with the halo taken as zero, the
  // weight gradient's share of the input halo included; the corrections
  // from the arrived halo planes (overlap).
  void forward_padded(float* ws);
  void forward_interior(float* ws);
  void forward_corrections(float* ws);
  void backward_padded(float* ws);
  void backward_interior(float* ws);
  void backward_corrections(float* ws);
  kernels::cpu::PlaneView output_view(size_t j);
  kernels::cpu::PlaneView input_grad_view(size_t j);
  // bf16 emulation (no-ops in fp32): a call's output rounded to bf16 as it
  // is stored; slab j's weight-gradient calls accumulate into a bf16 buffer
  // of their own (slab_dw), rounded after each call, then added to dw_ in
  // fp32 (slab_dw_done), as the cuda backend's partitions do.
  void stored(kernels::cpu::PlaneView v, int64_t channels) const;
  float* slab_dw();
  bool slab_dw_accumulates(size_t j) const;
  void slab_dw_stored();
  void slab_dw_done(size_t j);

  LayerConfig config_;
  collectives::Communicator& comm_;
  int64_t r_, hw_;
  std::vector<Slab> mine_;
  HaloField x_, dy_;
  std::vector<std::vector<float>> y_, dx_;
  std::vector<float> w_, dw_, slab_dw_;
  std::vector<float> workspace_, worker_workspace_;
  std::unique_ptr<BackgroundTask> worker_;
};

/// The whole volume's shape of the layer's input (C_in) or output (C_out).
VolumeShape input_shape(const LayerConfig& c);
VolumeShape output_shape(const LayerConfig& c);

}  // namespace perflab::halo_conv
