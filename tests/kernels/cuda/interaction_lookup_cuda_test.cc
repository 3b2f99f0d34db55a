// The embedding lookup fused into the CUDA interaction (InteractionLookup):
// what can_implement asks of it on the host, and, on a GPU, that it gives
// the gather-then-interaction results bit for bit.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/random.h"
#include "kernels/cpu/interaction.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/interaction.h"
#include "tests/kernels/cuda/interaction_support.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

using namespace interaction_test;  // NOLINT: the tests' shared helpers

TEST(InteractionCudaCanImplement, TheFusedLookupNeedsItsIdsAndAlignedTables) {
  // No device needed.
  alignas(16) float anything[8] = {};
  InteractionArguments a = valid_arguments(anything);
  a.emb = nullptr;  // unread with the lookup
  const int64_t offsets[26] = {};
  const int32_t ids[1] = {};
  a.lookup.tables = anything;
  a.lookup.table_row_offsets = offsets;
  a.lookup.ids = ids;
  EXPECT_TRUE(InteractionForward::can_implement(a).ok()) << InteractionForward::can_implement(a).reason();
  EXPECT_TRUE(InteractionBackward::can_implement(a).ok()) << InteractionBackward::can_implement(a).reason();
  a.tensor_cores = true;
  EXPECT_TRUE(InteractionForward::can_implement(a).ok()) << InteractionForward::can_implement(a).reason();
  InteractionArguments bad = a;
  bad.lookup.tables = anything + 1;  // 4 bytes past a 16-byte boundary
  EXPECT_NE(InteractionForward::can_implement(bad).reason().find("the tables must be 16-byte aligned"),
            std::string::npos)
      << InteractionForward::can_implement(bad).reason();
  bad = a;
  bad.lookup.ids = nullptr;
  EXPECT_NE(InteractionBackward::can_implement(bad).reason().find("needs table_row_offsets and ids"),
            std::string::npos);
  bad = a;
  uint32_t keys[1] = {};
  bad.lookup.sort.keys = keys;  // keys without slots and done counters
  EXPECT_NE(InteractionForward::can_implement(bad).reason().find("sort input"), std::string::npos);
  a.lookup.tables = nullptr;  // no lookup: emb is read again
  EXPECT_NE(InteractionForward::can_implement(a).reason().find("emb is null"), std::string::npos);
}

// The lookup fused into the interaction (InteractionLookup) reads the rows
// the gather would have written, rounded the same way in bf16, and sums
// them in the same order: its forward output, dx and demb are the
// gather-then-interaction results bit for bit, and its forward writes the
// update's sort input as the gather does (keys_in_forward). Tables of odd
// row counts (1-row ones too), duplicate and hot ids, every storage, the
// CUDA-core and tensor-core kernels.
TEST(InteractionCuda, TheFusedLookupEqualsGatherThenInteractionBitForBit) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  // The CUDA-core kernels' loaders (interaction.cu's Loader): dims that are
  // a multiple of 4 copy their rows by cp.async from the (aligned) tables,
  // at any batch ({3, 40, 144}: more than 32 rows, reads past 128 columns;
  // {2049, 26, 128}: DLE past 2,048 samples, the forward on 128 threads);
  // dim 33 takes the batched loader up to 2,048 samples ({5, 4, 33}) and
  // the one-row loop past it ({2050, 2, 33}); dims under 32 that cp.async
  // cannot take fall back to the flat loader ({7, 5, 30}). Each case runs
  // again with the tables one float off 16-byte alignment (CUDA cores
  // only), which cp.async cannot copy: the batched and one-row loaders at
  // dims that are a multiple of 4 (the backward's four-column form), and
  // the flat fallback past 2,048 samples ({2049, 3, 16}).
  const std::vector<Problem> cases = {{37, 26, 128},  {5, 4, 33},     {7, 5, 30},    {5, 16, 32},
                                      {3, 15, 16},    {3, 40, 144},   {2049, 3, 128}, {2050, 2, 33},
                                      {2049, 26, 128}, {2049, 3, 16}};
  uint32_t seed = 700;
  for (const Problem& p : cases) {
    // Table t holds 1 + (7 t) % 13 rows; ids mostly row 0 (hot), else any.
    std::vector<int64_t> offsets(static_cast<size_t>(p.num_tables));
    int64_t total_rows = 0;
    for (int t = 0; t < p.num_tables; ++t) {
      offsets[static_cast<size_t>(t)] = total_rows;
      total_rows += 1 + (7 * t) % 13;
    }
    std::vector<int32_t> ids(static_cast<size_t>(p.batch * p.num_tables));
    const std::vector<float> pick = test_support::random_vector(ids.size(), seed++);
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto t = static_cast<int64_t>(i % static_cast<size_t>(p.num_tables));
      const int64_t rows = 1 + (7 * t) % 13;
      const float u = std::fabs(pick[i]) * 16.0f;  // random_vector: values in [-1, 1)
      ids[i] = u < 8.0f ? 0 : static_cast<int32_t>(static_cast<int64_t>(u) % rows);
    }
    const std::vector<float> tables = test_support::random_vector(static_cast<size_t>(total_rows * p.dim), seed++);
    const int64_t width = cpu::interaction_output_width(p.num_tables, p.dim);
    for (Storage storage : {kFp32, kBf16Activations, kBf16, kBf16Gradients}) {
      for (bool tensor_cores : {false, true}) {
        if (tensor_cores && !interaction_tensor_cores_fit(p.num_tables, p.dim)) continue;
        SCOPED_TRACE(p.describe() + (tensor_cores ? " tensor cores" : " CUDA cores") +
                     (is_bf16(storage.activations) ? (is_bf16(storage.embeddings) ? " bf16" : " bf16 activations")
                                                   : " fp32") +
                     (is_bf16(storage.gradients) ? ", bf16 embedding gradient" : ""));
        const size_t act = is_bf16(storage.activations) ? 2 : 4;
        DeviceBuffer<float> d_tables(tables);
        DeviceBuffer<int64_t> d_offsets(offsets);
        DeviceBuffer<int32_t> d_ids(ids);
        std::vector<float> x = stored(test_support::random_vector(static_cast<size_t>(p.batch * p.dim), seed), storage.activations);
        std::vector<float> dout =
            stored(test_support::random_vector(static_cast<size_t>(p.batch * width), seed + 1), storage.activations);
        DeviceBuffer<uint8_t> d_x = upload(x, storage.activations), d_dout = upload(dout, storage.activations);

        EmbeddingArguments e;
        e.batch = p.batch;
        e.num_tables = p.num_tables;
        e.dim = p.dim;
        e.total_rows = total_rows;
        e.tables = d_tables.data();
        e.table_row_offsets = d_offsets.data();
        e.ids = d_ids.data();
        e.out_type = is_bf16(storage.embeddings) ? EmbeddingOutputType::kBFloat16 : EmbeddingOutputType::kFloat32;
        e.keys_in_forward = true;
        const size_t ws_bytes = EmbeddingBackwardSgd::workspace_bytes(e);
        const size_t slots = static_cast<size_t>(p.batch * p.num_tables);
        DeviceBuffer<uint8_t> emb(slots * static_cast<size_t>(p.dim) * (is_bf16(storage.embeddings) ? 2 : 4));
        e.out = emb.data();

        // Each path: its own workspace, outputs and gradients (NaN-filled:
        // everything must be written).
        struct Path {
          DeviceBuffer<uint8_t> ws, out, dx, demb;
        };
        auto make_path = [&] {
          Path path{DeviceBuffer<uint8_t>(ws_bytes), DeviceBuffer<uint8_t>(static_cast<size_t>(p.batch * width) * act),
                    DeviceBuffer<uint8_t>(x.size() * act),
                    DeviceBuffer<uint8_t>(slots * static_cast<size_t>(p.dim) * (is_bf16(storage.gradients) ? 2 : 4))};
          PERFLAB_CUDA_CHECK(cudaMemset(path.out.data(), 0xFF, path.out.bytes()));
          PERFLAB_CUDA_CHECK(cudaMemset(path.dx.data(), 0xFF, path.dx.bytes()));
          PERFLAB_CUDA_CHECK(cudaMemset(path.demb.data(), 0xFF, path.demb.bytes()));
          PERFLAB_CUDA_CHECK(cudaMemset(path.ws.data(), 0xFF, path.ws.bytes()));
          return path;
        };
        Path gathered = make_path(), fused = make_path();
        InteractionArguments a;
        a.batch = p.batch;
        a.num_tables = p.num_tables;
        a.dim = p.dim;
        a.x = d_x.data();
        a.dout = d_dout.data();
        a.tensor_cores = tensor_cores;
        a.activations = storage.activations;
        a.embeddings = storage.embeddings;
        a.dx_relu = true;

        ASSERT_TRUE(EmbeddingForward::can_implement(e).ok()) << EmbeddingForward::can_implement(e).reason();
        EmbeddingForward::run(e, gathered.ws.data(), nullptr);
        const auto set_demb = [&](InteractionArguments& args, DeviceBuffer<uint8_t>& demb) {
          if (is_bf16(storage.gradients)) {
            args.demb_bf16 = reinterpret_cast<__nv_bfloat16*>(demb.data());
          } else {
            args.demb = reinterpret_cast<float*>(demb.data());
          }
        };
        InteractionArguments g = a;
        g.emb = emb.data();
        g.out = gathered.out.data();
        g.dx = gathered.dx.data();
        set_demb(g, gathered.demb);
        InteractionForward::run(g, nullptr, nullptr);
        InteractionBackward::run(g, nullptr, nullptr);

        // The lookup fused in, reading `tables` into `path`; its results
        // against the gathered path's, bit for bit (`what`: which tables).
        const auto run_fused = [&](const float* tables_at, Path& path, const std::string& what) {
          InteractionArguments f = a;
          f.lookup.tables = tables_at;
          f.lookup.table_row_offsets = d_offsets.data();
          f.lookup.ids = d_ids.data();
          f.lookup.sort = embedding_sort_input(e, path.ws.data());
          f.out = path.out.data();
          f.dx = path.dx.data();
          set_demb(f, path.demb);
          ASSERT_TRUE(InteractionForward::can_implement(f).ok()) << InteractionForward::can_implement(f).reason();
          ASSERT_TRUE(InteractionBackward::can_implement(f).ok()) << InteractionBackward::can_implement(f).reason();
          InteractionForward::run(f, nullptr, nullptr);
          f.lookup.sort = {};
          InteractionBackward::run(f, nullptr, nullptr);
          PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
          EXPECT_EQ(gathered.out.download(), path.out.download()) << "forward output" << what;
          EXPECT_EQ(gathered.dx.download(), path.dx.download()) << "dx" << what;
          EXPECT_EQ(gathered.demb.download(), path.demb.download()) << "demb" << what;
        };
        run_fused(d_tables.data(), fused, "");
        // Equal NaN fills would compare equal: every value must have been written.
        auto nan_count = [](const std::vector<float>& v) {
          return std::count_if(v.begin(), v.end(), [](float value) { return std::isnan(value); });
        };
        EXPECT_EQ(nan_count(download(fused.out, static_cast<size_t>(p.batch * width), storage.activations)), 0);
        EXPECT_EQ(nan_count(download(fused.dx, x.size(), storage.activations)), 0);
        EXPECT_EQ(nan_count(download(fused.demb, slots * static_cast<size_t>(p.dim), storage.gradients)), 0);
        // The sort input: keys, slots and the zeroed done counters, as the gather wrote them.
        const EmbeddingSortInput sg = embedding_sort_input(e, gathered.ws.data());
        const EmbeddingSortInput sf = embedding_sort_input(e, fused.ws.data());
        auto fetch = [](const void* device, size_t bytes) {
          std::vector<uint8_t> host(bytes);
          PERFLAB_CUDA_CHECK(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost));
          return host;
        };
        EXPECT_EQ(fetch(sg.keys, slots * 4), fetch(sf.keys, slots * 4)) << "sort keys";
        EXPECT_EQ(fetch(sg.slots, slots * 4), fetch(sf.slots, slots * 4)) << "slots";
        const auto tiles = static_cast<size_t>(std::min<int64_t>(sg.tiles, static_cast<int64_t>(slots)));
        EXPECT_EQ(fetch(sf.done, tiles * 4), std::vector<uint8_t>(tiles * 4, 0)) << "done counters";
        if (!tensor_cores) {
          // The same tables one float past a 16-byte boundary: the loaders
          // that read rows through registers, the same bits.
          std::vector<float> shifted_host(tables.size() + 1, 0.0f);
          std::copy(tables.begin(), tables.end(), shifted_host.begin() + 1);
          DeviceBuffer<float> d_shifted(shifted_host);
          Path shifted = make_path();
          run_fused(d_shifted.data() + 1, shifted, ", tables not 16-byte aligned");
        }
        seed += 2;
      }
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
