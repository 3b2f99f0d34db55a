// What a device step launches in one iteration, as the code that launches
// it declares: each kernel's name, what it is, its phase and its compulsory
// work (bytes, FLOPs). The profiler matches declarations to the kernels
// CUPTI records (harness/kernel_profile.h) for each kernel's floor; tests
// count a workload's launches per step from it on the CPU, and GPU tests
// check the count against what the device ran. Pure data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/launch.h"

namespace perflab {

/// One kernel launch as the code that makes it declares it
/// (kernels/launch.h): which kernel, what it is, its phase and its work.
using DeclaredKernel = kernels::KernelLaunch;

/// The launches of one iteration, in order.
using LaunchPlan = kernels::LaunchList;

/// Launches per phase of a plan ("forward 9, backward 14, ..."), in the
/// order phases first appear: what a launch-count test prints.
std::vector<std::pair<std::string, int>> launches_per_phase(const LaunchPlan& plan);

}  // namespace perflab
