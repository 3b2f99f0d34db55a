// Environment capture: the host, the build and the libraries a result was
// produced with, recorded in every result and shown by `perflab env`.
// Capturing never fails for lack of a GPU: the CUDA section then says why
// no device is usable.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/device.h"

namespace perflab {

/// Captures the environment as a JSON object:
///   hostname, os, distribution, cpu_model, logical_cores, memory_bytes,
///   perflab_version, git_revision, compiler, build_type,
///   openblas {config, num_threads, parallel}, openmp_max_threads,
///   env {OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, CUDA_VISIBLE_DEVICES: when set},
///   cuda {built, available, reason (when !available), runtime_version,
///         driver_version (null without a driver), architectures, devices[],
///         cublaslt_version, cudnn_version, cudnn_compiled_version,
///         nccl_version, nccl_compiled_version (each when built in)}.
/// Versions are strings such as "13.0" or "9.19.0". Never throws for a
/// missing device or driver.
nlohmann::json capture_environment();
/// The same, with devices as `probe` found them (no second probe).
nlohmann::json capture_environment(const DeviceProbe& probe);

/// Renders a captured environment as aligned `label  value` lines for
/// `perflab env`. Fields missing from `env` are left out, so environments
/// read back from older results still render.
std::string format_environment(const nlohmann::json& env);

}  // namespace perflab
