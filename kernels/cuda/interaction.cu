// DLRM dot interaction on the GPU: the CUDA-core kernels (one thread block
// per sample; their loaders are interaction_loaders.cuh's), the checks, the
// dispatch and the launch declarations; the tensor-core kernels are
// interaction_tc.cu's.
#include <cuda_bf16.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/interaction.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/interaction.h"
#include "kernels/cuda/interaction_detail.cuh"
#include "kernels/cuda/interaction_loaders.cuh"
#include "kernels/cuda/interaction_pair_blocks.cuh"
#include "kernels/cuda/stored_types.cuh"
#include "kernels/cuda/vector_access.cuh"

namespace perflab::kernels::cuda {

using namespace interaction_detail;

namespace {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "load_features gives whole warps to rows");
/// The forward's block past kLatencyBoundBatch samples: 28 blocks of
/// pairs at DLE's shape (27 features), four lanes each, in one pass of 128
/// threads (forward_pair_blocks); at 64 registers a thread, eight such
/// blocks a SM. (A 2 x 2 form before: 105 tiles, one a thread, in a pass
/// of 128, 44-62 registers.) Up to it the grid is a wave or two and the idle
/// warps cost nothing: 256 threads.
constexpr int kForwardThreads = 128;
static_assert(kForwardThreads % 32 == 0, "load_features gives whole warps to rows");
constexpr size_t kMaxSharedBytes = 48 * 1024;  // without the opt-in attribute

bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

/// Floats between feature rows in the backward's shared memory: dim where
/// it is a multiple of 4 (rows 16-byte aligned, read four columns at a
/// time: interaction_backward_kernel's kCols), else odd, as before that
/// (a warp reads one row's consecutive columns at a time, so the stride
/// does not change its banks).
int64_t backward_row_stride(int64_t dim) { return dim % 4 == 0 ? dim : dim % 2 == 1 ? dim : dim + 1; }

/// Floats between feature rows in the forward's shared memory: an odd
/// number of 16-byte vectors (rows are read as vectors), so that the rows
/// of eight consecutive features start in eight different 16-byte bank
/// groups whatever dim is, and rows four apart 64 bytes apart modulo 128:
/// the two blocks of pairs in a quarter warp (forward_pair_blocks) read
/// 64 bytes each of rows four apart, in the two halves of the banks.
int64_t forward_row_stride(int64_t dim) { return 4 * (((dim + 3) / 4) | 1); }

// Stored types (InteractionArguments::activations, ::embeddings): widen and
// put from stored_types.cuh.

/// Up to this many samples a kernel's grid of a block per sample is a wave
/// or two (512 blocks on an H200's 132 SMs at DLE's batch 512), so one
/// block's chain of memory round trips is the kernel's time, not the SMs'
/// throughput: the forward runs 256 threads (more warps copying rows),
/// and a backward that cannot copy its rows asynchronously batches them
/// (kRowBatch a warp). Above it, both keep the forms that fit more blocks
/// a SM. At bf16 batch 512 on an H200 (1590d6a's kernels.md) the backward
/// took 19.0 us (8.3x its floor) and the forward 9.0 us on the step's
/// critical path.
constexpr int64_t kLatencyBoundBatch = 2048;
constexpr int kSmallBatchForwardThreads = 256;
static_assert(kSmallBatchForwardThreads % 32 == 0, "load_features gives whole warps to rows");
/// Blocks of 256 a SM the forward keeps (64 registers a thread at most):
/// four, so batch 512 is one wave on an H200's 132 SMs (unbounded, the
/// 4 x 4 pair blocks took 72-80, three blocks).
constexpr int kForwardMinBlocks = 4;

/// out = concat(x, z_i · z_j for i > j): the sample's features into
/// shared memory (load_features), then its pairs in register blocks of 4 x
/// 4 rows, four lanes a block (forward_pair_blocks,
/// interaction_pair_blocks.cuh: eight 16-byte shared loads per sixty-four
/// fused multiply-adds, where a thread per 2 x 2 block over every column
/// made four per sixteen). Each pair's sum is four lanes' fused
/// multiply-adds in column order, added (p0 + p2) + (p1 + p3): within the
/// tests' first-order bound of the CPU's, and the same bits run to run.
/// With `stage` (the pairs fit in shared memory beside the features:
/// forward_staged_bytes) the pairs are gathered in shared memory and the
/// block writes them out in order, consecutive threads consecutive pairs:
/// whole 32-byte sectors, where a lane's four sums went to four rows' worth
/// of scattered addresses (a warp's store touched about 32 sectors for 128
/// bytes).
template <Loader kLoader, typename TA, typename Rows>
__global__ void __launch_bounds__(kSmallBatchForwardThreads, kForwardMinBlocks)
    interaction_forward_kernel(const TA* __restrict__ x, Rows rows, int features, int64_t dim64, int64_t stride64,
                               int64_t width, bool stage, TA* __restrict__ out) {
  wait_for_prior_kernels();
  extern __shared__ float4 forward_smem[];  // float4: 16-byte aligned rows
  float* z = reinterpret_cast<float*>(forward_smem);  // [features, stride]
  const int dim = static_cast<int>(dim64);
  const int stride = static_cast<int>(stride64);
  const int64_t b = blockIdx.x;
  TA* ob = out + b * width;
  load_features<kLoader>(x + b * dim64, rows, b, features, dim, stride, z, ob);
  for (int t = static_cast<int>(threadIdx.x); t < features - 1; t += static_cast<int>(blockDim.x)) {
    rows.write_sort(b, t);  // the lookup fused in: the update's sort input
  }
  __syncthreads();
  float* staged = stage ? z + features * stride : nullptr;  // [F (F - 1) / 2]
  forward_pair_blocks(z, features, dim, stride, staged, ob);
  if (stage) {
    __syncthreads();
    const int pairs = features * (features - 1) / 2;
    for (int p = static_cast<int>(threadIdx.x); p < pairs; p += static_cast<int>(blockDim.x)) {
      put(ob, dim + p, staged[p]);
    }
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

/// Pair-gradient entries a backward thread loads before it stores any.
constexpr int kPairBatch = 4;

/// The backward's entries e0, e0 + blockDim.x, ... (kPairBatch of them) of
/// gt [features][fp] (gt[j][f] = g_fj, zero on the diagonal and past F),
/// loaded from the sample's pair gradients db[dim + pair]: every load is
/// issued before the first is used. An entry past `entries` is 0.
template <typename TA>
struct PairGradients {
  float g[kPairBatch];

  __device__ void load(const TA* db, int dim, int features, int fp, int e0) {
    const int entries = features * fp;
#pragma unroll
    for (int i = 0; i < kPairBatch; ++i) {
      const int e = e0 + i * static_cast<int>(blockDim.x);
      const int j = e / fp;
      const int f = e - j * fp;
      g[i] = 0.0f;
      if (e < entries && f < features && f != j) {
        g[i] = widen(db[dim + (f > j ? f * (f - 1) / 2 + j : j * (j - 1) / 2 + f)]);
      }
    }
  }
  __device__ void store(float* gt, int entries, int e0) const {
#pragma unroll
    for (int i = 0; i < kPairBatch; ++i) {
      const int e = e0 + i * static_cast<int>(blockDim.x);
      if (e < entries) gt[e] = g[i];
    }
  }
};

/// dz_f = Σ_j g_fj z_j per sample (g symmetric, zero diagonal), plus the
/// passthrough db[d] for x (f = 0). The pair gradients are laid out in
/// shared memory as gt[j][f] (rows of padded_features(F) floats, zero on the
/// diagonal and past F), so four consecutive features' g_fj are one 16-byte
/// broadcast load. Thread k owns kCols columns from d of features 4q ..
/// 4q+3: per j it loads g_(4q..4q+3)j and z_j[d .. d + kCols) once and makes
/// 4 kCols fused multiply-adds, with no index arithmetic in the loop but
/// the two pointers' steps. kCols = 4 (dim % 4 == 0, rows 16-byte aligned
/// in shared memory: backward_row_stride): two 16-byte loads per sixteen
/// multiply-adds, where one column took two loads (one of 16 bytes) per
/// four; the sm_90 SASS of that form spent 8 instructions per 4 FMAs (the
/// kernel took 1.12 ms at TF32 batch 65,536 on an H200, 1590d6a, 2.8x its
/// floor). kCols = 1 otherwise. Either way each sum runs over ascending j,
/// as the CPU's, from the passthrough (x) or zero; the diagonal adds an
/// exact zero: the same bits for every kCols. Fused multiply-adds round
/// once where the CPU rounds twice: the results are within the tests'
/// first-order bound, not bit-equal to the CPU's. The kernel is held to
/// 32 registers (launch bounds: eight blocks a SM, as the one-column form
/// had by itself; the four-column form took 48, five blocks), but with the
/// batched loader (Loader::kBatched, small batches only), held to 64 (four
/// blocks a SM: 528 on an H200, so batch 512 runs in one wave; unbounded,
/// ptxas took 105-115, two blocks). At 32 registers ptxas unrolled the j
/// loop four times and spilled to make room for the unrolled loads: two
/// local loads and two stores a trip, and the loop's bound read back from
/// the stack (a stack frame of 56-88 bytes, which scripts/sass reported as
/// "0 local bytes" until it read STACK). The loop is now kept whole: 2
/// LDS.128, 16 FFMA and 8 others a j, no local access in it.
/// With vector_stores (kCols = 4, dx and demb aligned to four elements: the
/// host checks) a thread writes each feature's four columns in one access,
/// where four element stores left each 32-byte sector a quarter written
/// per store: a warp's demb row was 64 partial sector writes instead of
/// 16 whole ones, for 872 MB of fp32 gradients a step at DLE batch 65,536.
/// (Why this kernel ran 2.8x its floor there is not measured; the bf16
/// tensor-core backward, whose stores were 4 bytes each, had its memory
/// pipes 82% busy against 16% of DRAM in Nsight Compute at 1590d6a.)
template <Loader kLoader, int kCols, typename TA, typename Rows, typename TG>
__global__ void __launch_bounds__(kThreads, kLoader == Loader::kBatched ? 4 : 8)
    interaction_backward_kernel(const TA* __restrict__ x, Rows rows, const TA* __restrict__ dout, int features,
                                int64_t dim64, int64_t stride64, int64_t width, TA* __restrict__ dx,
                                TG* __restrict__ demb, bool dx_relu, bool vector_stores) {
  wait_for_prior_kernels();
  extern __shared__ float4 backward_smem[];  // float4: 16-byte aligned
  const int dim = static_cast<int>(dim64);
  const int stride = static_cast<int>(stride64);
  const int fp = padded_features(features);
  float* z = reinterpret_cast<float*>(backward_smem);  // [features, stride]
  float* gt = z + backward_z_floats(features, stride64);  // [features, fp]
  const int64_t b = blockIdx.x;
  const TA* db = dout + b * width;
  // The first pair gradients are loaded before the features and stored
  // after them, so their reads wait out the same round trip as the rows'
  // (756 entries at DLE's 27 features: all of them, with 256 threads).
  const int entries = features * fp;
  const int first = static_cast<int>(threadIdx.x);
  PairGradients<TA> pairs;
  pairs.load(db, dim, features, fp, first);
  load_features<kLoader>(x + b * dim64, rows, b, features, dim, stride, z, static_cast<TA*>(nullptr));
  pairs.store(gt, entries, first);
  const int step = kPairBatch * static_cast<int>(blockDim.x);
  for (int e0 = first + step; e0 < entries; e0 += step) {
    pairs.load(db, dim, features, fp, e0);
    pairs.store(gt, entries, e0);
  }
  __syncthreads();
  TA* dxb = dx + b * dim64;
  TG* deb = demb + b * (features - 1) * dim64;
  const int groups = dim / kCols;  // column groups of a feature block
  const int total = fp / kFeatureBlock * groups;
  for (int k = static_cast<int>(threadIdx.x); k < total; k += static_cast<int>(blockDim.x)) {
    const int q = k / groups;
    const int d = (k - q * groups) * kCols;
    const int f0 = q * kFeatureBlock;
    float acc[kFeatureBlock][kCols];  // [feature f0 + r][column d + c]
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      acc[0][c] = f0 == 0 ? widen(db[d + c]) : 0.0f;
#pragma unroll
      for (int r = 1; r < kFeatureBlock; ++r) acc[r][c] = 0.0f;
    }
    const float* gj = gt + f0;
    const float* zj = z + d;
// Whole at 32 registers, where ptxas spilled to unroll it (above); the
// batched loader's 64-register form keeps its unrolling.
#pragma unroll(kLoader == Loader::kBatched ? 4 : 1)
    for (int j = 0; j < features; ++j) {
      const float4 g4 = *reinterpret_cast<const float4*>(gj);
      const float g[kFeatureBlock] = {g4.x, g4.y, g4.z, g4.w};
      float v[kCols];
      if constexpr (kCols == 4) {
        const float4 v4 = *reinterpret_cast<const float4*>(zj);
        v[0] = v4.x, v[1] = v4.y, v[2] = v4.z, v[3] = v4.w;
      } else {
        v[0] = *zj;
      }
#pragma unroll
      for (int r = 0; r < kFeatureBlock; ++r) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r][c] = fmaf(g[r], v[c], acc[r][c]);
      }
      gj += fp;
      zj += stride;
    }
#pragma unroll
    for (int r = 0; r < kFeatureBlock; ++r) {
      const int f = f0 + r;
      if (f >= features) break;
      if (f == 0) {  // z row 0 is x
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r][c] = dx_relu && !(z[d + c] > 0.0f) ? 0.0f : acc[r][c];
      }
      if constexpr (kCols == 4) {
        if (vector_stores) {  // one access of kCols elements (16 bytes in fp32, 8 in bf16)
          if (f == 0) {
            store_group<TA, kCols>(dxb + d, acc[r]);
          } else {
            store_group<TG, kCols>(deb + (f - 1) * dim + d, acc[r]);
          }
          continue;
        }
      }
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if (f == 0) {
          put(dxb, d + c, acc[r][c]);
        } else {
          put(deb, (f - 1) * dim + d + c, acc[r][c]);
        }
      }
    }
  }
}

/// The forward's shared memory with its pairs staged (interaction_forward_kernel's
/// `stage`): the features, then F (F - 1) / 2 floats.
size_t forward_staged_bytes(int num_tables, int64_t dim) {
  const int64_t features = num_tables + 1;
  return static_cast<size_t>(features * forward_row_stride(dim) + features * (features - 1) / 2) * sizeof(float);
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
  const bool lookup = a.lookup.tables != nullptr;
  const void* rows = lookup ? static_cast<const void*>(a.lookup.tables) : a.emb;
  if (a.tensor_cores && (reinterpret_cast<uintptr_t>(a.x) % 16 != 0 || reinterpret_cast<uintptr_t>(rows) % 16 != 0)) {
    return Status::invalid(std::string(op) + "the tensor-core kernels read x and the embedding rows 16 bytes at a "
                           "time: x and " + (lookup ? "the tables" : "emb") + " must be 16-byte aligned");
  }
  const void* demb = a.demb_bf16 != nullptr ? static_cast<const void*>(a.demb_bf16) : a.demb;
  if (backward && a.tensor_cores &&
      (reinterpret_cast<uintptr_t>(a.dx) % 16 != 0 || reinterpret_cast<uintptr_t>(demb) % 16 != 0)) {
    return Status::invalid(std::string(op) + "the tensor-core backward writes its gradient rows 16 bytes at a "
                           "time: dx and demb must be 16-byte aligned");
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
  if (lookup) {
    if (a.lookup.table_row_offsets == nullptr || a.lookup.ids == nullptr) {
      return Status::invalid(std::string(op) + "the fused lookup needs table_row_offsets and ids");
    }
    if (a.lookup.sort.keys != nullptr &&
        (a.lookup.sort.slots == nullptr || a.lookup.sort.done == nullptr || a.lookup.sort.tiles < 0 ||
         a.batch * a.num_tables > std::numeric_limits<int32_t>::max())) {
      return Status::invalid(std::string(op) + "the fused lookup's sort input needs keys, slots and done "
                             "counters, and batch * num_tables below 2^31");
    }
  } else if (a.emb == nullptr) {
    return Status::invalid(std::string(op) + "emb is null");
  }
  if (!backward && a.out == nullptr) return Status::invalid(std::string(op) + "out is null");
  if (backward) {
    if (a.dout == nullptr) return Status::invalid(std::string(op) + "dout is null");
    if (a.dx == nullptr) return Status::invalid(std::string(op) + "dx is null");
    if ((a.demb == nullptr) == (a.demb_bf16 == nullptr)) {
      return Status::invalid(std::string(op) + (a.demb == nullptr ? "demb is null" : "demb and demb_bf16 are both set"));
    }
    if (a.demb_bf16 != nullptr && a.embeddings != InteractionType::kBFloat16) {
      return Status::invalid(std::string(op) + "a bf16 embedding gradient (demb_bf16) needs bf16 embeddings");
    }
  }
  return Status::success();
}

}  // namespace

bool interaction_forward_gathers_pairs(int num_tables, int64_t dim) {
  return forward_staged_bytes(num_tables, dim) <= kMaxSharedBytes;
}

bool interaction_tensor_cores_fit(int num_tables, int64_t dim) {
  return num_tables >= 1 && num_tables + 1 <= kTcRows && dim >= 16 && dim % 16 == 0 &&
         tc_shared_bytes(dim) <= kMaxSharedBytes;
}

size_t interaction_shared_bytes(int num_tables, int64_t dim, bool backward) {
  const int features = num_tables + 1;
  const int64_t floats = backward ? backward_z_floats(features, backward_row_stride(dim)) +
                                        int64_t{features} * padded_features(features)
                                  : int64_t{features} * forward_row_stride(dim);
  return static_cast<size_t>(floats) * sizeof(float);
}

Status InteractionForward::can_implement(const InteractionArguments& args) {
  return check(args, false);
}

size_t InteractionForward::workspace_bytes(const InteractionArguments&) { return 0; }

namespace {

template <typename TA, typename TE>
void forward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const Typed<TA> t = typed<TA>(a);
  with_rows<TE>(a, [&](auto rows) {
    using Rows = decltype(rows);
    const int threads = a.batch <= kLatencyBoundBatch ? kSmallBatchForwardThreads : kForwardThreads;
    auto kernel = interaction_forward_kernel<Loader::kBatched, TA, Rows>;
    if constexpr (Rows::kCostlyStart) {
      if (async_rows(rows, a.dim, forward_row_stride(a.dim))) {
        kernel = interaction_forward_kernel<Loader::kAsync, TA, Rows>;
      }
    }
    // The pairs staged where they fit beside the features (check() holds
    // the features alone to the limit).
    const bool stage = interaction_forward_gathers_pairs(a.num_tables, a.dim);
    const size_t shared =
        stage ? forward_staged_bytes(a.num_tables, a.dim) : interaction_shared_bytes(a.num_tables, a.dim, false);
    launch_kernel(kernel, static_cast<unsigned>(a.batch), threads, shared, stream, t.x, rows,
                  a.num_tables + 1, a.dim, forward_row_stride(a.dim), width, stage, t.out);
    PERFLAB_CUDA_CHECK_LAUNCH("interaction_forward_kernel");
  });
}

template <typename TA, typename TE>
void backward(const InteractionArguments& a, cudaStream_t stream) {
  const int64_t width = out_row_stride(a);
  const Typed<TA> t = typed<TA>(a);
  with_rows<TE>(a, [&](auto rows) {
    with_gradient<TE>(a, [&](auto* demb) {
      using Rows = decltype(rows);
      using TG = std::remove_pointer_t<decltype(demb)>;
      // (Rows without a costly start load their features one way: one kernel.)
      const bool four = a.dim % 4 == 0;
      auto kernel = four ? interaction_backward_kernel<Loader::kRowByRow, 4, TA, Rows, TG>
                         : interaction_backward_kernel<Loader::kRowByRow, 1, TA, Rows, TG>;
      if constexpr (Rows::kCostlyStart) {
        if (async_rows(rows, a.dim, backward_row_stride(a.dim))) {  // dim % 4 == 0: four columns
          kernel = interaction_backward_kernel<Loader::kAsync, 4, TA, Rows, TG>;
        } else if (a.batch <= kLatencyBoundBatch) {
          kernel = four ? interaction_backward_kernel<Loader::kBatched, 4, TA, Rows, TG>
                        : interaction_backward_kernel<Loader::kBatched, 1, TA, Rows, TG>;
        }
      }
      // A thread's four columns in one store where dx and demb allow it
      // (their rows are dim apart, a multiple of 4 on the four-column path).
      const bool vector_stores = four && aligned_to(t.dx, 4 * sizeof(TA)) && aligned_to(demb, 4 * sizeof(TG));
      launch_kernel(kernel, static_cast<unsigned>(a.batch), kThreads,
                    interaction_shared_bytes(a.num_tables, a.dim, true), stream, t.x, rows, t.dout,
                    a.num_tables + 1, a.dim, backward_row_stride(a.dim), width, t.dx, demb,
                    a.dx_relu, vector_stores);
      PERFLAB_CUDA_CHECK_LAUNCH("interaction_backward_kernel");
    });
  });
}

}  // namespace

void InteractionForward::run(const InteractionArguments& a, void*, cudaStream_t stream) {
  if (a.tensor_cores) {
    interaction_forward_tc(a, stream);
    return;
  }
  with_types(a, [&](auto ta, auto te) { forward<decltype(ta), decltype(te)>(a, stream); });
}

Status InteractionBackward::can_implement(const InteractionArguments& args) {
  return check(args, true);
}

size_t InteractionBackward::workspace_bytes(const InteractionArguments&) { return 0; }

void InteractionBackward::run(const InteractionArguments& a, void*, cudaStream_t stream) {
  if (a.tensor_cores) {
    interaction_backward_tc(a, stream);
    return;
  }
  with_types(a, [&](auto ta, auto te) { backward<decltype(ta), decltype(te)>(a, stream); });
}

LaunchList interaction_launches(const InteractionArguments& a, bool backward) {
  const double b = static_cast<double>(a.batch), d = static_cast<double>(a.dim);
  const double features = a.num_tables + 1.0;
  const double pairs = features * (features - 1) / 2;
  const auto size = [](InteractionType t) { return t == InteractionType::kBFloat16 ? 2.0 : 4.0; };
  const double act = size(a.activations), embedded = size(a.embeddings);
  const double slots = b * a.num_tables;
  // With the lookup fused in, the rows come from the fp32 tables (and the
  // ids), and the forward writes the update's sort keys and slots.
  const bool lookup = a.lookup.tables != nullptr;
  const double x = b * d * act, emb = lookup ? slots * (d * 4.0 + 4.0) : slots * d * embedded;
  const double keys = lookup && a.lookup.sort.keys != nullptr ? slots * 8.0 : 0.0;
  const double out = b * static_cast<double>(cpu::interaction_output_width(a.num_tables, a.dim)) * act;
  const double flops = 2 * b * pairs * d;
  // Backward: dout, x and emb read; dx (its type) and demb (fp32, or bf16) written.
  const double backward_bytes = out + x + emb + x + slots * d * (a.demb_bf16 != nullptr ? 2.0 : 4.0);
  const std::string fused = lookup ? " (the lookups fused in)" : "";
  if (a.tensor_cores) {
    // The tensor cores' work as the arithmetic needs it (the pairs), not the
    // padded tiles they compute: bf16 WMMA when everything is stored bf16,
    // else TF32.
    const bool bf16 = a.activations == InteractionType::kBFloat16 && a.embeddings == InteractionType::kBFloat16;
    const char* precision = bf16 ? "bf16" : "tf32";
    if (backward) {
      return {{bf16 ? "interaction_backward_tc_bf16_kernel" : "interaction_backward_tc_kernel",
               (bf16 ? "interaction backward (bf16 tensor cores)" : "interaction backward (TF32 tensor cores)") +
                   fused,
               "", {backward_bytes, 2 * flops, precision}}};
    }
    return {{bf16 ? "interaction_forward_tc_bf16_kernel" : "interaction_forward_tc_kernel",
             (bf16 ? "interaction forward (bf16 tensor cores)" : "interaction forward (TF32 tensor cores)") + fused,
             "", {x + emb + out + keys, flops, precision}}};
  }
  if (backward) {
    return {{"interaction_backward_kernel", "interaction backward" + fused, "", {backward_bytes, 2 * flops, "fp32"}}};
  }
  return {{"interaction_forward_kernel", "interaction forward" + fused, "", {x + emb + out + keys, flops, "fp32"}}};
}

}  // namespace perflab::kernels::cuda
