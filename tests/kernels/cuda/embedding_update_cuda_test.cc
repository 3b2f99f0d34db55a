// The CUDA embedding update (sort, deduplicated sparse SGD) against the
// CPU reference (kernels/cpu/embedding), on odd sizes, with no, some, heavy
// and skewed duplication of ids, in both the sync-free and the
// synchronising variant, and replayed in a graph.
//
// Tolerances: the update sums a row's c gradients then applies them once;
// the CPU applies them one by one. Both are within the first-order
// rounding bound of exact arithmetic, so an element may differ by at most
// (3c + 1) * 2^-24 * m, where m = |w0| + lr * Σ|g| (the magnitudes, got by
// running the CPU update on absolute values). Rows read once (c = 1) and
// rows not read (c = 0) therefore match to within half an ulp, i.e.
// exactly. The bound holds for any order of the sum, so also for a hot row
// summed in chunks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
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
#include "tests/kernels/cuda/embedding_support.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

using namespace embedding_test;  // NOLINT: the tests' shared helpers

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

// The update's two column layouts (embedding_detail::UpdateColumns) sum
// each column's slots in the same order with the same roundings: the same
// tables bit for bit, fp32 and bf16 gradients, on every problem whose width
// the quad layout takes, and on a skewed one at DLRM's width whose tiles
// are 128 slots (hot rows in many chunks). Other widths, and tables off a
// quad's alignment: the quad layout refuses (one line), and auto takes the
// scalar one.
TEST(EmbeddingCudaBackward, TheQuadAndScalarColumnLayoutsGiveTheSameBits) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  using embedding_detail::UpdateColumns;
  std::vector<Problem> problems = backward_problems();
  problems.push_back({20011, 26, 128, Duplication::kZipf});
  int quad_problems = 0;
  for (const Problem& p : problems) {
    const HostInputs in = make_inputs(p, 37);
    std::vector<uint16_t> bits(in.grad.size());
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = bf16_bits(in.grad[i]);
    const bool quads = p.dim % 4 == 0;
    quad_problems += quads ? 1 : 0;
    for (bool bf16 : {false, true}) {
      std::vector<float> results[2];
      int k = 0;
      for (UpdateColumns columns : {UpdateColumns::kScalar, quads ? UpdateColumns::kQuads : UpdateColumns::kAuto}) {
        DeviceInputs dev(p, in, 0.1f);
        DeviceBuffer<uint16_t> grad_bf16(bits);
        if (bf16) {
          dev.args.grad = nullptr;
          dev.args.grad_bf16 = reinterpret_cast<const __nv_bfloat16*>(grad_bf16.data());
        }
        DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
        ASSERT_EQ(embedding_detail::update_quads_possible(dev.args, workspace.data()), quads) << p.describe();
        if (!quads) {
          EXPECT_THROW(embedding_detail::update_rows(dev.args, workspace.data(), nullptr, UpdateColumns::kQuads),
                       std::invalid_argument)
              << p.describe();
        }
        EmbeddingBackwardSgd::sort(dev.args, workspace.data(), nullptr);
        embedding_detail::update_rows(dev.args, workspace.data(), nullptr, columns);
        PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
        results[k++] = dev.tables.download();
      }
      ASSERT_EQ(results[0].size(), in.tables.size());
      EXPECT_NE(results[0], in.tables) << "the update changed nothing; " << p.describe();
      EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)), 0)
          << (bf16 ? "bf16" : "fp32") << " gradients; " << p.describe();
    }
  }
  EXPECT_GE(quad_problems, 8);

  // Tables one float off a quad's alignment: the quad layout refuses, auto
  // takes the scalar one, and the tables end as the aligned quad run leaves them.
  const Problem p{37, 26, 128, Duplication::kHeavy};
  const HostInputs in = make_inputs(p, 41);
  std::vector<float> results[2];
  for (bool offset : {false, true}) {
    DeviceInputs dev(p, in, 0.1f);
    std::vector<float> padded(in.tables.size() + 1, 0.0f);
    std::copy(in.tables.begin(), in.tables.end(), padded.begin() + 1);
    DeviceBuffer<float> shifted(padded);
    if (offset) dev.args.tables = shifted.data() + 1;
    DeviceBuffer<uint8_t> workspace(EmbeddingBackwardSgd::workspace_bytes(dev.args));
    ASSERT_EQ(embedding_detail::update_quads_possible(dev.args, workspace.data()), !offset);
    if (offset) {
      EXPECT_THROW(embedding_detail::update_rows(dev.args, workspace.data(), nullptr, UpdateColumns::kQuads),
                   std::invalid_argument);
    }
    EmbeddingBackwardSgd::run(dev.args, workspace.data(), nullptr);
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (offset) {
      const std::vector<float> all = shifted.download();
      results[1].assign(all.begin() + 1, all.end());
    } else {
      results[0] = dev.tables.download();
    }
  }
  EXPECT_NE(results[0], in.tables);
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)), 0);
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
