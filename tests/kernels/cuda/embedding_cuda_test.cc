// The CUDA embedding's checks and its gather against the CPU reference
// (kernels/cpu/embedding), on odd sizes, with no, some and heavy
// duplication of ids (the update's tests: embedding_update_cuda_test.cc).
//
// Tolerances: the gather is a copy, so fp32 output must match exactly and
// bf16 output must equal the host's round-to-nearest-even of the row.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/embedding.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "tests/kernels/cuda/embedding_support.h"
#include "tests/support/cuda_device.h"

namespace perflab::kernels::cuda {
namespace {

using namespace embedding_test;  // NOLINT: the tests' shared helpers

const std::vector<Problem>& forward_problems() {
  static const std::vector<Problem> problems = {
      {1, 1, 1, Duplication::kRandom},      {3, 3, 3, Duplication::kRandom},
      {37, 26, 16, Duplication::kRandom},   {37, 26, 3, Duplication::kHeavy},
      {2049, 3, 128, Duplication::kRandom}, {3, 26, 128, Duplication::kNone},
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


}  // namespace
}  // namespace perflab::kernels::cuda
