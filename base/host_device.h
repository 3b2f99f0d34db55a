// PERFLAB_HOST_DEVICE marks a function that host code and CUDA kernels
// share (__host__ __device__ under nvcc, nothing elsewhere), so a CPU
// reference and its kernel use one definition.
#pragma once

#if defined(__CUDACC__)
#define PERFLAB_HOST_DEVICE __host__ __device__
#else
#define PERFLAB_HOST_DEVICE
#endif
