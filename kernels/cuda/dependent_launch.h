// Programmatic dependent launch (compute capability 9.0 and later), the
// host's half: whether this thread's launches through launch_kernel
// (dependent_launch.cuh) may start before the kernel ahead of them in the
// stream has ended.
//
// A kernel launched so has its blocks scheduled as the kernel before it
// ends, instead of after that kernel's end and its memory flush are
// processed, and waits at its first statement (wait_for_prior_kernels)
// until that kernel is done and its writes are visible. What it saves is
// the gap between two dependent kernels, per kernel boundary on a
// critical path of many short kernels (a training step at a small batch).
// Nothing else changes: every read and write of the kernel comes after
// the wait, so the results are the same bits (a GPU test holds it).
//
// No kernel of ours asks for its successors early
// (griddepcontrol.launch_dependents): after one of ours the next kernel is
// let in as its last block exits, so that kernel's profiled time includes
// at most the flush before it, and its waiting blocks hold no SM that a
// side stream's kernels could use. A library's kernel before ours (a
// cuBLASLt GEMM) may ask early; then our kernel's blocks wait on the SMs
// through that kernel's tail and its profiled time includes the wait.
// Either way the results are the same.
#pragma once

namespace perflab::kernels::cuda {

/// Whether launches on this thread carry the attribute (default: no).
bool dependent_launches();

/// On, or off, for launch_kernel calls on this thread while it lives;
/// restores what was there before. A model's training step holds one, so
/// a captured graph records its kernels' programmatic edges.
class DependentLaunches {
 public:
  explicit DependentLaunches(bool on);
  ~DependentLaunches();
  DependentLaunches(const DependentLaunches&) = delete;
  DependentLaunches& operator=(const DependentLaunches&) = delete;

 private:
  bool previous_;
};

/// Whether `device` can start a kernel before the one ahead of it ends
/// (compute capability 9.0 or later) and this build's kernels wait for it
/// (compiled from compute_90 or later: below, the wait is compiled out);
/// false without a device. A failed query's error is cleared (with any
/// earlier one not yet read).
bool device_supports_dependent_launch(int device);

}  // namespace perflab::kernels::cuda
