// The CUDA embedding gather and deduplicated sparse SGD against the CPU
// reference (kernels/cpu/embedding), on odd sizes, with no, some and heavy
// duplication of ids, in both the sync-free and the synchronising variant.
//
// Tolerances: the gather is a copy, so fp32 output must match exactly and
// bf16 output must equal the host's round-to-nearest-even of the row. The
// update sums a row's c gradients then applies them once; the CPU applies
// them one by one. Both are within the first-order rounding bound of exact
// arithmetic, so an element may differ by at most (3c + 1) * 2^-24 * m,
// where m = |w0| + lr * Σ|g| (the magnitudes, got by running the CPU update
// on absolute values). Rows read once (c = 1) and rows not read (c = 0)
// therefore match to within half an ulp, i.e. exactly. The bound holds for
// any order of the sum, so also for a hot row summed in chunks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/embedding.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/embedding_detail.h"
#include "kernels/cuda/host_sync.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

/// kZipf: 4,099 rows a table, ids skewed as DLRM's data are (a few hot rows
/// read hundreds of times, many rows once or twice): long and short runs
/// side by side in the sorted order.
enum class Duplication { kNone, kRandom, kHeavy, kZipf };

struct Problem {
  int64_t batch;
  int num_tables;
  int64_t dim;
  Duplication duplication;

  std::string describe() const {
    const char* dup = duplication == Duplication::kNone     ? "none"
                      : duplication == Duplication::kRandom ? "random"
                      : duplication == Duplication::kHeavy  ? "heavy"
                                                            : "zipf";
    std::ostringstream s;
    s << "B=" << batch << " T=" << num_tables << " D=" << dim << " duplication=" << dup;
    return s.str();
  }
};

/// Host copies of one problem's inputs: all tables in one flat array.
struct HostInputs {
  std::vector<int64_t> rows;     // per table
  std::vector<int64_t> offsets;  // first row of each table
  int64_t total_rows = 0;
  std::vector<float> tables;  // [total_rows, dim]
  std::vector<int32_t> ids;   // [batch, T]
  std::vector<float> grad;    // [batch, T, dim]
};

HostInputs make_inputs(const Problem& p, uint32_t seed) {
  HostInputs in;
  for (int t = 0; t < p.num_tables; ++t) {
    int64_t rows = 0;
    switch (p.duplication) {
      case Duplication::kNone:
        rows = p.batch + t;
        break;  // id = b: every row once
      case Duplication::kRandom:
        rows = 1 + (t * 131 + 17) % 97;
        break;  // 1..97 rows
      case Duplication::kHeavy:
        rows = 1 + t % 3;
        break;  // 1..3 rows
      case Duplication::kZipf:
        rows = 4099;
        break;
    }
    in.offsets.push_back(in.total_rows);
    in.rows.push_back(rows);
    in.total_rows += rows;
  }
  in.tables = test_support::random_vector(static_cast<size_t>(in.total_rows * p.dim), seed);
  in.grad =
      test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), seed + 1);
  std::mt19937 gen(seed + 2);
  in.ids.resize(static_cast<size_t>(p.batch * p.num_tables));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int t = 0; t < p.num_tables; ++t) {
      const int64_t rows = in.rows[static_cast<size_t>(t)];
      int64_t id = 0;
      switch (p.duplication) {
        case Duplication::kNone:
          id = b;
          break;
        case Duplication::kRandom:
          id = static_cast<int64_t>(gen() % static_cast<uint32_t>(rows));
          break;
        case Duplication::kHeavy:
          id = b % 5 == 0 ? rows - 1 : 0;
          break;
        case Duplication::kZipf: {
          // rows * x^4 for x uniform in [0, 1): row 0 takes 12.5% of a
          // table's reads; at batch 8,193 rows past about 2,000 are read
          // less than once on average.
          const double x = static_cast<double>(gen()) / 4294967296.0;
          id = std::min<int64_t>(rows - 1, static_cast<int64_t>(static_cast<double>(rows) * x * x * x * x));
          break;
        }
      }
      in.ids[static_cast<size_t>(b * p.num_tables + t)] = static_cast<int32_t>(id);
    }
  }
  return in;
}

std::vector<float*> table_pointers(std::vector<float>& flat, const HostInputs& in, int64_t dim) {
  std::vector<float*> ptrs;
  for (int64_t offset : in.offsets) ptrs.push_back(flat.data() + offset * dim);
  return ptrs;
}

/// Device copies plus the Arguments that point at them.
struct DeviceInputs {
  DeviceBuffer<float> tables;
  DeviceBuffer<int64_t> offsets;
  DeviceBuffer<int32_t> ids;
  DeviceBuffer<float> grad;
  DeviceBuffer<float> lr;
  EmbeddingArguments args;

  DeviceInputs(const Problem& p, const HostInputs& in, float learning_rate)
      : tables(in.tables),
        offsets(in.offsets),
        ids(in.ids),
        grad(in.grad),
        lr(std::vector<float>{learning_rate}) {
    args.batch = p.batch;
    args.num_tables = p.num_tables;
    args.dim = p.dim;
    args.total_rows = in.total_rows;
    args.tables = tables.data();
    args.table_row_offsets = offsets.data();
    args.ids = ids.data();
    args.grad = grad.data();
    args.lr_device = lr.data();
  }
};

/// Round to nearest even, as __float2bfloat16_rn (inputs here are finite).
uint16_t bf16_bits(float value) {
  uint32_t u = 0;
  std::memcpy(&u, &value, sizeof(u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

const std::vector<Problem>& forward_problems() {
  static const std::vector<Problem> problems = {
      {1, 1, 1, Duplication::kRandom},      {3, 3, 3, Duplication::kRandom},
      {37, 26, 16, Duplication::kRandom},   {37, 26, 3, Duplication::kHeavy},
      {2049, 3, 128, Duplication::kRandom}, {3, 26, 128, Duplication::kNone},
  };
  return problems;
}

const std::vector<Problem>& backward_problems() {
  static const std::vector<Problem> problems = {
      {1, 1, 1, Duplication::kRandom},     {3, 3, 3, Duplication::kRandom},
      {3, 3, 3, Duplication::kHeavy},      {37, 26, 16, Duplication::kRandom},
      {37, 26, 3, Duplication::kNone},     {37, 1, 3, Duplication::kHeavy},
      {2049, 3, 128, Duplication::kHeavy}, {2049, 3, 128, Duplication::kRandom},
      {2049, 26, 1, Duplication::kNone},   {37, 26, 128, Duplication::kHeavy},
      // Past 131,072 slots the update's tiles grow beyond 32 slots (53 and
      // 64 here); heavy duplication cuts the hot rows into many chunks.
      {8193, 26, 5, Duplication::kHeavy},  {20011, 13, 3, Duplication::kRandom},
      // Skewed ids: runs of one slot to hundreds, streamed in groups and
      // chunked, at DLRM's width (tiles of 53 slots) and past one column
      // pass of 128 (dim 200).
      {8193, 26, 128, Duplication::kZipf}, {2049, 3, 200, Duplication::kZipf},
      // The per-table sort's two block shapes at their largest batches.
      {512, 26, 8, Duplication::kZipf},    {2048, 5, 4, Duplication::kHeavy},
  };
  return problems;
}

TEST(EmbeddingCudaCanImplement, AcceptsAValidProblemAndRejectsBadOnesWithAReason) {
  // No device needed: can_implement only reads the arguments.
  float table = 0.0f;
  int64_t offset = 0;
  int32_t id = 0;
  float out = 0.0f;
  float lr = 0.1f;
  EmbeddingArguments good;
  good.batch = 4;
  good.num_tables = 2;
  good.dim = 8;
  good.total_rows = 10;
  good.tables = &table;
  good.table_row_offsets = &offset;
  good.ids = &id;
  good.out = &out;
  good.grad = &out;
  good.lr_device = &lr;
  EXPECT_TRUE(EmbeddingForward::can_implement(good).ok())
      << EmbeddingForward::can_implement(good).reason();
  EXPECT_TRUE(EmbeddingBackwardSgd::can_implement(good).ok())
      << EmbeddingBackwardSgd::can_implement(good).reason();
  EXPECT_EQ(EmbeddingForward::workspace_bytes(good), 0u);
  // bf16 gradients instead of fp32: accepted, and the update declares 2 bytes a value.
  EmbeddingArguments bf16 = good;
  static __nv_bfloat16 gradient;
  bf16.grad = nullptr;
  bf16.grad_bf16 = &gradient;
  EXPECT_TRUE(EmbeddingBackwardSgd::can_implement(bf16).ok()) << EmbeddingBackwardSgd::can_implement(bf16).reason();
  EXPECT_DOUBLE_EQ(EmbeddingBackwardSgd::launches(good).back().cost.bytes -
                       EmbeddingBackwardSgd::launches(bf16).back().cost.bytes,
                   4.0 * 2 * 8 * 2);  // B*T*dim values, 2 bytes fewer each

  struct Case {
    const char* expect;  // substring of the reason
    void (*edit)(EmbeddingArguments&);
    bool forward;   // rejected by the forward
    bool backward;  // rejected by the backward
  };
  const Case cases[] = {
      {"batch must be at least 1", [](EmbeddingArguments& a) { a.batch = 0; }, true, true},
      {"num_tables must be at least 1", [](EmbeddingArguments& a) { a.num_tables = 0; }, true,
       true},
      {"dim must be at least 1", [](EmbeddingArguments& a) { a.dim = -3; }, true, true},
      {"at least one row per table", [](EmbeddingArguments& a) { a.total_rows = 1; }, true, true},
      {"tables is null", [](EmbeddingArguments& a) { a.tables = nullptr; }, true, true},
      {"table_row_offsets is null", [](EmbeddingArguments& a) { a.table_row_offsets = nullptr; },
       true, true},
      {"ids is null", [](EmbeddingArguments& a) { a.ids = nullptr; }, true, true},
      {"out is null", [](EmbeddingArguments& a) { a.out = nullptr; }, true, false},
      {"grad is null", [](EmbeddingArguments& a) { a.grad = nullptr; }, false, true},
      {"grad and grad_bf16 are both set",
       [](EmbeddingArguments& a) {
         static __nv_bfloat16 g;
         a.grad_bf16 = &g;
       },
       false, true},
      {"lr_device is null", [](EmbeddingArguments& a) { a.lr_device = nullptr; }, false, true},
      {"below 2^31",
       [](EmbeddingArguments& a) {
         a.batch = int64_t{1} << 26;
         a.num_tables = 32;
         a.total_rows = 64;
       },
       false, true},
      {"at most 2^32", [](EmbeddingArguments& a) { a.total_rows = (int64_t{1} << 32) + 1; }, false,
       true},
      {"overflows int64",
       [](EmbeddingArguments& a) {
         a.batch = int64_t{1} << 40;
         a.dim = int64_t{1} << 30;
       },
       true, true},
  };
  for (const Case& c : cases) {
    EmbeddingArguments a = good;
    c.edit(a);
    const Status fwd = EmbeddingForward::can_implement(a);
    const Status bwd = EmbeddingBackwardSgd::can_implement(a);
    EXPECT_EQ(!fwd.ok(), c.forward) << c.expect << ": forward said '" << fwd.reason() << "'";
    EXPECT_EQ(!bwd.ok(), c.backward) << c.expect << ": backward said '" << bwd.reason() << "'";
    if (c.forward) {
      EXPECT_NE(fwd.reason().find(c.expect), std::string::npos) << fwd.reason();
    }
    if (c.backward) {
      EXPECT_NE(bwd.reason().find(c.expect), std::string::npos) << bwd.reason();
    }
  }
}

TEST(EmbeddingCudaForward, Fp32MatchesCpuExactly) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : forward_problems()) {
    HostInputs in = make_inputs(p, 11);
    std::vector<float> expected(in.grad.size());
    auto ptrs = table_pointers(in.tables, in, p.dim);
    cpu::embedding_forward({p.batch, p.num_tables, p.dim}, ptrs.data(), in.ids.data(),
                           expected.data());

    DeviceInputs dev(p, in, 0.0f);
    DeviceBuffer<float> out(expected.size());
    dev.args.out = out.data();
    ASSERT_TRUE(EmbeddingForward::can_implement(dev.args).ok())
        << EmbeddingForward::can_implement(dev.args).reason();
    EmbeddingForward::run(dev.args, nullptr, nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> actual = out.download();
    for (size_t i = 0; i < expected.size(); ++i) {
      if (actual[i] != expected[i]) {
        const int64_t slot = static_cast<int64_t>(i) / p.dim;
        FAIL() << "first mismatch at out[" << i << "] (sample " << slot / p.num_tables << ", table "
               << slot % p.num_tables << ", column " << static_cast<int64_t>(i) % p.dim
               << "): expected " << expected[i] << ", actual " << actual[i] << "; " << p.describe();
      }
    }
  }
}

TEST(EmbeddingCudaForward, Bf16IsTheRoundedCpuRow) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : forward_problems()) {
    HostInputs in = make_inputs(p, 12);
    std::vector<float> expected(in.grad.size());
    auto ptrs = table_pointers(in.tables, in, p.dim);
    cpu::embedding_forward({p.batch, p.num_tables, p.dim}, ptrs.data(), in.ids.data(),
                           expected.data());

    DeviceInputs dev(p, in, 0.0f);
    DeviceBuffer<uint16_t> out(expected.size());
    dev.args.out = out.data();
    dev.args.out_type = EmbeddingOutputType::kBFloat16;
    EmbeddingForward::run(dev.args, nullptr, nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> actual = out.download();
    for (size_t i = 0; i < expected.size(); ++i) {
      if (actual[i] != bf16_bits(expected[i])) {
        FAIL() << "first mismatch at out[" << i << "]: expected bf16 bits 0x" << std::hex
               << bf16_bits(expected[i]) << " (of " << std::dec << expected[i] << "), actual 0x"
               << std::hex << actual[i] << std::dec << "; " << p.describe();
      }
    }
  }
}

/// The CPU's updated tables, and the per-element tolerance (see the top).
struct Expected {
  std::vector<float> tables;
  std::vector<float> tolerance;
};

Expected cpu_update(const Problem& p, const HostInputs& in,
                    const std::vector<float>& learning_rates) {
  Expected e;
  e.tables = in.tables;
  std::vector<float> magnitude(in.tables.size());
  for (size_t i = 0; i < magnitude.size(); ++i) magnitude[i] = std::fabs(in.tables[i]);
  std::vector<float> minus_abs_grad(in.grad.size());
  for (size_t i = 0; i < in.grad.size(); ++i) minus_abs_grad[i] = -std::fabs(in.grad[i]);
  auto ptrs = table_pointers(e.tables, in, p.dim);
  auto mag_ptrs = table_pointers(magnitude, in, p.dim);
  const cpu::EmbeddingShape shape{p.batch, p.num_tables, p.dim};
  for (float lr : learning_rates) {
    cpu::embedding_sgd_update(shape, ptrs.data(), in.ids.data(), in.grad.data(), lr);
    cpu::embedding_sgd_update(shape, mag_ptrs.data(), in.ids.data(), minus_abs_grad.data(), lr);
  }
  std::map<int64_t, int64_t> reads;  // global row -> times read per step
  for (size_t slot = 0; slot < in.ids.size(); ++slot) {
    ++reads[in.offsets[slot % static_cast<size_t>(p.num_tables)] + in.ids[slot]];
  }
  e.tolerance.assign(in.tables.size(), 0.0f);
  for (int64_t row = 0; row < in.total_rows; ++row) {
    const auto it = reads.find(row);
    const double c = it == reads.end() ? 0.0 : static_cast<double>(it->second);
    for (int64_t d = 0; d < p.dim; ++d) {
      const size_t i = static_cast<size_t>(row * p.dim + d);
      // Each step adds its own rounding; the bound grows with the steps.
      e.tolerance[i] = static_cast<float>(static_cast<double>(learning_rates.size()) *
                                          (3.0 * c + 1.0) * std::ldexp(1.0, -24) * magnitude[i]);
    }
  }
  return e;
}

::testing::AssertionResult tables_match(const Expected& e, const std::vector<float>& actual,
                                        const Problem& p, const char* variant) {
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(std::fabs(actual[i] - e.tables[i]) <= e.tolerance[i])) {
      return ::testing::AssertionFailure()
             << variant << ": first mismatch at table element " << i << " (global row "
             << static_cast<int64_t>(i) / p.dim << ", column " << static_cast<int64_t>(i) % p.dim
             << "): expected " << e.tables[i] << ", actual " << actual[i] << ", tolerance "
             << e.tolerance[i] << "; " << p.describe();
    }
  }
  return ::testing::AssertionSuccess();
}

// The update's sort runs a block per table up to 2,048 samples (one
// launch) and CUB's device sort beyond; the declaration names the kernel
// that runs. No device needed.
TEST(EmbeddingCudaLaunches, TheSortIsABlockPerTableUpTo2048Samples) {
  EmbeddingArguments a;
  a.num_tables = 26;
  a.dim = 128;
  a.total_rows = 1000;
  for (int64_t batch : {int64_t{1}, int64_t{512}, int64_t{2048}, int64_t{2049}, int64_t{65536}}) {
    a.batch = batch;
    a.keys_in_forward = true;
    const LaunchList list = EmbeddingBackwardSgd::launches(a);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].kernel, batch <= 2048 ? "sort_per_table_kernel" : "DeviceRadixSort") << batch;
    EXPECT_EQ(list[1].kernel, "sgd_tiles_kernel");
  }
}

// Both sorts of the same input give the same sorted keys and slots, bit for
// bit (a table's rows lie below the next table's, and both sorts are
// stable), at both block shapes' edges, one table and many, duplicates, hot
// rows and one-row tables; and the sorted keys ascend with each slot's own.
TEST(EmbeddingCudaBackward, ThePerTableSortGivesTheDeviceSortsPairs) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem problems[] = {{1, 1, 1, Duplication::kRandom},  {3, 3, 2, Duplication::kHeavy},
                              {37, 26, 2, Duplication::kZipf},   {511, 1, 2, Duplication::kRandom},
                              {512, 26, 2, Duplication::kHeavy}, {513, 3, 2, Duplication::kZipf},
                              {2047, 7, 2, Duplication::kNone},  {2048, 26, 2, Duplication::kZipf}};
  for (const Problem& p : problems) {
    const HostInputs in = make_inputs(p, 31);
    DeviceInputs dev(p, in, 0.1f);
    const size_t bytes = EmbeddingBackwardSgd::workspace_bytes(dev.args);
    const auto layout = embedding_detail::backward_layout(p.batch * p.num_tables, p.dim,
                                                          embedding_detail::row_key_bits(in.total_rows));
    std::vector<uint8_t> sorted[2];
    int k = 0;
    for (auto algorithm : {embedding_detail::SortAlgorithm::kPerTable, embedding_detail::SortAlgorithm::kDevice}) {
      DeviceBuffer<uint8_t> workspace(bytes);
      embedding_detail::sort_pairs(dev.args, workspace.data(), nullptr, algorithm);
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<uint8_t> all = workspace.download();
      // keys_out and slots_out, side by side.
      const size_t n = static_cast<size_t>(p.batch * p.num_tables);
      sorted[k].assign(all.begin() + static_cast<std::ptrdiff_t>(layout.keys_out),
                       all.begin() + static_cast<std::ptrdiff_t>(layout.keys_out + 4 * n));
      sorted[k].insert(sorted[k].end(), all.begin() + static_cast<std::ptrdiff_t>(layout.slots_out),
                       all.begin() + static_cast<std::ptrdiff_t>(layout.slots_out + 4 * n));
      ++k;
    }
    EXPECT_EQ(sorted[0], sorted[1]) << p.describe();
    const size_t n = static_cast<size_t>(p.batch * p.num_tables);
    std::vector<uint32_t> keys(n);
    std::vector<int32_t> slots(n);
    std::memcpy(keys.data(), sorted[0].data(), 4 * n);
    std::memcpy(slots.data(), sorted[0].data() + 4 * n, 4 * n);
    for (size_t i = 0; i < n; ++i) {
      const auto slot = static_cast<size_t>(slots[i]);
      ASSERT_LT(slot, n) << p.describe();
      EXPECT_EQ(keys[i], static_cast<uint32_t>(in.offsets[slot % static_cast<size_t>(p.num_tables)] + in.ids[slot]))
          << i << "; " << p.describe();
      if (i > 0) {
        ASSERT_TRUE(keys[i - 1] < keys[i] || (keys[i - 1] == keys[i] && slots[i - 1] < slots[i]))
            << "not a stable ascending order at " << i << "; " << p.describe();
      }
    }
  }
  // Past 2,048 samples the per-table sort refuses (one line).
  const Problem big{2049, 1, 1, Duplication::kRandom};
  const HostInputs in = make_inputs(big, 5);
  DeviceInputs dev(big, in, 0.1f);
  DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
  EXPECT_THROW(embedding_detail::sort_pairs(dev.args, workspace.data(), nullptr,
                                            embedding_detail::SortAlgorithm::kPerTable),
               std::invalid_argument);
}

TEST(EmbeddingCudaBackward, BothVariantsMatchCpuAndCountTheirSyncs) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const float lr = 0.1f;
  for (const Problem& p : backward_problems()) {
    HostInputs in = make_inputs(p, 21);
    const Expected expected = cpu_update(p, in, {lr});
    std::vector<float> results[2];
    for (EmbeddingUpdateMode mode :
         {EmbeddingUpdateMode::kSyncFree, EmbeddingUpdateMode::kSynchronising}) {
      const bool sync_free = mode == EmbeddingUpdateMode::kSyncFree;
      const char* variant = sync_free ? "sync-free" : "synchronising";
      DeviceInputs dev(p, in, lr);
      dev.args.mode = mode;
      ASSERT_TRUE(EmbeddingBackwardSgd::can_implement(dev.args).ok())
          << EmbeddingBackwardSgd::can_implement(dev.args).reason();
      DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
      const int64_t syncs_before = host_sync_count();
      EmbeddingBackwardSgd::run(dev.args, workspace.data(), nullptr);
      const int64_t syncs = host_sync_count() - syncs_before;
      EXPECT_EQ(syncs, sync_free ? 0 : 1) << variant << "; " << p.describe();
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
      results[sync_free ? 0 : 1] = dev.tables.download();
      ASSERT_TRUE(tables_match(expected, results[sync_free ? 0 : 1], p, variant));
    }
    // Same kernels, same order: the variants agree bit for bit.
    EXPECT_EQ(results[0], results[1]) << p.describe();
  }
}

// keys_in_forward: the gather writes the update's sort keys (fp32 and bf16
// output), the update skips its keys launch, and the tables end bit for
// bit as the update that makes its own keys leaves them, in both variants;
// a workspace left dirty by an earlier update (its done counters included)
// must not matter, so each update runs twice.
TEST(EmbeddingCudaBackward, KeysFromTheForwardGiveTheSameUpdate) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const float lr = 0.1f;
  for (const Problem& p : backward_problems()) {
    HostInputs in = make_inputs(p, 23);
    for (EmbeddingOutputType out_type : {EmbeddingOutputType::kFloat32, EmbeddingOutputType::kBFloat16}) {
      for (EmbeddingUpdateMode mode : {EmbeddingUpdateMode::kSyncFree, EmbeddingUpdateMode::kSynchronising}) {
        std::vector<float> results[2];
        for (bool fused : {false, true}) {
          DeviceInputs dev(p, in, lr);
          dev.args.mode = mode;
          dev.args.out_type = out_type;
          dev.args.keys_in_forward = fused;
          DeviceBuffer<uint8_t> out(static_cast<size_t>(p.batch * p.num_tables * p.dim) * 4);
          dev.args.out = out.data();
          ASSERT_TRUE(EmbeddingForward::can_implement(dev.args).ok()) << EmbeddingForward::can_implement(dev.args).reason();
          EXPECT_EQ(EmbeddingForward::workspace_bytes(dev.args),
                    fused ? EmbeddingBackwardSgd::workspace_bytes(dev.args) : size_t{0});
          EXPECT_EQ(EmbeddingBackwardSgd::launches(dev.args).size(), fused ? 2u : 3u);
          DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
          PERFLAB_CUDA_CHECK(cudaMemset(workspace.data(), 0x5A, workspace.bytes()));  // garbage everywhere
          for (int step = 0; step < 2; ++step) {
            EmbeddingForward::run(dev.args, workspace.data(), nullptr);
            EmbeddingBackwardSgd::run(dev.args, workspace.data(), nullptr);
          }
          PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
          results[fused ? 1 : 0] = dev.tables.download();
        }
        EXPECT_EQ(results[1], results[0]) << p.describe() << (mode == EmbeddingUpdateMode::kSyncFree ? " sync-free" : " synchronising");
      }
    }
  }
}

// grad_bf16: a bf16 model's embedding gradient is read as bf16 and widened
// exactly, so the update equals, bit for bit, the fp32 update of the same
// bf16-rounded gradient (both variants, every problem, hot rows included);
// and setting both or neither pointer is refused.
TEST(EmbeddingCudaBackward, Bf16GradientsGiveTheUpdateOfTheirValues) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const float lr = 0.1f;
  for (const Problem& p : backward_problems()) {
    HostInputs in = make_inputs(p, 29);
    std::vector<uint16_t> bits(in.grad.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = bf16_bits(in.grad[i]);
      const uint32_t widened = static_cast<uint32_t>(bits[i]) << 16;
      std::memcpy(&in.grad[i], &widened, sizeof(float));  // the fp32 run gets the same values
    }
    for (EmbeddingUpdateMode mode : {EmbeddingUpdateMode::kSyncFree, EmbeddingUpdateMode::kSynchronising}) {
      std::vector<float> results[2];
      for (bool bf16 : {false, true}) {
        DeviceInputs dev(p, in, lr);
        dev.args.mode = mode;
        DeviceBuffer<uint16_t> grad_bf16(bits);
        if (bf16) {
          dev.args.grad = nullptr;
          dev.args.grad_bf16 = reinterpret_cast<const __nv_bfloat16*>(grad_bf16.data());
        }
        ASSERT_TRUE(EmbeddingBackwardSgd::can_implement(dev.args).ok())
            << EmbeddingBackwardSgd::can_implement(dev.args).reason();
        DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
        EmbeddingBackwardSgd::run(dev.args, workspace.data(), nullptr);
        PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
        results[bf16 ? 1 : 0] = dev.tables.download();
        if (bf16) {
          EmbeddingArguments both = dev.args;
          both.grad = dev.grad.data();
          EXPECT_NE(EmbeddingBackwardSgd::can_implement(both).reason().find("both set"), std::string::npos);
        }
      }
      EXPECT_EQ(results[1], results[0]) << p.describe();
    }
  }
}

// A dense SGD in the update's launch (EmbeddingArguments::dense) writes what
// SgdUpdate's own launch writes, bit for bit, fp32 and bf16 gradients (with
// the bf16 copy), and the tables are unchanged by it.
TEST(EmbeddingCudaBackward, TheDenseSgdInTheUpdatesLaunchIsSgdUpdates) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const float lr = 0.1f;
  const Problem& p = backward_problems().back();
  HostInputs in = make_inputs(p, 29);
  for (bool bf16 : {false, true}) {
    constexpr int64_t kDense = 300007;  // odd, many blocks' worth
    const auto w0 = test_support::random_vector(static_cast<size_t>(kDense), 31);
    const auto g32 = test_support::random_vector(static_cast<size_t>(kDense), 32, -5.0f, 5.0f);
    std::vector<uint16_t> g16(g32.size());
    for (size_t i = 0; i < g16.size(); ++i) g16[i] = bf16_bits(g32[i]);
    std::vector<float> tables[2], weights[2];
    std::vector<uint16_t> copies[2];
    for (bool folded : {false, true}) {
      DeviceInputs dev(p, in, lr);
      DeviceBuffer<float> w(w0), g(g32);
      DeviceBuffer<uint16_t> gb(g16), copy(static_cast<size_t>(kDense));
      SgdArguments dense;
      dense.count = kDense;
      dense.weights = w.data();
      if (bf16) {
        dense.gradients_bf16 = reinterpret_cast<const __nv_bfloat16*>(gb.data());
        dense.weights_bf16 = reinterpret_cast<__nv_bfloat16*>(copy.data());
      } else {
        dense.gradients = g.data();
      }
      // Its own learning rate, not the sparse update's: a kernel reading the
      // wrong one fails.
      DeviceBuffer<float> dense_lr(std::vector<float>{0.0625f});
      dense.lr_device = dense_lr.data();
      DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
      if (folded) {
        dev.args.dense = &dense;
        ASSERT_TRUE(EmbeddingBackwardSgd::can_implement(dev.args).ok())
            << EmbeddingBackwardSgd::can_implement(dev.args).reason();
      } else {
        SgdUpdate::run(dense, nullptr, nullptr);
      }
      EmbeddingBackwardSgd::run(dev.args, workspace.data(), nullptr);
      PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
      tables[folded] = dev.tables.download();
      weights[folded] = w.download();
      copies[folded] = copy.download();
    }
    EXPECT_EQ(tables[1], tables[0]) << p.describe();
    EXPECT_EQ(weights[1], weights[0]) << (bf16 ? "bf16 gradients" : "fp32 gradients");
    if (bf16) {
      EXPECT_EQ(copies[1], copies[0]) << "the bf16 copy";
    }
  }
}

TEST(EmbeddingCudaBackward, SyncFreeRunReplaysInAGraphWithTheCurrentLearningRate) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem p{37, 26, 16, Duplication::kRandom};
  HostInputs in = make_inputs(p, 31);
  const Expected expected = cpu_update(p, in, {0.1f, 0.25f});

  DeviceInputs dev(p, in, 0.1f);
  DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const int64_t syncs_before = host_sync_count();
  kernels::cuda::begin_capture(stream);
  EmbeddingBackwardSgd::run(dev.args, workspace.data(), stream);
  PERFLAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  EXPECT_EQ(host_sync_count(), syncs_before);
  PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  const float second_lr = 0.25f;
  PERFLAB_CUDA_CHECK(
      cudaMemcpyAsync(dev.lr.data(), &second_lr, sizeof(float), cudaMemcpyHostToDevice, stream));
  PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> actual = dev.tables.download();
  PERFLAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  PERFLAB_CUDA_CHECK(cudaGraphDestroy(graph));
  PERFLAB_CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_TRUE(tables_match(expected, actual, p, "graph replay (lr 0.1 then 0.25)"));
}

}  // namespace
}  // namespace perflab::kernels::cuda
