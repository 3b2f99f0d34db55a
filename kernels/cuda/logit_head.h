// DLRM's last layer and its loss in one launch (or two: train_rows and
// train_sums, the same results): the top MLP's K -> 1 layer
// (the logit, no activation), the sigmoid binary cross-entropy, and that
// layer's whole backward, including the dReLU of the layer below and its
// bias gradient. It replaces, in a fused model's step, a forward GEMM with a
// bias epilogue, the loss kernel, a weight-gradient GEMM with a
// bias-gradient epilogue and a data-gradient GEMM with a dReLU/bias-gradient
// epilogue: four launches, of which three are GEMMs with a single output
// column, by one, which reads x [n, K] once from memory where they read it
// twice (plus the ReLU bitmask); split (train_rows, train_sums), twice.
//
//   z_b       = Σ_k x[b, k] w[k] + bias                  (fp32, FMA, a warp's fixed tree)
//   loss     += (1/N) Σ_b l(z_b, y_b)                     (as BceWithLogits: double per sample,
//                                                          block partials summed in block order)
//   g_b       = (σ(z_b) - y_b) / N, rounded to float and then to the storage type
//   dx[b, k]  = g_b w[k] (x[b, k] > 0)                    (the layer below's dL/dz: x is its ReLU output)
//   dw[k]     = Σ_b g_b x[b, k]     db = Σ_b g_b          db_below[k] = Σ_b dx[b, k]
//                                                          (the fp32 dx, before its storage rounding)
//
// N = mean_over (a rank's share of a larger batch, as BceWithLogits) or n.
// The sums over samples are per block in sample order (a block takes every
// G-th tile of tile_samples(n) samples, 8 to 64, G <= 256 blocks), then
// over each group of 16 consecutive blocks in block order by the group's
// last block to finish, then over the groups in group order by the last
// group to finish (counters left 0 for the next run): the same bits on
// every run. Tensors are fp32
// or bf16 (a bf16 model's: values widened on load, results rounded to
// nearest even on store); the arithmetic is fp32, the loss double. forward() writes fp32
// logits only (evaluation). Neither allocates nor synchronises. Tiles of
// more samples than a block has warps are read in chunks copied to shared
// memory first (cp.async, where x's rows are 16-byte aligned): the same sums
// in the same order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

struct LogitHeadArguments {
  int64_t n = 0;      ///< Samples.
  int64_t k = 0;      ///< Input features (the layer below's width).
  bool bf16 = false;  ///< x, w, bias, dx, dw, db and db_below are bf16 (else fp32).

  const void* x = nullptr;     ///< [n, k]: the layer below's ReLU output.
  const void* w = nullptr;     ///< [k]
  const void* bias = nullptr;  ///< [1]

  float* logits = nullptr;  ///< forward(): [n] fp32.

  // train()
  const float* labels = nullptr;  ///< [n], each in [0, 1].
  void* dx = nullptr;             ///< [n, k]: g_b w[k] (x[b, k] > 0); must not alias x.
  void* dw = nullptr;             ///< [k]
  void* db = nullptr;             ///< [1]
  void* db_below = nullptr;       ///< [k]: the layer below's bias gradient.
  float* loss_accumulator = nullptr;  ///< Optional: += the batch's mean loss (times n / mean_over).
  int32_t* nonfinite_flag = nullptr;  ///< Optional: as BceArguments.
  int32_t* step_counter = nullptr;    ///< Optional: as BceArguments.
  int64_t mean_over = 0;              ///< 0: n; else the whole batch these n samples are a share of.
  /// LogitHead::kCounters device counters, 0 before the first run; left 0
  /// after each.
  uint32_t* done_counter = nullptr;
  /// Optional [n]: each g_b as the backward used it (its storage type's
  /// value, widened): for a test to check the sums on the kernel's own g.
  float* dlogit = nullptr;
};

class LogitHead {
 public:
  /// Shapes, pointers (training: labels, dx, dw, db, db_below and
  /// done_counter too), k <= kMaxFeatures.
  static Status can_implement(const LogitHeadArguments& args, bool training);
  /// The per-block partial sums train() needs (and train_rows' per-sample g
  /// and losses), for any batch up to args.n.
  static size_t workspace_bytes(const LogitHeadArguments& args);
  /// logits = x w + bias (one launch).
  static void forward(const LogitHeadArguments& args, cudaStream_t stream);
  /// The forward, the loss and the backward (one launch).
  static void train(const LogitHeadArguments& args, void* workspace, cudaStream_t stream);
  /// train() as two launches with the same results, bit for bit: train_rows
  /// writes each sample's logit-derived g, its loss and its dx row (a warp a
  /// sample, no block waiting on another: what the layer below's backward
  /// needs), train_sums then the sums over samples (dw, db, db_below, the
  /// loss: the blocks' partials and counters). The second may run on
  /// another stream, after the first (it reads what the first left in the
  /// workspace), while the backward goes on: nothing it writes is read
  /// before the layer below's update. It reads x, w and bias again: they
  /// must not change until it is done. The same args and workspace for
  /// both.
  static void train_rows(const LogitHeadArguments& args, void* workspace, cudaStream_t stream);
  static void train_sums(const LogitHeadArguments& args, void* workspace, cudaStream_t stream);
  /// What each launches. Host-only.
  static LaunchList forward_launches(const LogitHeadArguments& args);
  static LaunchList train_launches(const LogitHeadArguments& args);
  /// train_rows' and train_sums' launches, in that order.
  static LaunchList train_split_launches(const LogitHeadArguments& args);

  /// k at most this (a thread's columns stay in registers: 8 of 256 threads').
  static constexpr int64_t kMaxFeatures = 2048;
  /// The most samples per tile, and the most blocks train() launches: sums
  /// over samples run in sample order within a block, then over each group's
  /// blocks in block order, then over the groups in group order. The tile is
  /// tile_samples(n): smaller for small batches, so more blocks share the
  /// work (see logit_head.cu).
  static constexpr int64_t kTileSamples = 64;
  static constexpr int64_t kMaxBlocks = 256;
  /// The blocks' sums are added in two levels: each group of kGroupBlocks
  /// consecutive blocks by its last block to finish, then the groups by the
  /// last group to finish. done_counter holds kCounters device counters: the
  /// groups' and the whole grid's.
  static constexpr int64_t kGroupBlocks = 16;
  static constexpr int64_t kMaxGroups = (kMaxBlocks + kGroupBlocks - 1) / kGroupBlocks;
  static constexpr int64_t kCounters = 1 + kMaxGroups;
  /// Samples per tile for a batch of n: n / kSpreadBlocks rounded up to a
  /// power of two, between kMinTileSamples and kTileSamples; depends on n
  /// only, so the sums' order (and the bits) do too.
  static int64_t tile_samples(int64_t n);
  /// Samples a block of train() copies to shared memory at a time (a chunk
  /// of its tile, read there by both passes: the same sums in the same
  /// order), or 0 where it reads x in place: tiles of at most 8 samples
  /// (one a warp), rows not a multiple of 16 bytes, x not 16-byte aligned,
  /// or fewer than 8 rows in 32 KiB. Host-only.
  static int64_t staged_samples(const LogitHeadArguments& args);
  static constexpr int64_t kMinTileSamples = 8;
  static constexpr int64_t kSpreadBlocks = 128;
};

}  // namespace perflab::kernels::cuda
