// DLRM dot interaction on the GPU: one thread block per sample.
#include <cuda_bf16.h>
#include <mma.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/interaction.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxSharedBytes = 48 * 1024;  // without the opt-in attribute

/// Floats between feature rows in the backward's shared memory: odd, so
/// that threads reading column d of different rows hit different banks.
int64_t row_stride(int64_t dim) { return dim % 2 == 1 ? dim : dim + 1; }

/// Floats between feature rows in the forward's shared memory: an odd
/// number of 16-byte vectors (rows are read as vectors), so that the rows
/// of eight consecutive features start in eight different 16-byte bank
/// groups whatever dim is.
int64_t forward_row_stride(int64_t dim) { return 4 * (((dim + 3) / 4) | 1); }

__host__ __device__ int64_t pair_count(int features) {
  return int64_t{features} * (features - 1) / 2;
}

/// The pair (i, j), i > j, at index p = i*(i-1)/2 + j.
__device__ void pair_from_index(int64_t p, int64_t* i, int64_t* j) {
  int64_t r = static_cast<int64_t>((1.0 + sqrt(1.0 + 8.0 * static_cast<double>(p))) * 0.5);
  while (r * (r - 1) / 2 > p) --r;
  while ((r + 1) * r / 2 <= p) ++r;
  *i = r;
  *j = p - r * (r - 1) / 2;
}

// Stored types (InteractionArguments::activations, ::embeddings): widen and
// put from stored_types.cuh.

/// Copies the sample's features into z [features, stride] (x first, then
/// the embedding rows), widened to fp32; also copies x through to `x_out`
/// (its own type: exact) when not null. Indices within a sample are 32-bit:
/// features * stride fits the block's shared memory (check() caps it at
/// 48 KiB), and 64-bit division was a large part of the kernels' instructions.
template <typename TA, typename TE>
__device__ void load_features(const TA* xb, const TE* eb, int features, int dim, int stride, float* z, TA* x_out) {
  const int total = features * dim;
  for (int k = static_cast<int>(threadIdx.x); k < total; k += static_cast<int>(blockDim.x)) {
    const int f = k / dim;
    const int d = k - f * dim;
    if (k < dim) {
      z[d] = widen(xb[k]);
      if (x_out != nullptr) x_out[k] = xb[k];
    } else {
      z[f * stride + d] = widen(eb[k - dim]);
    }
  }
}

/// out = concat(x, z_i · z_j for i > j). A thread per pair reads both rows
/// four floats at a time (16-byte shared loads: two loads per four fused
/// multiply-adds, where one float at a time took two per one) and sums in
/// d order; consecutive pairs share i (a broadcast) and take consecutive j
/// (different bank groups, forward_row_stride).
template <typename TA, typename TE>
__global__ void interaction_forward_kernel(const TA* __restrict__ x, const TE* __restrict__ emb, int features,
                                           int64_t dim64, int64_t stride64, int64_t width, TA* __restrict__ out) {
  extern __shared__ float4 forward_smem[];  // float4: 16-byte aligned rows
  float* z = reinterpret_cast<float*>(forward_smem);  // [features, stride]
  const int dim = static_cast<int>(dim64);
  const int stride = static_cast<int>(stride64);
  const int64_t b = blockIdx.x;
  TA* ob = out + b * width;
  load_features(x + b * dim64, emb + b * (features - 1) * dim64, features, dim, stride, z, ob);
  __syncthreads();
  const int64_t pairs = pair_count(features);
  const int vectors = dim / 4;
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    int64_t i = 0;
    int64_t j = 0;
    pair_from_index(p, &i, &j);
    const float* zi = z + i * stride;
    const float* zj = z + j * stride;
    const auto* vi = reinterpret_cast<const float4*>(zi);
    const auto* vj = reinterpret_cast<const float4*>(zj);
    float sum = 0.0f;
    for (int v = 0; v < vectors; ++v) {
      const float4 a = vi[v];
      const float4 c = vj[v];
      sum = fmaf(a.x, c.x, sum);
      sum = fmaf(a.y, c.y, sum);
      sum = fmaf(a.z, c.z, sum);
      sum = fmaf(a.w, c.w, sum);
    }
    for (int d = 4 * vectors; d < dim; ++d) sum = fmaf(zi[d], zj[d], sum);
    put(ob, dim + p, sum);
  }
}

/// Features whose gradients one backward thread computes together.
constexpr int kFeatureBlock = 4;

__host__ __device__ int padded_features(int features) {
  return (features + kFeatureBlock - 1) / kFeatureBlock * kFeatureBlock;
}

/// Floats of z in the backward's shared memory, rounded up so that the
/// pair-gradient matrix after it starts 16-byte aligned.
__host__ __device__ int64_t backward_z_floats(int features, int64_t stride) {
  return (int64_t{features} * stride + 3) / 4 * 4;
}

/// dz_f = Σ_j g_fj z_j per sample (g symmetric, zero diagonal), plus the
/// passthrough db[d] for x (f = 0). The pair gradients are laid out in
/// shared memory as gt[j][f] (rows of padded_features(F) floats, zero on the
/// diagonal and past F), so four consecutive features' g_fj are one 16-byte
/// broadcast load. Thread k owns column d = k % dim of features 4q .. 4q+3
/// (q = k / dim): per j it loads z_j[d] once and makes four fused
/// multiply-adds, a quarter of the shared-memory loads per multiply-add of
/// a thread per (f, d) and no index arithmetic in the loop. The sum runs
/// over ascending j, as the CPU's; the diagonal adds an exact zero. Fused
/// multiply-adds round once where the CPU rounds twice: the results are
/// within the tests' first-order bound, not bit-equal to the CPU's.
template <typename TA, typename TE>
__global__ void interaction_backward_kernel(const TA* __restrict__ x, const TE* __restrict__ emb,
                                            const TA* __restrict__ dout, int features, int64_t dim64,
                                            int64_t stride64, int64_t width, TA* __restrict__ dx,
                                            float* __restrict__ demb, bool dx_relu) {
  extern __shared__ float4 backward_smem[];  // float4: 16-byte aligned
  const int dim = static_cast<int>(dim64);
  const int stride = static_cast<int>(stride64);
  const int fp = padded_features(features);
  float* z = reinterpret_cast<float*>(backward_smem);  // [features, stride]
  float* gt = z + backward_z_floats(features, stride64);  // [features, fp]
  const int64_t b = blockIdx.x;
  const TA* db = dout + b * width;
  load_features(x + b * dim64, emb + b * (features - 1) * dim64, features, dim, stride, z, static_cast<TA*>(nullptr));
  const int entries = features * fp;
  for (int e = static_cast<int>(threadIdx.x); e < entries; e += static_cast<int>(blockDim.x)) {
    const int j = e / fp;
    const int f = e - j * fp;
    float g = 0.0f;
    if (f < features && f != j) g = widen(db[dim + (f > j ? f * (f - 1) / 2 + j : j * (j - 1) / 2 + f)]);
    gt[e] = g;
  }
  __syncthreads();
  TA* dxb = dx + b * dim64;
  float* deb = demb + b * (features - 1) * dim64;
  const int total = fp / kFeatureBlock * dim;
  for (int k = static_cast<int>(threadIdx.x); k < total; k += static_cast<int>(blockDim.x)) {
    const int q = k / dim;
    const int d = k - q * dim;
    const int f0 = q * kFeatureBlock;
    float a0 = f0 == 0 ? widen(db[d]) : 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    const float* gj = gt + f0;
    const float* zj = z + d;
    for (int j = 0; j < features; ++j) {
      const float4 g = *reinterpret_cast<const float4*>(gj);
      const float v = *zj;
      a0 = fmaf(g.x, v, a0);
      a1 = fmaf(g.y, v, a1);
      a2 = fmaf(g.z, v, a2);
      a3 = fmaf(g.w, v, a3);
      gj += fp;
      zj += stride;
    }
    const float acc[kFeatureBlock] = {a0, a1, a2, a3};
    for (int r = 0; r < kFeatureBlock && f0 + r < features; ++r) {
      const int f = f0 + r;
      if (f == 0) {
        put(dxb, d, dx_relu && !(z[d] > 0.0f) ? 0.0f : acc[r]);  // z row 0 is x
      } else {
        deb[(f - 1) * dim + d] = acc[r];
      }
    }
  }
}

// ---- TF32 tensor cores (InteractionArguments::tensor_cores) ----------------

constexpr int kTcRows = 32;            // features padded to two 16-row tiles
constexpr int kTcSamplesPerBlock = 2;  // a warp each
/// Floats between rows of the 32 x 32 pair matrix (forward Z·Zᵀ, backward
/// G): 36, not 32, so a tile's eight rows start in different banks (and
/// every 16-row tile stays 32-byte aligned: 16 * 36 * 4 bytes).
constexpr int kTcPairStride = 36;

/// Floats between feature rows in the tensor-core kernels' shared memory:
/// dim + 4 (a multiple of 4, as WMMA's ldm must be for float, and every
/// 16-row tile 32-byte aligned).
__host__ __device__ int64_t tc_row_stride(int64_t dim) { return dim + 4; }

/// Floats one warp (one sample) uses: its features, the 32 x 32 pair matrix
/// (forward: Z·Zᵀ; backward: G) and a 16 x 16 staging tile.
__host__ __device__ int64_t tc_warp_floats(int64_t dim) {
  return kTcRows * tc_row_stride(dim) + kTcRows * kTcPairStride + 16 * 16;
}

size_t tc_shared_bytes(int64_t dim) {
  return static_cast<size_t>(kTcSamplesPerBlock * tc_warp_floats(dim)) * sizeof(float);
}

/// Loads the sample's features into z [32, stride] (x, then the embedding
/// rows, then zero rows up to 32), four values at a time (dim % 16 == 0),
/// widened to fp32.
template <typename TA, typename TE>
__device__ void tc_load_features(const TA* xb, const TE* eb, int features, int dim, int stride, float* z, int lane) {
  const int vectors = dim / 4;
  for (int k = lane; k < kTcRows * vectors; k += 32) {
    const int f = k / vectors;
    const int v = k - f * vectors;
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (f == 0) {
      value = load4(xb + 4 * v);
    } else if (f < features) {
      value = load4(eb + static_cast<int64_t>(f - 1) * dim + 4 * v);
    }
    *reinterpret_cast<float4*>(z + f * stride + 4 * v) = value;
  }
}

template <typename Fragment>
__device__ void to_tf32(Fragment& fragment) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  for (int t = 0; t < fragment.num_elements; ++t) fragment.x[t] = nvcuda::wmma::__float_to_tf32(fragment.x[t]);
#endif
}

/// The tensor-core kernels' shared epilogues (TF32 and bf16): the pair
/// matrix's lower triangle into out's pair columns; a 16 x 16 tile of
/// dZ = G·Z (features m*16.., columns n..) into dx (x's row, with the
/// passthrough gradient and the optional dReLU: z row 0 holds x) and demb;
/// the pair gradients into the symmetric matrix G (zero elsewhere, set before).
template <typename TA>
__device__ void tc_write_pairs(TA* ob, int dim, int features, const float* s, int lane) {
  const int pairs = features * (features - 1) / 2;
  for (int p = lane; p < pairs; p += 32) {
    int64_t i = 0, j = 0;
    pair_from_index(p, &i, &j);
    put(ob, dim + p, s[i * kTcPairStride + j]);
  }
}

template <typename TA, typename TZ>
__device__ void tc_write_gradient_tile(const float* tile, int m, int n, int features, int dim, const TZ* z,
                                       const TA* db, bool dx_relu, TA* dxb, float* deb, int lane) {
  for (int e = lane; e < 16 * 16; e += 32) {
    const int f = m * 16 + e / 16, d = n + e % 16;
    if (f == 0) {
      put(dxb, d, dx_relu && !(widen(z[d]) > 0.0f) ? 0.0f : widen(db[d]) + tile[e]);
    } else if (f < features) {
      deb[static_cast<int64_t>(f - 1) * dim + d] = tile[e];
    }
  }
}

template <typename TG, typename TA>
__device__ void tc_fill_pair_gradients(const TA* db, int dim, int features, TG* g, int g_stride, int lane) {
  const int pairs = features * (features - 1) / 2;
  for (int p = lane; p < pairs; p += 32) {
    int64_t i = 0, j = 0;
    pair_from_index(p, &i, &j);
    TG v;
    if constexpr (std::is_same_v<TG, float>) {
      v = widen(db[dim + p]);
    } else {
      v = db[dim + p];  // bf16 into bf16: exact
    }
    g[i * g_stride + j] = v;
    g[j * g_stride + i] = v;
  }
}

/// out = concat(x, z_i · z_j for i > j): a warp per sample, the lower
/// triangle's 16 x 16 tiles of Z·Zᵀ on tensor cores.
template <typename TA, typename TE>
__global__ void interaction_forward_tc_kernel(const TA* __restrict__ x, const TE* __restrict__ emb, int64_t batch,
                                              int features, int dim, int64_t width, TA* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;  // a whole warp leaves together
  const auto stride = static_cast<int>(tc_row_stride(dim));
  float* z = tc_smem + static_cast<int64_t>(warp) * tc_warp_floats(dim);
  float* s = z + kTcRows * stride;  // [32, kTcPairStride]: Z·Zᵀ's lower tiles
  tc_load_features(x + b * dim, emb + b * static_cast<int64_t>(features - 1) * dim, features, dim, stride, z, lane);
  __syncwarp();
  const int tiles = features > 16 ? 2 : 1;
  for (int ti = 0; ti < tiles; ++ti) {
    for (int tj = 0; tj <= ti; ++tj) {
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < dim; k += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bt;
        wmma::load_matrix_sync(a, z + ti * 16 * stride + k, stride);
        wmma::load_matrix_sync(bt, z + tj * 16 * stride + k, stride);  // Zᵀ: rows of Z as columns
        to_tf32(a);
        to_tf32(bt);
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(s + ti * 16 * kTcPairStride + tj * 16, acc, kTcPairStride, wmma::mem_row_major);
    }
  }
  __syncwarp();
  TA* ob = out + b * width;
  for (int d = lane; d < dim; d += 32) put(ob, d, z[d]);  // the passthrough: widened and back, exact
  tc_write_pairs(ob, dim, features, s, lane);
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without TF32 tensor cores: fail loudly, never leave out unwritten
#endif
}

/// dx = dout[:, :dim] + Σ_j g_0j z_j, demb[t] = Σ_j g_(t+1)j z_j: a warp per
/// sample, dZ = G·Z on tensor cores (G symmetric, zero diagonal and padding).
template <typename TA, typename TE>
__global__ void interaction_backward_tc_kernel(const TA* __restrict__ x, const TE* __restrict__ emb,
                                               const TA* __restrict__ dout, int64_t batch, int features, int dim,
                                               int64_t width, TA* __restrict__ dx, float* __restrict__ demb,
                                               bool dx_relu) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;
  const auto stride = static_cast<int>(tc_row_stride(dim));
  float* z = tc_smem + static_cast<int64_t>(warp) * tc_warp_floats(dim);
  float* g = z + kTcRows * stride;            // [32, kTcPairStride]
  float* tile = g + kTcRows * kTcPairStride;  // [16, 16] staging
  tc_load_features(x + b * dim, emb + b * static_cast<int64_t>(features - 1) * dim, features, dim, stride, z, lane);
  for (int k = lane; k < kTcRows * kTcPairStride; k += 32) g[k] = 0.0f;
  __syncwarp();
  const TA* db = dout + b * width;
  tc_fill_pair_gradients(db, dim, features, g, kTcPairStride, lane);
  __syncwarp();
  TA* dxb = dx + b * dim;
  float* deb = demb + b * static_cast<int64_t>(features - 1) * dim;
  const int row_tiles = features > 16 ? 2 : 1;
  const int k_end = (features + 7) / 8 * 8;  // G's columns and Z's rows past F are zero
  for (int m = 0; m < row_tiles; ++m) {
    for (int n = 0; n < dim; n += 16) {
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < k_end; k += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> bz;
        wmma::load_matrix_sync(a, g + m * 16 * kTcPairStride + k, kTcPairStride);
        wmma::load_matrix_sync(bz, z + k * stride + n, stride);
        to_tf32(a);
        to_tf32(bz);
        wmma::mma_sync(acc, a, bz, acc);
      }
      wmma::store_matrix_sync(tile, acc, 16, wmma::mem_row_major);
      __syncwarp();
      tc_write_gradient_tile(tile, m, n, features, dim, z, db, dx_relu, dxb, deb, lane);
      __syncwarp();  // the tile is rewritten next
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without TF32 tensor cores: fail loudly, never leave dx and demb unwritten
#endif
}

// ---- bf16 tensor cores (bf16 storage throughout: activations and embeddings) ----
//
// The same tiles on bf16 WMMA (m16n16k16, fp32 accumulate): the features stay
// bf16 in shared memory, so every product is exact (two bf16 significands fit
// an fp32 one) where the TF32 kernels round each factor to 10 bits; twice the
// tensor-core rate and half the shared memory of the features
// (tc_bf16_warp_floats per warp).

/// bf16 elements between feature rows: dim + 8 (a multiple of 8, as WMMA's
/// ldm must be for 16-bit types; every 16-row tile 32-byte aligned).
__host__ __device__ int tc_bf16_row_stride(int dim) { return dim + 8; }
/// bf16 elements between rows of the backward's 32 x 32 pair-gradient matrix.
constexpr int kTcBf16PairStride = 40;

/// Floats one warp's region holds: the bf16 features, then the forward's
/// fp32 pair matrix, or the backward's bf16 pair gradients and a 16 x 16
/// fp32 staging tile (the larger: the forward's). A multiple of 8 floats,
/// so every region stays 32-byte aligned.
__host__ __device__ int64_t tc_bf16_warp_floats(int64_t dim) {
  return kTcRows * (dim + 8) / 2 + kTcRows * kTcPairStride;
}

size_t tc_bf16_shared_bytes(int64_t dim) {
  return static_cast<size_t>(kTcSamplesPerBlock * tc_bf16_warp_floats(dim)) * sizeof(float);
}

/// The sample's features as bf16 rows in z [32, stride] (x, the embedding
/// rows, zero rows up to 32), copied as they are, eight at a time (16 bytes:
/// x and emb are 16-byte aligned and rows of 2 dim + 16 bytes keep z's).
__device__ void tc_bf16_load_features(const __nv_bfloat16* xb, const __nv_bfloat16* eb, int features, int dim,
                                      int stride, __nv_bfloat16* z, int lane) {
  const int vectors = dim / 8;
  for (int k = lane; k < kTcRows * vectors; k += 32) {
    const int f = k / vectors;
    const int v = k - f * vectors;
    uint4 value = make_uint4(0u, 0u, 0u, 0u);
    if (f == 0) {
      value = reinterpret_cast<const uint4*>(xb)[v];
    } else if (f < features) {
      value = reinterpret_cast<const uint4*>(eb + static_cast<int64_t>(f - 1) * dim)[v];
    }
    *reinterpret_cast<uint4*>(z + f * stride + 8 * v) = value;
  }
}

__global__ void interaction_forward_tc_bf16_kernel(const __nv_bfloat16* __restrict__ x,
                                                   const __nv_bfloat16* __restrict__ emb, int64_t batch, int features,
                                                   int dim, int64_t width, __nv_bfloat16* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;  // a whole warp leaves together
  const int stride = tc_bf16_row_stride(dim);
  float* region = tc_smem + static_cast<int64_t>(warp) * tc_bf16_warp_floats(dim);
  auto* z = reinterpret_cast<__nv_bfloat16*>(region);  // [32, stride] bf16
  float* s = region + kTcRows * stride / 2;             // [32, kTcPairStride]: Z·Zᵀ's lower tiles
  tc_bf16_load_features(x + b * dim, emb + b * static_cast<int64_t>(features - 1) * dim, features, dim, stride, z,
                        lane);
  __syncwarp();
  const int tiles = features > 16 ? 2 : 1;
  for (int ti = 0; ti < tiles; ++ti) {
    for (int tj = 0; tj <= ti; ++tj) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < dim; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bt;
        wmma::load_matrix_sync(a, z + ti * 16 * stride + k, stride);
        wmma::load_matrix_sync(bt, z + tj * 16 * stride + k, stride);  // Zᵀ: rows of Z as columns
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(s + ti * 16 * kTcPairStride + tj * 16, acc, kTcPairStride, wmma::mem_row_major);
    }
  }
  __syncwarp();
  __nv_bfloat16* ob = out + b * width;
  for (int d = lane; d < dim; d += 32) ob[d] = z[d];  // the passthrough: x as it is
  tc_write_pairs(ob, dim, features, s, lane);
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without bf16 tensor cores: fail loudly, never leave out unwritten
#endif
}

__global__ void interaction_backward_tc_bf16_kernel(const __nv_bfloat16* __restrict__ x,
                                                    const __nv_bfloat16* __restrict__ emb,
                                                    const __nv_bfloat16* __restrict__ dout, int64_t batch, int features,
                                                    int dim, int64_t width, __nv_bfloat16* __restrict__ dx,
                                                    float* __restrict__ demb, bool dx_relu) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;
  const int stride = tc_bf16_row_stride(dim);
  float* region = tc_smem + static_cast<int64_t>(warp) * tc_bf16_warp_floats(dim);
  auto* z = reinterpret_cast<__nv_bfloat16*>(region);                        // [32, stride] bf16
  auto* g = reinterpret_cast<__nv_bfloat16*>(region + kTcRows * stride / 2);  // [32, kTcBf16PairStride] bf16
  float* tile = region + kTcRows * stride / 2 + kTcRows * kTcBf16PairStride / 2;  // [16, 16] staging
  tc_bf16_load_features(x + b * dim, emb + b * static_cast<int64_t>(features - 1) * dim, features, dim, stride, z,
                        lane);
  const __nv_bfloat16 zero = __float2bfloat16_rn(0.0f);
  for (int k = lane; k < kTcRows * kTcBf16PairStride; k += 32) g[k] = zero;
  __syncwarp();
  const __nv_bfloat16* db = dout + b * width;
  tc_fill_pair_gradients(db, dim, features, g, kTcBf16PairStride, lane);
  __syncwarp();
  __nv_bfloat16* dxb = dx + b * dim;
  float* deb = demb + b * static_cast<int64_t>(features - 1) * dim;
  const int row_tiles = features > 16 ? 2 : 1;
  const int k_end = features > 16 ? 32 : 16;  // G's columns and Z's rows past F are zero
  for (int m = 0; m < row_tiles; ++m) {
    for (int n = 0; n < dim; n += 16) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < k_end; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> bz;
        wmma::load_matrix_sync(a, g + m * 16 * kTcBf16PairStride + k, kTcBf16PairStride);
        wmma::load_matrix_sync(bz, z + k * stride + n, stride);
        wmma::mma_sync(acc, a, bz, acc);
      }
      wmma::store_matrix_sync(tile, acc, 16, wmma::mem_row_major);
      __syncwarp();
      tc_write_gradient_tile(tile, m, n, features, dim, z, db, dx_relu, dxb, deb, lane);
      __syncwarp();  // the tile is rewritten next
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without bf16 tensor cores: fail loudly, never leave dx and demb unwritten
#endif
}

Status check(const InteractionArguments& a, bool backward) {
  const char* op = backward ? "interaction backward: " : "interaction forward: ";
  if (a.batch < 1 || a.batch > std::numeric_limits<int32_t>::max()) {
    return Status::invalid(std::string(op) + "batch must be in [1, 2^31), got " +
                           std::to_string(a.batch));
  }
  if (a.num_tables < 1 || a.num_tables > (1 << 14)) {
    return Status::invalid(std::string(op) + "num_tables must be in [1, 2^14], got " +
                           std::to_string(a.num_tables));
  }
  if (a.dim < 1 || a.dim > (int64_t{1} << 20)) {
    return Status::invalid(std::string(op) + "dim must be in [1, 2^20], got " +
                           std::to_string(a.dim));
  }
  if (a.tensor_cores && !interaction_tensor_cores_fit(a.num_tables, a.dim)) {
    return Status::invalid(std::string(op) + "the tensor-core kernels need num_tables + 1 <= 32 and dim a multiple "
                           "of 16 up to 144 (two samples' features and pair matrices within 48 KiB of shared "
                           "memory), got num_tables " + std::to_string(a.num_tables) + ", dim " +
                           std::to_string(a.dim));
  }
  if (a.tensor_cores && (reinterpret_cast<uintptr_t>(a.x) % 16 != 0 || reinterpret_cast<uintptr_t>(a.emb) % 16 != 0)) {
    return Status::invalid(std::string(op) + "the tensor-core kernels read x and emb 16 bytes at a time: both "
                           "must be 16-byte aligned");
  }
  const size_t shared = a.tensor_cores ? tc_shared_bytes(a.dim) : interaction_shared_bytes(a.num_tables, a.dim, backward);
  if (shared > kMaxSharedBytes) {
    return Status::invalid(std::string(op) + "features need " + std::to_string(shared) +
                           " bytes of shared memory, more than " + std::to_string(kMaxSharedBytes) +
                           " (num_tables " + std::to_string(a.num_tables) + ", dim " +
                           std::to_string(a.dim) + ")");
  }
  const int64_t width = cpu::interaction_output_width(a.num_tables, a.dim);
  if (a.out_stride != 0 && a.out_stride < width) {
    return Status::invalid(std::string(op) + "out_stride " + std::to_string(a.out_stride) +
                           " is below the output width " + std::to_string(width));
  }
  const auto known = [](InteractionType t) { return t == InteractionType::kFloat32 || t == InteractionType::kBFloat16; };
  if (!known(a.activations) || !known(a.embeddings)) return Status::invalid(std::string(op) + "unknown element type");
  if (a.embeddings == InteractionType::kBFloat16 && a.activations != InteractionType::kBFloat16) {
    return Status::invalid(std::string(op) + "bf16 embeddings need bf16 activations");
  }
  if (a.x == nullptr) return Status::invalid(std::string(op) + "x is null");
  if (a.emb == nullptr) return Status::invalid(std::string(op) + "emb is null");
  if (!backward && a.out == nullptr) return Status::invalid(std::string(op) + "out is null");
  if (backward) {
    if (a.dout == nullptr) return Status::invalid(std::string(op) + "dout is null");
    if (a.dx == nullptr) return Status::invalid(std::string(op) + "dx is null");
    if (a.demb == nullptr) return Status::invalid(std::string(op) + "demb is null");
  }
  return Status::success();
}

}  // namespace

bool interaction_tensor_cores_fit(int num_tables, int64_t dim) {
  return num_tables >= 1 && num_tables + 1 <= kTcRows && dim >= 16 && dim % 16 == 0 &&
         tc_shared_bytes(dim) <= kMaxSharedBytes;
}

size_t interaction_shared_bytes(int num_tables, int64_t dim, bool backward) {
  const int features = num_tables + 1;
  const int64_t floats = backward ? backward_z_floats(features, row_stride(dim)) +
                                        int64_t{features} * padded_features(features)
                                  : int64_t{features} * forward_row_stride(dim);
  return static_cast<size_t>(floats) * sizeof(float);
}

Status InteractionForward::can_implement(const InteractionArguments& args) {
  return check(args, false);
}

size_t InteractionForward::workspace_bytes(const InteractionArguments&) { return 0; }

namespace {

/// Elements between rows of out/dout.
int64_t out_row_stride(const InteractionArguments& a) {
  return a.out_stride != 0 ? a.out_stride : cpu::interaction_output_width(a.num_tables, a.dim);
}

}  // namespace

namespace {

/// Calls f(TA{}, TE{}) with the stored types of `a` (check() admits fp32
/// with fp32, bf16 activations with fp32 or bf16 embeddings).
template <typename F>
void with_types(const InteractionArguments& a, F&& f) {
  if (a.activations == InteractionType::kFloat32) {
    f(float{}, float{});
  } else if (a.embeddings == InteractionType::kFloat32) {
    f(__nv_bfloat16{}, float{});
  } else {
    f(__nv_bfloat16{}, __nv_bfloat16{});
  }
}

template <typename TA, typename TE>
void forward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const auto* x = static_cast<const TA*>(a.x);
  const auto* emb = static_cast<const TE*>(a.emb);
  auto* out = static_cast<TA*>(a.out);
  if (a.tensor_cores) {
    const auto blocks = static_cast<unsigned>((a.batch + kTcSamplesPerBlock - 1) / kTcSamplesPerBlock);
    if constexpr (std::is_same_v<TA, __nv_bfloat16> && std::is_same_v<TE, __nv_bfloat16>) {
      interaction_forward_tc_bf16_kernel<<<blocks, 32 * kTcSamplesPerBlock, tc_bf16_shared_bytes(a.dim), stream>>>(
          x, emb, a.batch, a.num_tables + 1, static_cast<int>(a.dim), width, out);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_tc_bf16_kernel");
    } else {
      interaction_forward_tc_kernel<TA, TE><<<blocks, 32 * kTcSamplesPerBlock, tc_shared_bytes(a.dim), stream>>>(
          x, emb, a.batch, a.num_tables + 1, static_cast<int>(a.dim), width, out);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_tc_kernel");
    }
    return;
  }
  interaction_forward_kernel<TA, TE><<<static_cast<unsigned>(a.batch), kThreads,
                                       interaction_shared_bytes(a.num_tables, a.dim, false), stream>>>(
      x, emb, a.num_tables + 1, a.dim, forward_row_stride(a.dim), width, out);
  PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_kernel");
}

template <typename TA, typename TE>
void backward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const auto* x = static_cast<const TA*>(a.x);
  const auto* emb = static_cast<const TE*>(a.emb);
  const auto* dout = static_cast<const TA*>(a.dout);
  auto* dx = static_cast<TA*>(a.dx);
  if (a.tensor_cores) {
    const auto blocks = static_cast<unsigned>((a.batch + kTcSamplesPerBlock - 1) / kTcSamplesPerBlock);
    if constexpr (std::is_same_v<TA, __nv_bfloat16> && std::is_same_v<TE, __nv_bfloat16>) {
      interaction_backward_tc_bf16_kernel<<<blocks, 32 * kTcSamplesPerBlock, tc_bf16_shared_bytes(a.dim), stream>>>(
          x, emb, dout, a.batch, a.num_tables + 1, static_cast<int>(a.dim), width, dx, a.demb, a.dx_relu);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_tc_bf16_kernel");
    } else {
      interaction_backward_tc_kernel<TA, TE><<<blocks, 32 * kTcSamplesPerBlock, tc_shared_bytes(a.dim), stream>>>(
          x, emb, dout, a.batch, a.num_tables + 1, static_cast<int>(a.dim), width, dx, a.demb, a.dx_relu);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_tc_kernel");
    }
    return;
  }
  interaction_backward_kernel<TA, TE><<<static_cast<unsigned>(a.batch), kThreads,
                                        interaction_shared_bytes(a.num_tables, a.dim, true), stream>>>(
      x, emb, dout, a.num_tables + 1, a.dim, row_stride(a.dim), width, dx, a.demb, a.dx_relu);
  PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_kernel");
}

}  // namespace

void InteractionForward::run(const InteractionArguments& a, void*, cudaStream_t stream) {
  with_types(a, [&](auto ta, auto te) { forward<decltype(ta), decltype(te)>(a, stream); });
}

Status InteractionBackward::can_implement(const InteractionArguments& args) {
  return check(args, true);
}

size_t InteractionBackward::workspace_bytes(const InteractionArguments&) { return 0; }

void InteractionBackward::run(const InteractionArguments& a, void*, cudaStream_t stream) {
  with_types(a, [&](auto ta, auto te) { backward<decltype(ta), decltype(te)>(a, stream); });
}

LaunchList interaction_launches(const InteractionArguments& a, bool backward) {
  const double b = static_cast<double>(a.batch), d = static_cast<double>(a.dim);
  const double features = a.num_tables + 1.0;
  const double pairs = features * (features - 1) / 2;
  const auto size = [](InteractionType t) { return t == InteractionType::kBFloat16 ? 2.0 : 4.0; };
  const double act = size(a.activations), embedded = size(a.embeddings);
  const double x = b * d * act, emb = b * a.num_tables * d * embedded;
  const double out = b * static_cast<double>(cpu::interaction_output_width(a.num_tables, a.dim)) * act;
  const double flops = 2 * b * pairs * d;
  // Backward: dout, x and emb read; dx (its type) and demb (fp32) written.
  const double backward_bytes = out + x + emb + x + b * a.num_tables * d * 4.0;
  if (a.tensor_cores) {
    // The tensor cores' work as the arithmetic needs it (the pairs), not the
    // padded tiles they compute: bf16 WMMA when everything is stored bf16,
    // else TF32.
    const bool bf16 = a.activations == InteractionType::kBFloat16 && a.embeddings == InteractionType::kBFloat16;
    const char* precision = bf16 ? "bf16" : "tf32";
    if (backward) {
      return {{bf16 ? "interaction_backward_tc_bf16_kernel" : "interaction_backward_tc_kernel",
               bf16 ? "interaction backward (bf16 tensor cores)" : "interaction backward (TF32 tensor cores)", "",
               {backward_bytes, 2 * flops, precision}}};
    }
    return {{bf16 ? "interaction_forward_tc_bf16_kernel" : "interaction_forward_tc_kernel",
             bf16 ? "interaction forward (bf16 tensor cores)" : "interaction forward (TF32 tensor cores)", "",
             {x + emb + out, flops, precision}}};
  }
  if (backward) {
    return {{"interaction_backward_kernel", "interaction backward", "", {backward_bytes, 2 * flops, "fp32"}}};
  }
  return {{"interaction_forward_kernel", "interaction forward", "", {x + emb + out, flops, "fp32"}}};
}

}  // namespace perflab::kernels::cuda
