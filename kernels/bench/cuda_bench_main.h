// What every kernels/bench/*_cuda_bench.cc's main does around its
// benchmarks, in one place: without a usable CUDA device, one line on
// stderr naming the binary and why, exit 1; Google Benchmark's flags
// parsed (an unknown one: its line, exit 2); the binary's own setup
// (optional: device handles, registrations); the benchmarks run. An
// exception from the setup or a benchmark ends the run with one line and
// exit 1.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <functional>

#include "kernels/cuda/device_present.h"

namespace perflab::kernels::bench {

/// `name`: the binary's name for the lines above ("bench_cuda_graph").
/// `setup` runs after the flags are parsed, on a machine with a device.
inline int cuda_benchmark_main(int argc, char** argv, const char* name,
                               const std::function<void(const cuda::DevicePresence&)>& setup = {}) {
  const cuda::DevicePresence presence = cuda::device_present();
  if (!presence.present) {
    std::fprintf(stderr, "%s: %s\n", name, presence.reason.c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  try {
    if (setup) setup(presence);
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace perflab::kernels::bench
