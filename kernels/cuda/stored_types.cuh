// How kernels read and write tensors stored in fp32, bf16 or fp16: values
// widened to fp32 as they are loaded, results rounded to nearest even as
// they are stored; one at a time, four at a time from an address aligned
// to four elements (one 16-byte fp32 access, two 4-byte pair accesses for
// the 16-bit types), or eight stored at once from an address aligned to
// eight (store8: one 16-byte access for the 16-bit types). Device code only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace perflab::kernels::cuda {

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }

__device__ __forceinline__ void put(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void put(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void put(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ float4 load4(const __half* p) {
  const auto* h = reinterpret_cast<const __half2*>(p);
  const float2 lo = __half22float2(h[0]), hi = __half22float2(h[1]);
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}
__device__ __forceinline__ float4 load4(const __nv_bfloat16* p) {
  const auto* h = reinterpret_cast<const __nv_bfloat162*>(p);
  const float2 lo = __bfloat1622float2(h[0]), hi = __bfloat1622float2(h[1]);
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}

__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ __forceinline__ void store4(__half* p, float4 v) {
  auto* h = reinterpret_cast<__half2*>(p);
  h[0] = __floats2half2_rn(v.x, v.y);
  h[1] = __floats2half2_rn(v.z, v.w);
}
__device__ __forceinline__ void store4(__nv_bfloat16* p, float4 v) {
  auto* h = reinterpret_cast<__nv_bfloat162*>(p);
  h[0] = __floats2bfloat162_rn(v.x, v.y);
  h[1] = __floats2bfloat162_rn(v.z, v.w);
}

/// Eight values to an address aligned to eight elements, rounded as store4
/// rounds: two 16-byte accesses in fp32, one for the 16-bit types (where
/// two store4 calls would make four 4-byte ones).
__device__ __forceinline__ void store8(float* p, const float (&v)[8]) {
  store4(p, make_float4(v[0], v[1], v[2], v[3]));
  store4(p + 4, make_float4(v[4], v[5], v[6], v[7]));
}
template <typename Pair>
__device__ __forceinline__ uint32_t pair_bits(Pair h) {
  static_assert(sizeof(Pair) == sizeof(uint32_t), "a pair of 16-bit values");
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}
__device__ __forceinline__ void store8(__half* p, const float (&v)[8]) {
  *reinterpret_cast<uint4*>(p) =
      make_uint4(pair_bits(__floats2half2_rn(v[0], v[1])), pair_bits(__floats2half2_rn(v[2], v[3])),
                 pair_bits(__floats2half2_rn(v[4], v[5])), pair_bits(__floats2half2_rn(v[6], v[7])));
}
__device__ __forceinline__ void store8(__nv_bfloat16* p, const float (&v)[8]) {
  *reinterpret_cast<uint4*>(p) =
      make_uint4(pair_bits(__floats2bfloat162_rn(v[0], v[1])), pair_bits(__floats2bfloat162_rn(v[2], v[3])),
                 pair_bits(__floats2bfloat162_rn(v[4], v[5])), pair_bits(__floats2bfloat162_rn(v[6], v[7])));
}

}  // namespace perflab::kernels::cuda
