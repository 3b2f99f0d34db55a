// The fused last layer and loss (kernels/cuda/logit_head.h) against a
// double-precision reference on odd sizes, fp32 and bf16.
//
// Tolerances, from the arithmetic. The device's logit z is an fp32 sum of k
// products (a lane's fused multiply-adds, then a butterfly): within
// dz = 2 (k + 1) 2^-24 (Σ|x w| + |bias|) of the exact one. σ' <= 1/4, so its
// g = (σ(z) - y) / N is within dz / (4N) + u|g| of the exact one, u the
// rounding of g to its storage type (2^-24 fp32; bf16 rounds once more:
// 2^-8 more); the kernel reports the g it used (dlogit), checked so.
// The backward is then checked on that g itself, so its bounds hold only
// the backward's own rounding:
//   dx[b, k] = g_b w_k [x > 0], one product rounded to the storage type:
//              u |dx|;
//   dw, db, db_below: sums over samples in fp32, a block's running sum over
//              its samples (at most p of them, in order), then the blocks' G
//              sums: at most m = p + G + 4 roundings, each within 2^-24 of a
//              partial sum no larger than the terms' magnitudes summed, so
//              within 2 m 2^-24 Σ|terms| (twice that, to spare the bound's
//              second order), plus the sum's own storage rounding u|sum|.
// m is far below n at the larger sizes: a sum that lost one sample's term
// (about 1/n of the magnitudes) fails.
// The loss per sample moves by at most dz (|dl/dz| <= 1): the mean by the
// mean of dz, plus float's rounding of the accumulator.
#include "kernels/cuda/logit_head.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/random.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/half_precision.h"
#include "tests/support/cuda_device.h"
#include "tests/support/stored_values.h"

namespace perflab::kernels::cuda {
namespace {

TEST(LogitHeadCanImplement, RejectsBadArgumentsWithAReason) {
  float anything = 0;
  uint32_t counter = 0;
  LogitHeadArguments a;
  a.n = 5;
  a.k = 3;
  a.x = a.w = a.bias = &anything;
  a.logits = &anything;
  a.labels = &anything;
  a.dw = a.db = a.db_below = &anything;
  a.dx = &counter;  // any pointer but x's
  a.done_counter = &counter;
  EXPECT_TRUE(LogitHead::can_implement(a, true).ok()) << LogitHead::can_implement(a, true).reason();
  EXPECT_TRUE(LogitHead::can_implement(a, false).ok()) << LogitHead::can_implement(a, false).reason();
  LogitHeadArguments b = a;
  b.n = 0;
  EXPECT_NE(LogitHead::can_implement(b, false).reason().find("n must be in"), std::string::npos);
  b = a;
  b.k = LogitHead::kMaxFeatures + 1;
  EXPECT_NE(LogitHead::can_implement(b, true).reason().find("k must be in"), std::string::npos);
  b = a;
  b.logits = nullptr;
  EXPECT_NE(LogitHead::can_implement(b, false).reason().find("logits is null"), std::string::npos);
  EXPECT_TRUE(LogitHead::can_implement(b, true).ok()) << "training needs no logits";
  b = a;
  b.db_below = nullptr;
  EXPECT_NE(LogitHead::can_implement(b, true).reason().find("must be set"), std::string::npos);
  b = a;
  b.done_counter = nullptr;
  EXPECT_NE(LogitHead::can_implement(b, true).reason().find("done_counter"), std::string::npos);
  b = a;
  b.dx = const_cast<void*>(b.x);
  EXPECT_NE(LogitHead::can_implement(b, true).reason().find("alias"), std::string::npos);
  b = a;
  b.mean_over = 4;
  EXPECT_NE(LogitHead::can_implement(b, true).reason().find("mean_over"), std::string::npos);
  EXPECT_EQ(LogitHead::train_launches(a).size(), 1u);
}

/// Values stored in the test's type: the floats the device holds (which
/// the reference uses) and the device copy.
struct Stored {
  std::vector<float> values;
  DeviceBuffer<uint8_t> device;
  Stored(std::vector<float> v, bool bf16) : values(std::move(v)), device(test_support::upload_stored(values, bf16)) {}
};

std::vector<float> widen(const DeviceBuffer<uint8_t>& buffer, size_t n, bool bf16) {
  return test_support::download_stored(buffer, n, bf16);
}

double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

struct Case {
  int64_t n, k, mean_over;
  bool bf16;
};

std::string describe(const Case& c) {
  return "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " mean_over=" + std::to_string(c.mean_over) +
         (c.bf16 ? " bf16" : " fp32");
}

void check_case(const Case& c) {
  const auto n = static_cast<size_t>(c.n), k = static_cast<size_t>(c.k);
  // x is a ReLU's output: non-negative, with exact zeros.
  std::vector<float> xv = test_support::random_vector(n * k, 41, -1.0f, 2.0f);
  for (float& v : xv) v = std::max(v, 0.0f);
  Stored x(xv, c.bf16), w(test_support::random_vector(k, 42), c.bf16), bias(std::vector<float>{0.25f}, c.bf16);
  std::vector<float> labels = test_support::random_vector(n, 43, 0.0f, 1.0f);
  for (size_t b = 0; b < n; ++b) {
    if (b % 3 != 2) labels[b] = labels[b] < 0.5f ? 0.0f : 1.0f;
  }
  DeviceBuffer<float> d_labels(labels), logits(n), dlogit(n), state(std::vector<float>{0.5f, 0.0f, 0.0f});
  DeviceBuffer<uint32_t> done(std::vector<uint32_t>(static_cast<size_t>(LogitHead::kCounters), 0u));
  const size_t e = c.bf16 ? 2 : 4;
  DeviceBuffer<uint8_t> dx(n * k * e), dw(k * e), db(e), db_below(k * e);
  LogitHeadArguments a;
  a.n = c.n;
  a.k = c.k;
  a.bf16 = c.bf16;
  a.x = x.device.data();
  a.w = w.device.data();
  a.bias = bias.device.data();
  a.logits = logits.data();
  a.labels = d_labels.data();
  a.dx = dx.data();
  a.dw = dw.data();
  a.db = db.data();
  a.db_below = db_below.data();
  a.loss_accumulator = state.data();
  a.mean_over = c.mean_over;
  a.done_counter = done.data();
  a.dlogit = dlogit.data();
  ASSERT_TRUE(LogitHead::can_implement(a, true).ok()) << LogitHead::can_implement(a, true).reason();
  DeviceBuffer<uint8_t> workspace(LogitHead::workspace_bytes(a));
  LogitHead::forward(a, nullptr);
  LogitHead::train(a, workspace.data(), nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got_logits = logits.download();
  const std::vector<float> got_dx = widen(dx, n * k, c.bf16), got_dw = widen(dw, k, c.bf16),
                           got_db = widen(db, 1, c.bf16), got_dbb = widen(db_below, k, c.bf16);
  const float got_loss = state.download()[0];
  const std::vector<float> g_dev = dlogit.download();
  const std::vector<uint8_t> dx_bits = dx.download();
  EXPECT_EQ(done.download(), std::vector<uint32_t>(static_cast<size_t>(LogitHead::kCounters), 0u))
      << "the counters are left 0 for the next run";
  // Runs `args` again: the same bytes as the first run (it adds the same loss again).
  const std::vector<uint8_t> dw_bits = dw.download(), db_bits = db.download(), dbb_bits = db_below.download();
  const auto g_bits = [&] {
    const std::vector<float> g = dlogit.download();
    std::vector<uint8_t> bits(g.size() * sizeof(float));
    std::memcpy(bits.data(), g.data(), bits.size());
    return bits;
  };
  const std::vector<uint8_t> first_g_bits = g_bits();
  const auto expect_same_bits = [&](const LogitHeadArguments& args, const char* run, bool split = false) {
    // Every output refilled first: a run that wrote nothing must fail.
    for (DeviceBuffer<uint8_t>* out : {&dx, &dw, &db, &db_below}) {
      PERFLAB_CUDA_CHECK(cudaMemset(out->data(), 0xFF, out->bytes()));
    }
    PERFLAB_CUDA_CHECK(cudaMemset(dlogit.data(), 0xFF, n * sizeof(float)));
    if (split) {
      LogitHead::train_rows(args, workspace.data(), nullptr);
      LogitHead::train_sums(args, workspace.data(), nullptr);
    } else {
      LogitHead::train(args, workspace.data(), nullptr);
    }
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(dx.download(), dx_bits) << run << ": dx differs; " << describe(c);
    EXPECT_EQ(dw.download(), dw_bits) << run << ": dw differs; " << describe(c);
    EXPECT_EQ(db_below.download(), dbb_bits) << run << ": db_below differs; " << describe(c);
    EXPECT_EQ(db.download(), db_bits) << run << ": db differs; " << describe(c);
    EXPECT_EQ(g_bits(), first_g_bits) << run << ": g differs; " << describe(c);
  };
  expect_same_bits(a, "a second run");  // deterministic
  // x one element past a 16-byte boundary is read where it lies, never
  // staged in shared memory (logit_head.cu): the same bits either way.
  DeviceBuffer<uint8_t> shifted((n * k + 1) * e);
  PERFLAB_CUDA_CHECK(cudaMemcpy(shifted.data() + e, x.device.data(), n * k * e, cudaMemcpyDeviceToDevice));
  LogitHeadArguments unstaged = a;
  unstaged.x = shifted.data() + e;
  ASSERT_EQ(LogitHead::staged_samples(unstaged), 0) << describe(c);
  expect_same_bits(unstaged, "x read in place");
  // As two launches (train_rows, then train_sums): the same bits, and the
  // same loss published (from the same starting value).
  state.upload(std::vector<float>{0.5f, 0.0f, 0.0f});
  expect_same_bits(a, "train_rows + train_sums", true);
  EXPECT_EQ(state.download()[0], got_loss) << "train_rows + train_sums: the loss differs; " << describe(c);
  EXPECT_EQ(done.download(), std::vector<uint32_t>(static_cast<size_t>(LogitHead::kCounters), 0u))
      << "train_sums leaves the counters 0";

  const double N = static_cast<double>(c.mean_over > 0 ? c.mean_over : c.n);
  const double eps = std::ldexp(1.0, -24), u = c.bf16 ? std::ldexp(1.0, -8) + eps : eps;
  std::vector<double> g(n);  // the kernel's own g, checked first
  double loss = 0, loss_slack = 0;
  for (size_t b = 0; b < n; ++b) {
    double z = bias.values[0], m = std::fabs(bias.values[0]);
    for (size_t j = 0; j < k; ++j) {
      z += static_cast<double>(x.values[b * k + j]) * w.values[j];
      m += std::fabs(static_cast<double>(x.values[b * k + j]) * w.values[j]);
    }
    const double dz = 2 * (static_cast<double>(k) + 1) * eps * m;
    ASSERT_LE(std::fabs(got_logits[b] - z), dz) << "logit " << b << "; " << describe(c);
    const double y = labels[b];
    loss += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    loss_slack += dz;
    const double g_exact = (sigmoid(z) - y) / N;
    ASSERT_LE(std::fabs(g_dev[b] - g_exact), dz / (4 * N) + u * std::fabs(g_exact) + 1e-30)
        << "g " << b << ": " << g_dev[b] << " vs " << g_exact << "; " << describe(c);
    g[b] = g_dev[b];
  }
  const double nn = static_cast<double>(n);
  // The kernel's summation depth: a block's samples in order (whole tiles
  // of tile_samples(n)), then a group's blocks in order (at most
  // kGroupBlocks), then the groups in order, plus slack.
  const int64_t tile = LogitHead::tile_samples(c.n);
  const int64_t tiles = (c.n + tile - 1) / tile;
  const int64_t blocks = std::min(tiles, LogitHead::kMaxBlocks);
  const int64_t group = LogitHead::kGroupBlocks;
  const auto m = static_cast<double>((tiles + blocks - 1) / blocks * tile + std::min(blocks, group) +
                                     (blocks + group - 1) / group + 4);
  for (size_t j = 0; j < k; ++j) {
    double dw_ref = 0, dw_tol = 0, dw_mag = 0, dbb_ref = 0, dbb_tol = 0, dbb_mag = 0;
    for (size_t b = 0; b < n; ++b) {
      const double xv_ = x.values[b * k + j], wv = w.values[j];
      const double mask = xv_ > 0 ? 1 : 0;
      const double dx_ref = g[b] * wv * mask;
      const double dx_tol = u * std::fabs(dx_ref) + 1e-30;
      ASSERT_LE(std::fabs(got_dx[b * k + j] - dx_ref), dx_tol)
          << "dx[" << b << ", " << j << "]: " << got_dx[b * k + j] << " vs " << dx_ref << "; " << describe(c);
      dw_ref += g[b] * xv_;
      dw_mag += std::fabs(g[b] * xv_);
      dbb_ref += dx_ref;
      dbb_mag += std::fabs(dx_ref);
    }
    dw_tol += 2 * m * eps * dw_mag + u * std::fabs(dw_ref) + 1e-30;
    dbb_tol += 2 * m * eps * dbb_mag + u * std::fabs(dbb_ref) + 1e-30;
    EXPECT_LE(std::fabs(got_dw[j] - dw_ref), dw_tol) << "dw[" << j << "]; " << describe(c);
    EXPECT_LE(std::fabs(got_dbb[j] - dbb_ref), dbb_tol) << "db_below[" << j << "]; " << describe(c);
  }
  double db_ref = 0, db_tol = 0, db_mag = 0;
  for (size_t b = 0; b < n; ++b) {
    db_ref += g[b];
    db_mag += std::fabs(g[b]);
  }
  db_tol += 2 * m * eps * db_mag + u * std::fabs(db_ref) + 1e-30;
  EXPECT_LE(std::fabs(got_db[0] - db_ref), db_tol) << "db; " << describe(c);
  // The accumulator started at 0.5: += this share's mean (n / N of the batch's).
  const double expected_loss = 0.5 + loss / nn * (nn / N);
  EXPECT_LE(std::fabs(got_loss - expected_loss), loss_slack / N + std::ldexp(std::fabs(expected_loss), -22))
      << "loss; " << describe(c);
}

TEST(LogitHeadTiles, SmallBatchesGetSmallTilesOfAPowerOfTwoSamples) {
  // n / 128 rounded up to a power of two, within [8, 64].
  EXPECT_EQ(LogitHead::tile_samples(1), 8);
  EXPECT_EQ(LogitHead::tile_samples(512), 8);
  EXPECT_EQ(LogitHead::tile_samples(1024), 8);
  EXPECT_EQ(LogitHead::tile_samples(1025), 16);
  EXPECT_EQ(LogitHead::tile_samples(1500), 16);
  EXPECT_EQ(LogitHead::tile_samples(3001), 32);
  EXPECT_EQ(LogitHead::tile_samples(4096), 32);
  EXPECT_EQ(LogitHead::tile_samples(8192), 64);
  EXPECT_EQ(LogitHead::tile_samples(65536), 64);
  EXPECT_EQ(LogitHead::tile_samples(int64_t{1} << 30), LogitHead::kTileSamples);
  int64_t previous = 0;
  for (int64_t n = 1; n <= 20000; n += 37) {
    const int64_t tile = LogitHead::tile_samples(n);
    EXPECT_GE(tile, previous) << "n = " << n;  // never smaller for a larger batch
    EXPECT_GE(tile, LogitHead::kMinTileSamples);
    EXPECT_LE(tile, LogitHead::kTileSamples);
    EXPECT_EQ(tile & (tile - 1), 0) << "n = " << n << ": " << tile << " is no power of two";
    previous = tile;
  }
}

// Which batches train() stages in shared memory, and how many samples at
// a time (host-only: no device needed).
TEST(LogitHeadTiles, TilesOfMoreSamplesThanWarpsAreStagedWhereRowsAreAligned) {
  const auto staged = [](int64_t n, int64_t k, bool bf16, uintptr_t x) {
    LogitHeadArguments a;
    a.n = n;
    a.k = k;
    a.bf16 = bf16;
    a.x = reinterpret_cast<const void*>(x);
    return LogitHead::staged_samples(a);
  };
  constexpr uintptr_t kAligned = 4096, kOff = 4100;
  EXPECT_EQ(staged(65536, 256, false, kAligned), 32);  // DLE: 32 KiB of fp32 rows, two chunks a tile
  EXPECT_EQ(staged(65536, 256, true, kAligned), 64);   // bf16: the whole tile
  EXPECT_EQ(staged(3001, 256, false, kAligned), 32);   // a 32-sample tile in one chunk
  EXPECT_EQ(staged(20001, 600, false, kAligned), 13);
  EXPECT_EQ(staged(20001, 600, true, kAligned), 27);
  EXPECT_EQ(staged(1500, 256, true, kAligned), 16);
  EXPECT_EQ(staged(2048, 2048, true, kAligned), 8);   // the widest bf16 rows: a row a warp
  EXPECT_EQ(staged(2048, 2048, false, kAligned), 0);  // fp32: 4 rows in 32 KiB, under a row a warp
  EXPECT_EQ(staged(1024, 256, false, kAligned), 0);   // 8-sample tiles: a sample a warp already
  EXPECT_EQ(staged(512, 256, true, kAligned), 0);
  EXPECT_EQ(staged(65536, 129, false, kAligned), 0);  // rows not a multiple of 16 bytes
  EXPECT_EQ(staged(65536, 260, true, kAligned), 0);   // 520 bytes
  EXPECT_EQ(staged(65536, 256, false, kOff), 0);      // x not 16-byte aligned
}

TEST(LogitHeadCuda, MatchesTheReferenceAtOddSizesInFp32AndBf16) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (bool bf16 : {false, true}) {
    // Tiles of 8 (n <= 1024), 16 (1500), 32 (3001) and 64 samples; the last:
    // more tiles than blocks, so a block sums several tiles.
    // Groups of 16 blocks: one group of 1 to 9 blocks up to 65 samples; 125
    // blocks at 1,000 (8 groups, the last of 13); 94 at 1,500 and 3,001 (6,
    // the last of 14); 65 at 4,097 (the last group one block); 256 at
    // 20,001 (16 whole groups).
    // Tiles past 8 samples are staged in shared memory where a row is a
    // multiple of 16 bytes: 20,001 x 600 in chunks of 13 (fp32) or 27
    // (bf16) samples, the last of a tile short; 5,000 x 256 (DLE's head) in
    // two chunks of 32 a tile (fp32) or one of 64 (bf16); 3,001 x 256 in
    // one chunk of its 32-sample tile. The odd widths (129, 479, 33) and
    // the 8-sample tiles stay unstaged.
    for (const Case& c : {Case{1, 1, 0, bf16}, Case{63, 3, 0, bf16}, Case{64, 256, 0, bf16}, Case{65, 257, 0, bf16},
                          Case{1000, 256, 4096, bf16}, Case{1500, 129, 0, bf16}, Case{3001, 479, 0, bf16},
                          Case{3001, 256, 0, bf16}, Case{4097, 33, 0, bf16}, Case{5000, 256, 0, bf16},
                          Case{20001, 600, 0, bf16}}) {
      check_case(c);
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
