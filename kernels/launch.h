// What an operator launches, as it declares it beside its run(): one entry
// per kernel launch (or per library call: a cuBLASLt matmul, a CUB
// algorithm, which may launch several kernels of their own), each with the
// kernel it is (a substring of its demangled name, or a family such as
// "gemm"), a label, the phase its caller puts it in and its compulsory work.
// The harness turns a step's list into its launch plan (harness/launch_plan.h):
// the profiler's per-kernel floors and the launch count CPU tests check.
#pragma once

#include <string>
#include <vector>

#include "kernels/roofline.h"

namespace perflab::kernels {

struct KernelLaunch {
  /// Matched against the demangled kernel names CUPTI records: a substring,
  /// or alternatives separated by '|' ("gemm|gemv|nvjet": cuBLASLt names
  /// its kernels several ways).
  std::string kernel;
  std::string label;   ///< What it is: "top layer 0 forward GEMM".
  std::string phase;   ///< forward, backward, optimizer, loss, exchange ... (the caller's).
  KernelCost cost;
};

using LaunchList = std::vector<KernelLaunch>;

/// Appends `more` to `list` with their phase set to `phase`.
inline void append_launches(LaunchList& list, LaunchList more, const std::string& phase) {
  for (KernelLaunch& k : more) {
    k.phase = phase;
    list.push_back(std::move(k));
  }
}

}  // namespace perflab::kernels
