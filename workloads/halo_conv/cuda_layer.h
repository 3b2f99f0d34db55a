// The partitioned convolution layer on one CUDA device (cuDNN through
// kernels/cuda/conv3d.h): this process's slabs, each computed on a stream of
// its own, so P slabs in one process behave like P devices; halos move by
// device-to-device copies between this process's slabs and by NCCL
// send/receive between ranks, on a copy stream. Same variants as the CPU
// layer (cpu_layer.h):
//   naive:   the halo copies, then each slab convolves its padded slab;
//   overlap: each slab convolves the output planes that need no
//            neighbour's planes while the copies run, then the r planes at
//            each side with a neighbour, recomputed whole from its padded
//            tensor once the halo has arrived (overlap_calls, slabs.h: every
//            call of conv3d's direct form, staged only where cuDNN turns a
//            backward-data plane range down; the CPU layer adds corrections
//            instead, the same convolution in other roundings).
// The backward pass exchanges the output gradient's halo after the forward,
// overlapped with the interior data and weight gradients; the weight
// gradients of this process's slabs are summed on the step's stream and
// all-reduced over ranks (NCCL). enqueue() only enqueues: no allocation, and
// no host synchronisation unless sync-free is off, when the host waits for
// each halo exchange (counted, kernels/cuda/host_sync.h). With
// LayerConfig::bf16 every tensor, the weights and the halos are bf16 in
// device memory (cuDNN's bf16 configuration, fp32 accumulation), each
// slab's weight gradient is bf16, and their sum and all-reduce are fp32.
// Host-only header.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "collectives/communicator.h"
#include "workloads/halo_conv/cpu_layer.h"
#include "workloads/halo_conv/gate.h"

namespace perflab::halo_conv {

class CudaHaloLayer {
 public:
  /// `device_comm`: NCCL over the ranks when there are several, else null
  /// (one process). `host_comm` gives rank and size. Plans every cuDNN call.
  CudaHaloLayer(const LayerConfig& config, collectives::Communicator& host_comm,
                collectives::Communicator* device_comm, bool sync_free);
  ~CudaHaloLayer();
  CudaHaloLayer(const CudaHaloLayer&) = delete;
  CudaHaloLayer& operator=(const CudaHaloLayer&) = delete;

  /// Input, weights and output gradient drawn from `seed`, uploaded (synchronous: setup).
  void fill(uint64_t seed);
  /// The step's stream (a cudaStream_t).
  void* stream() const;
  /// Enqueues one step (forward, then backward when configured) on stream().
  void enqueue();
  /// Host synchronisations one step makes: 0 when sync-free, else one per halo exchange.
  int expected_host_syncs() const;

  /// Waits for the device and copies this process's results to the host.
  SlabResults download();

  /// One step's parts alone, enqueued on stream() (work on the slab and copy
  /// streams forked from it and joined back), for the harness to time
  /// between CUDA events (harness/part_timer.h): the halo exchanges, this
  /// variant's convolutions, the weight-gradient sum and all-reduce.
  void enqueue_exchange_alone();
  void enqueue_compute_alone();
  void enqueue_all_reduce_alone();

  /// Halo bytes this process fills per step.
  double halo_bytes_per_step() const;
  /// This process's data-gradient calls that reach cuDNN (planes on both
  /// sides), and how many of them run as forward convolutions
  /// (kernels/cuda/conv3d.h's fallback when cuDNN has no backward-data
  /// algorithm for the shape).
  std::pair<int, int> data_gradient_calls() const;
  /// The first fallen-back call's shape and what cuDNN answered for it ("" when none fell back).
  std::string data_gradient_fallback() const;
  /// This process's convolution calls a step, and how many of them run
  /// staged through a zero-padded block (kernels/cuda/conv3d.h: plane copies
  /// around cuDNN) rather than on the views as they are.
  std::pair<int, int> staged_calls() const;
  const LayerConfig& config() const;

  /// The layer for one stored element (cuda_layer.cc: fp32, or bf16 bits).
  struct Impl;

 private:
  std::unique_ptr<Impl> s_;
};

}  // namespace perflab::halo_conv
