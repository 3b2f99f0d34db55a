// DLRM dot interaction on tensor cores (InteractionArguments::tensor_cores;
// interaction.h): a warp per sample, WMMA tiles of Z·Zᵀ forward and of G·Z
// backward; TF32, or bf16 when everything is stored bf16. Reached through
// InteractionForward/InteractionBackward (interaction.cu), which check the
// problem first.
#include <cuda_bf16.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/interaction_detail.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda::interaction_detail {
namespace {

// ---- TF32 tensor cores (InteractionArguments::tensor_cores) ----------------

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

}  // namespace

size_t tc_shared_bytes(int64_t dim) {
  return static_cast<size_t>(kTcSamplesPerBlock * tc_warp_floats(dim)) * sizeof(float);
}

namespace {

/// Loads per lane a loader issues before it stores any: a sample's rows
/// are read with several loads in flight, not one load-then-store at a
/// time (the sm_90 SASS of a plain loop waited on each load). Eight, where
/// four made a warp wait out four round trips in turn for a bf16 sample's
/// rows (16 vectors a lane at dim 128) and eight for a TF32 one's (32),
/// and three for the pair gradients (11 a lane at 27 features): two, four
/// and two now. At dim 128 the kernels' shared memory, not registers,
/// holds them to their blocks a SM (bf16: eight of two warps on an H200),
/// and the registers stay under that bound's share: 56-80 a thread, no
/// spills (scripts/sass; 40-66 with four). At dim 32 or less registers
/// bind first (twelve blocks at 80). Rows whose vectors are not a multiple
/// of eight a lane make a few more dummy loads (of lane 0's row).
constexpr int kLoadBatch = 8;

/// The embedding rows of a sample into z [32, stride] (rows 1 to features
/// - 1, zero rows up to 32; row 0, x, is the caller's), kWidth values a
/// vector (V: float4 or uint4), `vectors` a row: lane k % 32 stores vector
/// k of the 32 rows. Each batch's loads are issued before any is stored
/// and are unconditional: a padding row, x's row or a step past the lane's
/// last reads lane 0's row or row 0 of the source (valid addresses; the
/// values are dropped). load(s, v): vector v of the row starting at s, as
/// loaded; finish(loaded): the V stored (all of a batch's loads are issued
/// before the first conversion).
///
/// The rows' starts (lane t's `mine`: row t + 1's) go through `starts`, 32
/// entries of the warp's shared memory that are free during the call (and
/// again after it: it ends with __syncwarp). A load's address is then a
/// shared-memory read. With a shuffle for each (the version before), ptxas
/// stored every value before the next shuffle and load: the sm_90 SASS of
/// the bf16 forward with the lookup fused in kept one value in flight a
/// lane (scripts/sass: deepest 2 loads).
template <int kWidth, typename V, typename Element, typename Load, typename Finish>
__device__ void tc_store_embedding_rows(const Load& load, const Finish& finish, int64_t mine, int features,
                                        int vectors, int stride, Element* z, int64_t* starts, int lane) {
  starts[lane] = mine;
  __syncwarp();
  for (int it0 = 0; it0 < vectors; it0 += kLoadBatch) {
    int64_t start[kLoadBatch];
#pragma unroll
    for (int i = 0; i < kLoadBatch; ++i) {
      const int f = (lane + 32 * (it0 + i)) / vectors;
      start[i] = starts[f >= 1 && f < kTcRows ? f - 1 : 0];  // lane 0's for x's row and past the end
    }
    decltype(load(int64_t{0}, 0)) value[kLoadBatch];
#pragma unroll
    for (int i = 0; i < kLoadBatch; ++i) {
      const int k = lane + 32 * (it0 + i);
      value[i] = load(start[i], k - k / vectors * vectors);
    }
#pragma unroll
    for (int i = 0; i < kLoadBatch; ++i) {
      const int k = lane + 32 * (it0 + i);
      const int f = k / vectors;
      if (it0 + i < vectors && f >= 1) {
        *reinterpret_cast<V*>(z + f * stride + kWidth * (k - f * vectors)) = f < features ? finish(value[i]) : V{};
      }
    }
  }
  __syncwarp();  // every lane past its reads of `starts`
}

/// Loads sample b's features into z [32, stride] (x, then the embedding
/// rows from `rows`, then zero rows up to 32), four values at a time
/// (dim % 16 == 0), widened to fp32; x's row is loaded first, by lanes
/// below `vectors` (two loads a lane past 128 columns).
template <typename TA, typename Rows>
__device__ void tc_load_features(const TA* xb, const Rows& rows, int64_t b, int features, int dim, int stride,
                                 float* z, int64_t* starts, int lane) {
  const int vectors = dim / 4;  // at most 36 (dim <= 144)
  float4 x0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f), x1 = x0;
  if (lane < vectors) x0 = load4(xb + 4 * lane);
  if (lane + 32 < vectors) x1 = load4(xb + 4 * (lane + 32));
  tc_store_embedding_rows<4, float4>([&](int64_t s, int v) { return rows.at4(s, 4 * v); },
                                     [](const float4& v) { return v; },
                                     lane_row_start(rows, b, features, lane), features, vectors, stride, z, starts,
                                     lane);
  if (lane < vectors) *reinterpret_cast<float4*>(z + 4 * lane) = x0;
  if (lane + 32 < vectors) *reinterpret_cast<float4*>(z + 4 * (lane + 32)) = x1;
}

/// The lookup fused in: lanes write the update's sort input of sample b's
/// slots (nothing for the gathered tensor).
template <typename Rows>
__device__ void tc_write_sort(const Rows& rows, int64_t b, int features, int lane) {
  for (int t = lane; t < features - 1; t += 32) rows.write_sort(b, t);
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
    int i = 0, j = 0;
    pair_from_index(p, &i, &j);
    put(ob, dim + p, s[i * kTcPairStride + j]);
  }
}

/// x's passthrough gradient for the columns [n + 8 l, n + 8 l + 8) lane l
/// of tc_write_gradient_tile writes in x's row (m == 0, lanes 0 and 1;
/// zeros elsewhere), loaded before the tile's products so its latency
/// hides behind them (element loads: dout's rows need not be aligned).
template <typename TA>
__device__ void tc_load_passthrough(const TA* db, int m, int n, int lane, float (&pass)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) pass[i] = 0.0f;
  if (m == 0 && lane < 2) {
#pragma unroll
    for (int i = 0; i < 8; ++i) pass[i] = widen(db[n + 8 * lane + i]);
  }
}

/// A 16 x 16 tile of dZ = G·Z (features m*16.., columns n..) from the
/// staging tile into dx (x's row, with the passthrough gradient `pass` and
/// the optional dReLU: z row 0 holds x) and demb: lane l takes row l / 2,
/// eight columns from 8 (l % 2), read from shared memory in two 16-byte
/// loads and stored eight at a time (store8: one 16-byte store in bf16
/// where there were four of 4 bytes; at 1590d6a Nsight Compute had the bf16
/// kernel's memory pipes 82% busy against 16% of DRAM). dx and demb rows
/// are dim apart, dim a multiple of 16, dx and demb 16-byte aligned.
template <typename TA, typename TZ, typename TG>
__device__ void tc_write_gradient_tile(const float* tile, int m, int n, int features, int dim, const TZ* z,
                                       const float (&pass)[8], bool dx_relu, TA* dxb, TG* deb, int lane) {
  const int r = lane / 2, c = 8 * (lane % 2);
  const int f = m * 16 + r, d = n + c;
  if (f >= features) return;  // a padding row (no synchronisation follows in here)
  const float4 lo = *reinterpret_cast<const float4*>(tile + r * 16 + c);
  const float4 hi = *reinterpret_cast<const float4*>(tile + r * 16 + c + 4);
  float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  if (f == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = dx_relu && !(widen(z[d + i]) > 0.0f) ? 0.0f : pass[i] + v[i];
    store8(dxb + d, v);
  } else {
    store8(deb + static_cast<int64_t>(f - 1) * dim + d, v);
  }
}

template <typename TG, typename TA>
__device__ void tc_fill_pair_gradients(const TA* db, int dim, int features, TG* g, int g_stride, int lane) {
  const int pairs = features * (features - 1) / 2;
  // The pair gradients come kLoadBatch a lane at a time, loaded before any
  // is stored (a step past the last pair reads pair 0, dropped).
  for (int p0 = 0; p0 < pairs; p0 += 32 * kLoadBatch) {
    TA loaded[kLoadBatch];
#pragma unroll
    for (int i = 0; i < kLoadBatch; ++i) {
      const int p = p0 + lane + 32 * i;
      loaded[i] = db[dim + (p < pairs ? p : 0)];
    }
#pragma unroll
    for (int i = 0; i < kLoadBatch; ++i) {
      const int p = p0 + lane + 32 * i;
      if (p >= pairs) continue;
      int r = 0, c = 0;
      pair_from_index(p, &r, &c);
      TG v;
      if constexpr (std::is_same_v<TG, float>) {
        v = widen(loaded[i]);
      } else {
        v = loaded[i];  // bf16 into bf16: exact
      }
      g[r * g_stride + c] = v;
      g[c * g_stride + r] = v;
    }
  }
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

/// Sample b's features as bf16 rows in z [32, stride] (x, the embedding
/// rows from `rows`, zero rows up to 32), copied as they are stored, eight
/// at a time (16 bytes: x and the rows are 16-byte aligned and rows of
/// 2 dim + 16 bytes keep z's).
template <typename Rows>
__device__ void tc_bf16_load_features(const __nv_bfloat16* xb, const Rows& rows, int64_t b, int features, int dim,
                                      int stride, __nv_bfloat16* z, int64_t* starts, int lane) {
  const int vectors = dim / 8;  // at most 18 (dim <= 144): x's row is one load a lane
  uint4 x0 = make_uint4(0u, 0u, 0u, 0u);
  if (lane < vectors) x0 = reinterpret_cast<const uint4*>(xb)[lane];
  tc_store_embedding_rows<8, uint4>([&](int64_t s, int v) { return rows.raw8(s, v); },
                                    [](const typename Rows::Raw8& raw) { return Rows::bits8_of(raw); },
                                    lane_row_start(rows, b, features, lane), features, vectors, stride, z, starts,
                                    lane);
  if (lane < vectors) *reinterpret_cast<uint4*>(z + 8 * lane) = x0;
}

// ---- The kernels, written once over the precision -------------------------

/// What the TF32 and bf16 tensor-core kernels differ in: how the features
/// sit in shared memory, the WMMA shape and operand type, the pair
/// gradients' type and stride, and the TF32 rounding of the operands.
struct Tf32Math {
  using Element = float;  // the features, widened to fp32
  using Precision = nvcuda::wmma::precision::tf32;
  using Pair = float;  // the backward's G
  static constexpr int kK = 8;  // m16n16k8
  static constexpr int kPairStride = kTcPairStride;
  __device__ static int stride(int dim) { return static_cast<int>(tc_row_stride(dim)); }
  __device__ static int64_t warp_floats(int dim) { return tc_warp_floats(dim); }
  /// The backward's reduction length: G's columns and Z's rows past F are zero.
  __device__ static int k_end(int features) { return (features + 7) / 8 * 8; }
  template <typename Fragment>
  __device__ static void round_operand(Fragment& f) {
    to_tf32(f);
  }
  template <typename TA, typename Rows>
  __device__ static void load(const TA* xb, const Rows& rows, int64_t b, int features, int dim, int stride, float* z,
                              int64_t* starts, int lane) {
    tc_load_features(xb, rows, b, features, dim, stride, z, starts, lane);
  }
};
struct Bf16Math {
  using Element = __nv_bfloat16;  // the features as they are stored
  using Precision = __nv_bfloat16;
  using Pair = __nv_bfloat16;
  static constexpr int kK = 16;  // m16n16k16
  static constexpr int kPairStride = kTcBf16PairStride;
  __device__ static int stride(int dim) { return tc_bf16_row_stride(dim); }
  __device__ static int64_t warp_floats(int dim) { return tc_bf16_warp_floats(dim); }
  /// One or two k-steps (the compiler unrolls the two cases).
  __device__ static int k_end(int features) { return features > 16 ? 32 : 16; }
  template <typename Fragment>
  __device__ static void round_operand(Fragment&) {}  // bf16 products are exact
  template <typename Rows>
  __device__ static void load(const __nv_bfloat16* xb, const Rows& rows, int64_t b, int features, int dim,
                              int stride, __nv_bfloat16* z, int64_t* starts, int lane) {
    tc_bf16_load_features(xb, rows, b, features, dim, stride, z, starts, lane);
  }
};

/// x's passthrough into out: widened fp32 features back to TA, or bf16 as stored.
template <typename TA>
__device__ __forceinline__ void copy_passthrough(TA* ob, int d, float v) {
  put(ob, d, v);
}
__device__ __forceinline__ void copy_passthrough(__nv_bfloat16* ob, int d, __nv_bfloat16 v) { ob[d] = v; }

/// out = concat(x, z_i · z_j for i > j): a warp per sample, the lower
/// triangle's 16 x 16 tiles of Z·Zᵀ on tensor cores (Math: Tf32Math or
/// Bf16Math; the kernels below give it their names).
template <typename Math, typename TA, typename Rows>
__device__ __forceinline__ void forward_tc(const TA* __restrict__ x, const Rows& rows, int64_t batch, int features,
                                           int dim, int64_t width, TA* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  using Element = typename Math::Element;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;  // a whole warp leaves together
  const int stride = Math::stride(dim);
  auto* z = reinterpret_cast<Element*>(tc_smem + static_cast<int64_t>(warp) * Math::warp_floats(dim));  // [32, stride]
  auto* s = reinterpret_cast<float*>(z + kTcRows * stride);  // [32, kTcPairStride]: Z·Zᵀ's lower tiles
  // s holds the rows' starts while the loader runs (the products come later).
  Math::load(x + b * dim, rows, b, features, dim, stride, z, reinterpret_cast<int64_t*>(s), lane);
  tc_write_sort(rows, b, features, lane);
  __syncwarp();
  const int tiles = features > 16 ? 2 : 1;
  for (int ti = 0; ti < tiles; ++ti) {
    for (int tj = 0; tj <= ti; ++tj) {
      wmma::fragment<wmma::accumulator, 16, 16, Math::kK, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < dim; k += Math::kK) {
        wmma::fragment<wmma::matrix_a, 16, 16, Math::kK, typename Math::Precision, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, Math::kK, typename Math::Precision, wmma::col_major> bt;
        wmma::load_matrix_sync(a, z + ti * 16 * stride + k, stride);
        wmma::load_matrix_sync(bt, z + tj * 16 * stride + k, stride);  // Zᵀ: rows of Z as columns
        Math::round_operand(a);
        Math::round_operand(bt);
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(s + ti * 16 * kTcPairStride + tj * 16, acc, kTcPairStride, wmma::mem_row_major);
    }
  }
  __syncwarp();
  TA* ob = out + b * width;
  for (int d = lane; d < dim; d += 32) copy_passthrough(ob, d, z[d]);  // exact either way
  tc_write_pairs(ob, dim, features, s, lane);
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without these tensor cores: fail loudly, never leave out unwritten
#endif
}

/// dx = dout[:, :dim] + Σ_j g_0j z_j, demb[t] = Σ_j g_(t+1)j z_j: a warp per
/// sample, dZ = G·Z on tensor cores (G symmetric, zero diagonal and padding).
template <typename Math, typename TA, typename Rows, typename TG>
__device__ __forceinline__ void backward_tc(const TA* __restrict__ x, const Rows& rows, const TA* __restrict__ dout,
                                            int64_t batch, int features, int dim, int64_t width, TA* __restrict__ dx,
                                            TG* __restrict__ demb, bool dx_relu) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  using Element = typename Math::Element;
  using Pair = typename Math::Pair;
  constexpr int kPairStride = Math::kPairStride;
  extern __shared__ __align__(128) float tc_smem[];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kTcSamplesPerBlock + warp;
  if (b >= batch) return;
  const int stride = Math::stride(dim);
  auto* z = reinterpret_cast<Element*>(tc_smem + static_cast<int64_t>(warp) * Math::warp_floats(dim));  // [32, stride]
  auto* g = reinterpret_cast<Pair*>(z + kTcRows * stride);             // [32, kPairStride]
  auto* tile = reinterpret_cast<float*>(g + kTcRows * kPairStride);  // [16, 16] staging
  // g holds the rows' starts while the loader runs (zeroed after it).
  Math::load(x + b * dim, rows, b, features, dim, stride, z, reinterpret_cast<int64_t*>(g), lane);
  // Zeroed 16 bytes a store (5 a lane in bf16, 9 in fp32, where one element
  // a store took 40 and 36): the matrix starts 16-byte aligned (the
  // features' rows before it are multiples of 16 bytes) and its bytes are a
  // multiple of 16.
  constexpr int kZeroVectors = static_cast<int>(kTcRows * kPairStride * sizeof(Pair) / 16);
  static_assert(kTcRows * kPairStride * sizeof(Pair) % 16 == 0, "G is whole 16-byte vectors");
  for (int k = lane; k < kZeroVectors; k += 32) reinterpret_cast<uint4*>(g)[k] = make_uint4(0u, 0u, 0u, 0u);
  __syncwarp();
  const TA* db = dout + b * width;
  tc_fill_pair_gradients(db, dim, features, g, kPairStride, lane);
  __syncwarp();
  TA* dxb = dx + b * dim;
  TG* deb = demb + b * static_cast<int64_t>(features - 1) * dim;
  const int row_tiles = features > 16 ? 2 : 1;
  const int k_end = Math::k_end(features);
  for (int m = 0; m < row_tiles; ++m) {
    for (int n = 0; n < dim; n += 16) {
      float pass[8];
      tc_load_passthrough(db, m, n, lane, pass);
      wmma::fragment<wmma::accumulator, 16, 16, Math::kK, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k = 0; k < k_end; k += Math::kK) {
        wmma::fragment<wmma::matrix_a, 16, 16, Math::kK, typename Math::Precision, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, Math::kK, typename Math::Precision, wmma::row_major> bz;
        wmma::load_matrix_sync(a, g + m * 16 * kPairStride + k, kPairStride);
        wmma::load_matrix_sync(bz, z + k * stride + n, stride);
        Math::round_operand(a);
        Math::round_operand(bz);
        wmma::mma_sync(acc, a, bz, acc);
      }
      wmma::store_matrix_sync(tile, acc, 16, wmma::mem_row_major);
      __syncwarp();
      tc_write_gradient_tile(tile, m, n, features, dim, z, pass, dx_relu, dxb, deb, lane);
      __syncwarp();  // the tile is rewritten next
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for a GPU without these tensor cores: fail loudly, never leave dx and demb unwritten
#endif
}

// The kernels under the names the launch declarations and the profile know.
template <typename TA, typename Rows>
__global__ void interaction_forward_tc_kernel(const TA* __restrict__ x, Rows rows, int64_t batch, int features,
                                              int dim, int64_t width, TA* __restrict__ out) {
  wait_for_prior_kernels();
  forward_tc<Tf32Math>(x, rows, batch, features, dim, width, out);
}
template <typename Rows>
__global__ void interaction_forward_tc_bf16_kernel(const __nv_bfloat16* __restrict__ x, Rows rows, int64_t batch,
                                                   int features, int dim, int64_t width,
                                                   __nv_bfloat16* __restrict__ out) {
  wait_for_prior_kernels();
  forward_tc<Bf16Math>(x, rows, batch, features, dim, width, out);
}
template <typename TA, typename Rows, typename TG>
__global__ void interaction_backward_tc_kernel(const TA* __restrict__ x, Rows rows, const TA* __restrict__ dout,
                                               int64_t batch, int features, int dim, int64_t width,
                                               TA* __restrict__ dx, TG* __restrict__ demb, bool dx_relu) {
  wait_for_prior_kernels();
  backward_tc<Tf32Math>(x, rows, dout, batch, features, dim, width, dx, demb, dx_relu);
}
template <typename Rows, typename TG>
__global__ void interaction_backward_tc_bf16_kernel(const __nv_bfloat16* __restrict__ x, Rows rows,
                                                    const __nv_bfloat16* __restrict__ dout, int64_t batch, int features,
                                                    int dim, int64_t width, __nv_bfloat16* __restrict__ dx,
                                                    TG* __restrict__ demb, bool dx_relu) {
  wait_for_prior_kernels();
  backward_tc<Bf16Math>(x, rows, dout, batch, features, dim, width, dx, demb, dx_relu);
}

template <typename TA, typename TE>
void forward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const Typed<TA> t = typed<TA>(a);
  const auto blocks = static_cast<unsigned>((a.batch + kTcSamplesPerBlock - 1) / kTcSamplesPerBlock);
  with_rows<TE>(a, [&](auto rows) {
    using Rows = decltype(rows);
    if constexpr (std::is_same_v<TA, __nv_bfloat16> && std::is_same_v<TE, __nv_bfloat16>) {
      launch_kernel(interaction_forward_tc_bf16_kernel<Rows>, blocks, 32 * kTcSamplesPerBlock,
                    tc_bf16_shared_bytes(a.dim), stream, t.x, rows, a.batch, a.num_tables + 1,
                    static_cast<int>(a.dim), width, t.out);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_tc_bf16_kernel");
    } else {
      launch_kernel(interaction_forward_tc_kernel<TA, Rows>, blocks, 32 * kTcSamplesPerBlock,
                    tc_shared_bytes(a.dim), stream, t.x, rows, a.batch, a.num_tables + 1,
                    static_cast<int>(a.dim), width, t.out);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_tc_kernel");
    }
  });
}

template <typename TA, typename TE>
void backward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const Typed<TA> t = typed<TA>(a);
  const auto blocks = static_cast<unsigned>((a.batch + kTcSamplesPerBlock - 1) / kTcSamplesPerBlock);
  with_rows<TE>(a, [&](auto rows) {
    with_gradient<TE>(a, [&](auto* demb) {
      using Rows = decltype(rows);
      using TG = std::remove_pointer_t<decltype(demb)>;
      if constexpr (std::is_same_v<TA, __nv_bfloat16> && std::is_same_v<TE, __nv_bfloat16>) {
        launch_kernel(interaction_backward_tc_bf16_kernel<Rows, TG>, blocks,
                      32 * kTcSamplesPerBlock, tc_bf16_shared_bytes(a.dim), stream, t.x, rows,
                      t.dout, a.batch, a.num_tables + 1, static_cast<int>(a.dim), width, t.dx, demb,
                      a.dx_relu);
        PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_tc_bf16_kernel");
      } else {
        launch_kernel(interaction_backward_tc_kernel<TA, Rows, TG>, blocks, 32 * kTcSamplesPerBlock,
                      tc_shared_bytes(a.dim), stream, t.x, rows, t.dout, a.batch, a.num_tables + 1,
                      static_cast<int>(a.dim), width, t.dx, demb, a.dx_relu);
        PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_tc_kernel");
      }
    });
  });
}

}  // namespace

void interaction_forward_tc(const InteractionArguments& a, cudaStream_t stream) {
  with_types(a, [&](auto ta, auto te) { forward<decltype(ta), decltype(te)>(a, stream); });
}

void interaction_backward_tc(const InteractionArguments& a, cudaStream_t stream) {
  with_types(a, [&](auto ta, auto te) { backward<decltype(ta), decltype(te)>(a, stream); });
}

}  // namespace perflab::kernels::cuda::interaction_detail
