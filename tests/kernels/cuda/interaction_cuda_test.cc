// The CUDA dot interaction, forward and backward, against the CPU reference
// (kernels/cpu/interaction) on odd sizes.
//
// Tolerance: each output element is a sum of n products (n = D for a dot
// product; n = F for a backward element, plus the passthrough). Both sides
// lie within the first-order rounding bound of exact arithmetic, so they may
// differ by at most 2 (n + 1) * 2^-24 * m, where m is the same sum taken
// over absolute values (got by running the CPU reference on |inputs|). The
// x passthrough columns must match exactly.
//
// bf16 storage (InteractionArguments::activations, ::embeddings): the
// reference takes the inputs rounded to bf16, as the device reads them, and
// computes in fp32 as before; a bf16 output is the device's fp32 result v
// rounded to nearest even, off by at most half a bf16 ulp, 2^-8 |v|, with
// |v| <= |expected| + bound. So bf16 outputs get bound + 2^-8 (|expected| +
// bound); demb keeps the fp32 bound, or (kBf16Gradients: demb_bf16) takes
// the same rounding allowance.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/interaction.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/interaction.h"
#include "kernels/half_precision.h"
#include "tests/kernels/cuda/interaction_support.h"
#include "tests/support/cuda_device.h"
#include "tests/support/stored_values.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using namespace interaction_test;  // NOLINT: the tests' shared helpers

const std::vector<Problem>& problems() {
  static const std::vector<Problem> all = {
      {1, 1, 1},  {3, 3, 3},      {37, 26, 16},  {37, 26, 128},
      {3, 26, 1}, {2049, 3, 128}, {2049, 26, 3}, {1, 1, 128},
      {5, 4, 33},  // F = 5: the backward's last block of four features holds one
      {7, 5, 30},  // dim % 4 == 2: the forward's two-float tail
      // The forward runs 256 threads up to 2,048 samples, 128 past it:
      // (forward_pair_blocks: four lanes a block of 4 x 4 rows.)
      {2049, 31, 5},  // F = 32: 36 blocks, 144 lanes, past one pass of 128 threads
      {2049, 40, 8},  // F = 41 (odd): 66 blocks, 264 lanes, three passes of 128; the last group one row
      {37, 31, 5},    // F = 32 in one pass of 256 threads
      {3, 46, 8},     // F = 47 (odd): 78 blocks, 312 lanes, past one pass of 256 threads
  };
  return all;
}

std::vector<float> absolute(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

/// Checks actual against expected, element i allowed tolerance(i).
template <typename Tolerance>
::testing::AssertionResult close(const std::vector<float>& expected,
                                 const std::vector<float>& actual, Tolerance tolerance,
                                 const char* what, int64_t row_width, const Problem& p) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << what << ": sizes differ";
  for (size_t i = 0; i < expected.size(); ++i) {
    const double tol = tolerance(i);
    if (!(std::fabs(static_cast<double>(actual[i]) - expected[i]) <= tol)) {
      return ::testing::AssertionFailure()
             << what << ": first mismatch at element " << i << " (sample "
             << static_cast<int64_t>(i) / row_width << ", column "
             << static_cast<int64_t>(i) % row_width << "): expected " << expected[i] << ", actual "
             << actual[i] << ", tolerance " << tol << "; " << p.describe();
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(InteractionCudaCanImplement, AcceptsDleShapesAndRejectsBadOnesWithAReason) {
  // No device needed: can_implement only reads the arguments.
  float anything = 0.0f;
  const InteractionArguments good = valid_arguments(&anything);
  EXPECT_TRUE(InteractionForward::can_implement(good).ok())
      << InteractionForward::can_implement(good).reason();
  EXPECT_TRUE(InteractionBackward::can_implement(good).ok())
      << InteractionBackward::can_implement(good).reason();
  EXPECT_EQ(InteractionForward::workspace_bytes(good), 0u);
  EXPECT_EQ(InteractionBackward::workspace_bytes(good), 0u);
  // 27 features: the forward's rows of 33 16-byte vectors (an odd number);
  // the backward's of 128 (a multiple of 4: its four-column form reads 16
  // bytes of a row), plus its 27 x 28 pair-gradient matrix; of 31 (odd)
  // and 30 + 1 where dim is not a multiple of 4, z rounded up to 4 floats.
  EXPECT_EQ(interaction_shared_bytes(26, 128, false), 27u * 132u * 4u);
  EXPECT_EQ(interaction_shared_bytes(26, 128, true), (27u * 128u + 27u * 28u) * 4u);
  EXPECT_EQ(interaction_shared_bytes(4, 31, true), (156u + 5u * 8u) * 4u);  // 5 x 31 = 155 -> 156
  EXPECT_EQ(interaction_shared_bytes(4, 30, true), (156u + 5u * 8u) * 4u);  // 5 x 31 again
  EXPECT_EQ(interaction_shared_bytes(3, 3, false), 4u * 4u * 4u);
  EXPECT_EQ(interaction_shared_bytes(3, 28, false), 4u * 28u * 4u);  // 7 vectors: odd already
  EXPECT_EQ(interaction_shared_bytes(3, 32, false), 4u * 36u * 4u);  // 8 vectors -> 9
  // The forward gathers its pairs beside the features where both fit in
  // 48 KiB: 27 x 132 + 351 floats (15.7 KB) do; 81 x 132 + 3,240 (55.7 KB)
  // do not, though the features alone (42.8 KB) do.
  EXPECT_TRUE(interaction_forward_gathers_pairs(26, 128));
  EXPECT_FALSE(interaction_forward_gathers_pairs(80, 128));
  EXPECT_LE(interaction_shared_bytes(80, 128, false), 48u * 1024u);

  struct Case {
    const char* expect;
    void (*edit)(InteractionArguments&);
    bool forward;
    bool backward;
  };
  const Case cases[] = {
      {"batch must be in", [](InteractionArguments& a) { a.batch = 0; }, true, true},
      {"batch must be in", [](InteractionArguments& a) { a.batch = int64_t{1} << 31; }, true, true},
      {"num_tables must be in", [](InteractionArguments& a) { a.num_tables = 0; }, true, true},
      {"dim must be in", [](InteractionArguments& a) { a.dim = 0; }, true, true},
      {"shared memory", [](InteractionArguments& a) { a.dim = 1024; }, true, true},
      {"shared memory",
       [](InteractionArguments& a) {
         a.num_tables = 200;
         a.dim = 64;
       },
       true, true},
      {"x is null", [](InteractionArguments& a) { a.x = nullptr; }, true, true},
      {"emb is null", [](InteractionArguments& a) { a.emb = nullptr; }, true, true},
      {"out is null", [](InteractionArguments& a) { a.out = nullptr; }, true, false},
      {"dout is null", [](InteractionArguments& a) { a.dout = nullptr; }, false, true},
      {"dx is null", [](InteractionArguments& a) { a.dx = nullptr; }, false, true},
      {"demb is null", [](InteractionArguments& a) { a.demb = nullptr; }, false, true},
      {"demb and demb_bf16 are both set",
       [](InteractionArguments& a) {
         static __nv_bfloat16 g;
         a.demb_bf16 = &g;
       },
       false, true},
      {"needs bf16 embeddings",
       [](InteractionArguments& a) {
         static __nv_bfloat16 g;
         a.demb = nullptr;
         a.demb_bf16 = &g;
       },
       false, true},
      {"below the output width", [](InteractionArguments& a) { a.out_stride = 478; }, true, true},
      {"bf16 embeddings need bf16 activations",
       [](InteractionArguments& a) { a.embeddings = InteractionType::kBFloat16; }, true, true},
      {"unknown element type",
       [](InteractionArguments& a) { a.activations = static_cast<InteractionType>(7); }, true, true},
  };
  // A bf16 model's embedding gradient (demb_bf16) with bf16 storage: accepted.
  InteractionArguments bf16 = good;
  static __nv_bfloat16 gradient;
  bf16.activations = bf16.embeddings = InteractionType::kBFloat16;
  bf16.demb = nullptr;
  bf16.demb_bf16 = &gradient;
  EXPECT_TRUE(InteractionBackward::can_implement(bf16).ok()) << InteractionBackward::can_implement(bf16).reason();
  InteractionArguments padded = good;
  padded.out_stride = 480;  // DLE's 479 columns in rows of 480
  EXPECT_TRUE(InteractionForward::can_implement(padded).ok()) << InteractionForward::can_implement(padded).reason();
  EXPECT_TRUE(InteractionBackward::can_implement(padded).ok())
      << InteractionBackward::can_implement(padded).reason();
  for (const Case& c : cases) {
    InteractionArguments a = good;
    c.edit(a);
    const Status fwd = InteractionForward::can_implement(a);
    const Status bwd = InteractionBackward::can_implement(a);
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

/// The output rounding allowance of the tolerance comment.
double stored_bound(double bound, double expected, InteractionType type) {
  return is_bf16(type) ? bound + std::ldexp(1.0, -8) * (std::fabs(expected) + bound) : bound;
}

/// The product and accumulation bound of the tolerance comment (CUDA cores),
/// or tf32_bound (tensor cores).
double fp32_bound(double n, double magnitude) { return 2.0 * (n + 1.0) * std::ldexp(1.0, -24) * magnitude; }
double tf32_bound(double n, double magnitude);

/// Forward on the device against the CPU, within the bound of its arithmetic.
void check_forward(const Problem& p, bool tensor_cores, uint32_t seed, Storage storage = kFp32) {
  const cpu::InteractionShape shape{p.batch, p.num_tables, p.dim};
  const int64_t width = cpu::interaction_output_width(p.num_tables, p.dim);
  const auto x = stored(test_support::random_vector(static_cast<size_t>(p.batch * p.dim), seed), storage.activations);
  const auto emb = stored(test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), seed + 1),
                          storage.embeddings);
  std::vector<float> expected(static_cast<size_t>(p.batch * width));
  std::vector<float> magnitude(expected.size());
  cpu::interaction_forward(shape, x.data(), emb.data(), expected.data());
  const auto abs_x = absolute(x);
  const auto abs_emb = absolute(emb);
  cpu::interaction_forward(shape, abs_x.data(), abs_emb.data(), magnitude.data());

  DeviceBuffer<uint8_t> dx = upload(x, storage.activations), demb = upload(emb, storage.embeddings);
  DeviceBuffer<uint8_t> dout(expected.size() * (is_bf16(storage.activations) ? 2 : 4));
  PERFLAB_CUDA_CHECK(cudaMemset(dout.data(), 0xFF, dout.bytes()));  // NaN: every value must be written
  InteractionArguments a;
  a.batch = p.batch;
  a.num_tables = p.num_tables;
  a.dim = p.dim;
  a.x = dx.data();
  a.emb = demb.data();
  a.out = dout.data();
  a.tensor_cores = tensor_cores;
  a.activations = storage.activations;
  a.embeddings = storage.embeddings;
  ASSERT_TRUE(InteractionForward::can_implement(a).ok()) << InteractionForward::can_implement(a).reason();
  InteractionForward::run(a, nullptr, nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const double n = static_cast<double>(p.dim);
  const std::string what = std::string(tensor_cores ? "tensor-core forward out" : "forward out") +
                           (is_bf16(storage.activations) ? (is_bf16(storage.embeddings) ? " (bf16)" : " (bf16 activations)") : "");
  EXPECT_TRUE(close(
      expected, download(dout, expected.size(), storage.activations),
      [&](size_t i) {
        const bool passthrough = static_cast<int64_t>(i) % width < p.dim;
        const double bound = tensor_cores ? tf32_bound(n, magnitude[i]) : fp32_bound(n, magnitude[i]);
        return passthrough ? 0.0 : stored_bound(bound, expected[i], storage.activations);
      },
      what.c_str(), width, p));
}

/// The backward's arguments for problem p stored as `storage`: demb is
/// fp32 or bf16 as storage.gradients says.
InteractionArguments backward_arguments(const Problem& p, const Storage& storage, const void* x, const void* emb,
                                        const void* dout, void* dx, void* demb, bool dx_relu) {
  InteractionArguments a;
  a.batch = p.batch;
  a.num_tables = p.num_tables;
  a.dim = p.dim;
  a.x = x;
  a.emb = emb;
  a.dout = dout;
  a.dx = dx;
  if (is_bf16(storage.gradients)) {
    a.demb_bf16 = static_cast<__nv_bfloat16*>(demb);
  } else {
    a.demb = static_cast<float*>(demb);
  }
  a.activations = storage.activations;
  a.embeddings = storage.embeddings;
  a.dx_relu = dx_relu;
  return a;
}

/// Backward on the device against the CPU, within the bound of its arithmetic.
void check_backward(const Problem& p, bool tensor_cores, uint32_t seed, Storage storage = kFp32,
                    bool dx_relu = false) {
  const cpu::InteractionShape shape{p.batch, p.num_tables, p.dim};
  const int64_t width = cpu::interaction_output_width(p.num_tables, p.dim);
  auto x = stored(test_support::random_vector(static_cast<size_t>(p.batch * p.dim), seed), storage.activations);
  if (dx_relu) {
    for (size_t i = 0; i < x.size(); i += 7) x[i] = 0.0f;  // a ReLU's output holds exact zeros
  }
  const auto emb = stored(test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), seed + 1),
                          storage.embeddings);
  const auto dout =
      stored(test_support::random_vector(static_cast<size_t>(p.batch * width), seed + 2), storage.activations);
  std::vector<float> expected_dx(x.size()), expected_demb(emb.size());
  std::vector<float> magnitude_dx(x.size()), magnitude_demb(emb.size());
  cpu::interaction_backward(shape, x.data(), emb.data(), dout.data(), expected_dx.data(),
                            expected_demb.data());
  const auto abs_x = absolute(x);
  const auto abs_emb = absolute(emb);
  const auto abs_dout = absolute(dout);
  cpu::interaction_backward(shape, abs_x.data(), abs_emb.data(), abs_dout.data(),
                            magnitude_dx.data(), magnitude_demb.data());
  if (dx_relu) {  // the ReLU that made x: dx * (x > 0), exactly 0 where masked
    for (size_t i = 0; i < x.size(); ++i) {
      if (!(x[i] > 0.0f)) expected_dx[i] = magnitude_dx[i] = 0.0f;
    }
  }

  DeviceBuffer<uint8_t> d_x = upload(x, storage.activations), d_emb = upload(emb, storage.embeddings),
                        d_dout = upload(dout, storage.activations);
  DeviceBuffer<uint8_t> d_dx(x.size() * (is_bf16(storage.activations) ? 2 : 4));
  DeviceBuffer<uint8_t> d_demb(emb.size() * (is_bf16(storage.gradients) ? 2 : 4));
  InteractionArguments a =
      backward_arguments(p, storage, d_x.data(), d_emb.data(), d_dout.data(), d_dx.data(), d_demb.data(), dx_relu);
  a.tensor_cores = tensor_cores;
  ASSERT_TRUE(InteractionBackward::can_implement(a).ok()) << InteractionBackward::can_implement(a).reason();
  InteractionBackward::run(a, nullptr, nullptr);
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const double n = static_cast<double>(p.num_tables + 1);
  auto bound = [n, tensor_cores](const std::vector<float>& magnitude, const std::vector<float>& expected,
                                 InteractionType type) {
    return [n, tensor_cores, &magnitude, &expected, type](size_t i) {
      return stored_bound(tensor_cores ? tf32_bound(n, magnitude[i]) : fp32_bound(n, magnitude[i]), expected[i],
                          type);
    };
  };
  EXPECT_TRUE(close(expected_dx, download(d_dx, x.size(), storage.activations),
                    bound(magnitude_dx, expected_dx, storage.activations), "dx", p.dim, p));
  EXPECT_TRUE(close(expected_demb, download(d_demb, emb.size(), storage.gradients),
                    bound(magnitude_demb, expected_demb, storage.gradients), "demb", p.num_tables * p.dim, p));
}

TEST(InteractionCuda, ForwardMatchesCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : problems()) check_forward(p, false, 1);
}

TEST(InteractionCuda, BackwardMatchesCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : problems()) check_backward(p, false, 3);
}


// Rows padded past the width (out_stride): the forward writes the same
// values as into unpadded rows and leaves the padding as it found it; the
// backward reads dout through the same stride and gives the unpadded dx
// and demb bit for bit (same kernel, same order).
TEST(InteractionCuda, PaddedRowsGiveTheUnpaddedResultsAndKeepThePadding) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : problems()) {
    const int64_t width = cpu::interaction_output_width(p.num_tables, p.dim);
    const int64_t stride = width + 3;
    const auto x = test_support::random_vector(static_cast<size_t>(p.batch * p.dim), 6);
    const auto emb = test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), 7);
    const auto dout = test_support::random_vector(static_cast<size_t>(p.batch * width), 8);
    std::vector<float> dout_padded(static_cast<size_t>(p.batch * stride), -7.0f);
    for (int64_t b = 0; b < p.batch; ++b) {
      std::copy(dout.begin() + b * width, dout.begin() + (b + 1) * width, dout_padded.begin() + b * stride);
    }
    DeviceBuffer<float> d_x(x), d_emb(emb), out(static_cast<size_t>(p.batch * width)),
        out_padded(std::vector<float>(static_cast<size_t>(p.batch * stride), -7.0f));
    DeviceBuffer<float> d_dout(dout), d_dout_padded(dout_padded), dx(x.size()), demb(emb.size()), dx_padded(x.size()),
        demb_padded(emb.size());
    InteractionArguments a;
    a.batch = p.batch;
    a.num_tables = p.num_tables;
    a.dim = p.dim;
    a.x = d_x.data();
    a.emb = d_emb.data();
    a.out = out.data();
    a.dout = d_dout.data();
    a.dx = dx.data();
    a.demb = demb.data();
    InteractionArguments padded = a;
    padded.out_stride = stride;
    padded.out = out_padded.data();
    padded.dout = d_dout_padded.data();
    padded.dx = dx_padded.data();
    padded.demb = demb_padded.data();
    InteractionForward::run(a, nullptr, nullptr);
    InteractionForward::run(padded, nullptr, nullptr);
    InteractionBackward::run(a, nullptr, nullptr);
    InteractionBackward::run(padded, nullptr, nullptr);
    const auto plain = out.download();
    const auto wide = out_padded.download();
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t c = 0; c < stride; ++c) {
        const float got = wide[static_cast<size_t>(b * stride + c)];
        if (c < width) {
          ASSERT_EQ(got, plain[static_cast<size_t>(b * width + c)]) << "sample " << b << " column " << c;
        } else {
          ASSERT_EQ(got, -7.0f) << "padding written: sample " << b << " column " << c;
        }
      }
    }
    EXPECT_EQ(dx.download(), dx_padded.download());
    EXPECT_EQ(demb.download(), demb_padded.download());
  }
}

// ---- TF32 tensor cores (InteractionArguments::tensor_cores) ----
//
// Tolerance: every product has both factors rounded to TF32 (10 explicit
// mantissa bits: a relative error of at most 2^-11 each, 2^-10 + 2^-22 for
// the product), then fp32 accumulation in the tensor cores' order (at most
// n * 2^-24 relative over n terms, first order). So an element of n products
// is within (2^-10 + (n + 2) * 2^-24) * m of exact arithmetic, m the same
// sum over absolute values (the tensor cores' accumulation truncates, but
// per 8-term block: at most about n/8 * 2^-23 m, inside the n * 2^-24 m
// term); the CPU adds its own fp32 bound, 2 (n + 1) 2^-24 m, which also
// covers the products' second-order 2^-22 term.
// The x passthrough columns are copies (exact); the backward's dx adds the
// passthrough gradient in fp32 (inside the bound: m counts it).

double tf32_bound(double n, double magnitude) {
  return (std::ldexp(1.0, -10) + (n + 2.0) * std::ldexp(1.0, -24) + 2.0 * (n + 1.0) * std::ldexp(1.0, -24)) *
         magnitude;
}

TEST(InteractionCudaCanImplement, TensorCoresTakeUpTo32FeaturesAndDimsOf16) {
  EXPECT_TRUE(interaction_tensor_cores_fit(26, 128));  // DLE
  EXPECT_TRUE(interaction_tensor_cores_fit(31, 16));
  EXPECT_TRUE(interaction_tensor_cores_fit(1, 16));
  EXPECT_FALSE(interaction_tensor_cores_fit(32, 128)) << "33 features";
  EXPECT_FALSE(interaction_tensor_cores_fit(26, 24)) << "dim not a multiple of 16";
  EXPECT_FALSE(interaction_tensor_cores_fit(26, 8));
  EXPECT_TRUE(interaction_tensor_cores_fit(26, 144)) << "the largest dim within 48 KiB";
  EXPECT_FALSE(interaction_tensor_cores_fit(26, 160)) << "two samples' features beyond 48 KiB";
  EXPECT_FALSE(interaction_tensor_cores_fit(26, 4096));
  alignas(16) float anything[8] = {};
  InteractionArguments a = valid_arguments(anything);
  a.tensor_cores = true;
  EXPECT_TRUE(InteractionForward::can_implement(a).ok()) << InteractionForward::can_implement(a).reason();
  EXPECT_TRUE(InteractionBackward::can_implement(a).ok());
  a.dim = 24;
  const Status s = InteractionForward::can_implement(a);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.reason().find("tensor-core kernels need"), std::string::npos) << s.reason();
  a = valid_arguments(anything);
  a.tensor_cores = true;
  a.emb = anything + 1;  // 4-byte aligned only
  EXPECT_NE(InteractionBackward::can_implement(a).reason().find("16-byte aligned"), std::string::npos);
  for (bool gradient_rows : {false, true}) {
    a = valid_arguments(anything);
    a.tensor_cores = true;
    if (gradient_rows) {
      a.demb = anything + 1;
    } else {
      a.dx = anything + 1;
    }
    const Status unaligned = InteractionBackward::can_implement(a);
    EXPECT_NE(unaligned.reason().find("dx and demb must be 16-byte aligned"), std::string::npos)
        << unaligned.reason();
    EXPECT_TRUE(InteractionForward::can_implement(a).ok()) << "the forward writes neither";
  }
  const LaunchList l = interaction_launches(valid_arguments(anything), false);
  a = valid_arguments(anything);
  a.tensor_cores = true;
  const LaunchList tc = interaction_launches(a, true);
  ASSERT_EQ(l.size(), 1u);
  ASSERT_EQ(tc.size(), 1u);
  EXPECT_EQ(tc[0].kernel, "interaction_backward_tc_kernel");
  EXPECT_EQ(tc[0].cost.precision, "tf32");
}

const std::vector<Problem>& tensor_core_problems() {
  static const std::vector<Problem> all = {
      {37, 26, 128},  // DLE: two row tiles, odd batch (the last block's second warp has no sample)
      {3, 15, 16},    // F = 16: one tile exactly
      {5, 16, 32},    // F = 17: the second tile holds one feature
      {1, 1, 16},     // F = 2
      {2049, 31, 48}, // F = 32: both tiles full
      {7, 26, 144},   // the widest: x's row is 36 four-value vectors (two loads a lane in TF32), 18 in bf16
  };
  return all;
}


TEST(InteractionCuda, TensorCoreForwardMatchesCpuWithinTf32) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : tensor_core_problems()) check_forward(p, true, 11);
}

TEST(InteractionCuda, TensorCoreBackwardMatchesCpuWithinTf32) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (const Problem& p : tensor_core_problems()) check_backward(p, true, 13);
}

// dx_relu: dx leaves as the bottom MLP's last ReLU's input gradient,
// dx * (x > 0) (x holds exact zeros and negatives here), in every storage
// and on both kinds of cores; demb is unchanged.
TEST(InteractionCuda, BackwardAppliesTheReluThatMadeXWhenAsked) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (Storage storage : {kFp32, kBf16}) {
    for (const Problem& p : problems()) check_backward(p, false, 31, storage, true);
    for (const Problem& p : tensor_core_problems()) check_backward(p, true, 33, storage, true);
  }
}

// Where dx and demb are aligned to four elements the CUDA-core backward
// stores a thread's four columns in one access; with either one element
// off, one at a time. The same sums either way: the same bits, against the
// aligned run's (every byte written: the buffers start as 0xFF).
TEST(InteractionCuda, BackwardGivesTheSameBitsWithGradientsOffAlignment) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (Storage storage : {kFp32, kBf16, kBf16Gradients}) {
    for (const Problem& p : {Problem{37, 26, 128}, Problem{2049, 5, 32}}) {
      const int64_t width = cpu::interaction_output_width(p.num_tables, p.dim);
      const auto x = test_support::random_vector(static_cast<size_t>(p.batch * p.dim), 41);
      const auto emb = test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), 42);
      const auto dout = test_support::random_vector(static_cast<size_t>(p.batch * width), 43);
      DeviceBuffer<uint8_t> d_x = upload(stored(x, storage.activations), storage.activations);
      DeviceBuffer<uint8_t> d_emb = upload(stored(emb, storage.embeddings), storage.embeddings);
      DeviceBuffer<uint8_t> d_dout = upload(stored(dout, storage.activations), storage.activations);
      const size_t act = is_bf16(storage.activations) ? 2 : 4, grad = is_bf16(storage.gradients) ? 2 : 4;
      const size_t dx_bytes = x.size() * act, demb_bytes = emb.size() * grad;
      DeviceBuffer<uint8_t> d_dx(dx_bytes + 16), d_demb(demb_bytes + 16);
      std::vector<uint8_t> aligned;
      // Elements past 16-byte alignment: dx's and demb's.
      for (auto [dx_off, demb_off] : {std::pair<size_t, size_t>{0, 0}, {1, 1}, {0, 1}, {1, 0}}) {
        PERFLAB_CUDA_CHECK(cudaMemset(d_dx.data(), 0xFF, d_dx.bytes()));
        PERFLAB_CUDA_CHECK(cudaMemset(d_demb.data(), 0xFF, d_demb.bytes()));
        void* demb = d_demb.data() + demb_off * grad;
        const InteractionArguments a = backward_arguments(p, storage, d_x.data(), d_emb.data(), d_dout.data(),
                                                          d_dx.data() + dx_off * act, demb, true);
        ASSERT_TRUE(InteractionBackward::can_implement(a).ok()) << InteractionBackward::can_implement(a).reason();
        InteractionBackward::run(a, nullptr, nullptr);
        std::vector<uint8_t> bytes(dx_bytes + demb_bytes);
        PERFLAB_CUDA_CHECK(cudaMemcpy(bytes.data(), a.dx, dx_bytes, cudaMemcpyDeviceToHost));
        PERFLAB_CUDA_CHECK(cudaMemcpy(bytes.data() + dx_bytes, demb, demb_bytes, cudaMemcpyDeviceToHost));
        if (dx_off == 0 && demb_off == 0) {
          aligned = std::move(bytes);
          continue;
        }
        EXPECT_TRUE(bytes == aligned) << p.describe() << ", dx " << dx_off << " and demb " << demb_off
                                      << " elements off alignment, activations "
                                      << (is_bf16(storage.activations) ? "bf16" : "fp32") << ", demb "
                                      << (is_bf16(storage.gradients) ? "bf16" : "fp32");
      }
    }
  }
}

// Past what fits beside the features in shared memory (81 features of 128
// floats: 42.8 KB, and their 3,240 pairs would pass 48 KB), the forward
// writes its pairs straight to out instead of gathering them first.
TEST(InteractionCuda, ForwardWithoutRoomToGatherItsPairsMatchesCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (Storage storage : {kFp32, kBf16}) {
    check_forward({5, 80, 128}, false, 45, storage);
    check_forward({2049, 80, 128}, false, 46, storage);
  }
}

// A bf16 model's interaction: bf16 activations with bf16 embeddings
// (training) or fp32 embeddings (serving), on the CUDA cores and tensor cores.
TEST(InteractionCuda, Bf16StorageMatchesCpuWithinItsRounding) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (Storage storage : {kBf16Activations, kBf16, kBf16Gradients}) {
    for (const Problem& p : problems()) {
      check_forward(p, false, 21, storage);
      check_backward(p, false, 23, storage);
    }
    for (const Problem& p : tensor_core_problems()) {
      check_forward(p, true, 25, storage);
      check_backward(p, true, 27, storage);
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
