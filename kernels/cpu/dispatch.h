// Run-time instruction-set dispatch for the CPU kernels' hot loops.
//
// The project builds for the baseline x86-64 ISA (SSE2) so a binary runs on
// every node of a cluster, which leaves our own loops at 128-bit vectors
// while OpenBLAS and PyTorch pick AVX2/AVX-512 at run time. A function
// marked PERFLAB_CPU_DISPATCH is compiled three times (x86-64-v4: AVX-512;
// x86-64-v3: AVX2 + FMA; baseline) and the loader picks the best clone the
// CPU supports once, at start-up (GCC's target_clones, an ifunc). OpenMP
// regions inside the function are cloned with it.
//
// Arithmetic: the project compiles as ISO C++ (no GNU extensions), where GCC
// does not contract a*b+c into an FMA, so the clones differ only in vector
// width, i.e. in the order a `#pragma omp simd reduction` adds its lanes.
// Results are deterministic on one machine; across machines with different
// ISAs they agree to fp32 rounding of that order, not bit for bit.
//
// Off under clang (the sanitizer build) and off the x86-64 GCC path, where
// the functions are compiled once for the target.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(PERFLAB_NO_CPU_DISPATCH)
#define PERFLAB_CPU_DISPATCH \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PERFLAB_CPU_DISPATCH
#endif
