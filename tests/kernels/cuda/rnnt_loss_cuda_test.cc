// Tests for the CUDA RNN-T loss (kernels/cuda/rnnt_loss.h) against the CPU
// reference (kernels/cpu/rnnt_loss.h, <float, double>) on seeded random
// problems at odd sizes, both variants, padded and packed, every reduction,
// fp32/fp16/bf16 logits. Logits are multiples of 1/64 in [-3, 3], exact in
// every dtype, so the device and the reference read the same numbers.
//
// Tolerances (|actual - expected| <= atol + rtol*|expected|):
//   costs and loss: rtol 1e-4, atol 1e-5 (all dtypes: the logits are exact).
//   gradient:       atol = 1e-5 + 2*eps_f32*max_cost*sqrt(T+U): the device
//                   recursions run in fp32, whose rounding of alpha + beta +
//                   cost (magnitude ~max_cost, ~T+U steps) is the exponent
//                   error of every gradient term; rtol 0 for fp32, 2^-8 for
//                   bf16, 2^-10 for fp16 outputs (one rounding of the result).
//   padding rows of a padded gradient: exactly 0.
// They skip without a device; rnnt_loss_cuda_host_test.cc has the checks
// that need none (can_implement, workspace sizes).
#include "kernels/cuda/capture.h"
#include "kernels/cuda/rnnt_loss.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "tests/support/cuda_device.h"
#include "tests/support/half_precision.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using Variant = RnntLoss::Variant;
using cpu::RnntReduction;
using cpu::RnntShape;
using test_support::from_bf16;
using test_support::from_fp16;
using test_support::to_bf16;
using test_support::to_fp16;

/// Element bytes of `values` in `dtype`.
std::vector<uint8_t> encode(const std::vector<float>& values, RnntDType dtype) {
  std::vector<uint8_t> bytes(values.size() * rnnt_dtype_bytes(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == RnntDType::kFloat32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h = dtype == RnntDType::kBFloat16 ? to_bf16(values[i]) : to_fp16(values[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, RnntDType dtype) {
  const size_t element = rnnt_dtype_bytes(dtype);
  std::vector<float> values(bytes.size() / element);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == RnntDType::kFloat32) {
      std::memcpy(&values[i], &bytes[4 * i], 4);
    } else {
      uint16_t h = 0;
      std::memcpy(&h, &bytes[2 * i], 2);
      values[i] = dtype == RnntDType::kBFloat16 ? from_bf16(h) : from_fp16(h);
    }
  }
  return values;
}

// ---- problems ----

struct Problem {
  RnntShape shape;
  std::vector<float> logits;  // padded [B, T, U+1, V]; padding rows NaN (never read)
  std::vector<int32_t> labels, frames, lengths;
};

std::string describe(const RnntShape& s) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " V=" + std::to_string(s.vocab);
}

int64_t padded_row(const RnntShape& s, int64_t b, int64_t t, int64_t u) {
  return (b * s.max_time + t) * (s.max_labels + 1) + u;
}

bool valid_row(const Problem& p, int64_t b, int64_t t, int64_t u) {
  return t < p.frames[b] && u <= p.lengths[b];
}

/// Random logits k/64 in [-3, 3], random non-blank labels (blank = V-1).
Problem random_problem(const RnntShape& s, std::vector<int32_t> frames,
                       std::vector<int32_t> lengths, uint32_t seed) {
  Problem p{s, {}, {}, std::move(frames), std::move(lengths)};
  p.logits = test_support::random_vector(
      static_cast<size_t>(cpu::rnnt_padded_rows(s) * s.vocab), seed, -3, 3);
  for (float& z : p.logits) z = std::round(z * 64) / 64;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.max_time; ++t) {
      for (int64_t u = 0; u <= s.max_labels; ++u) {
        if (valid_row(p, b, t, u)) continue;
        const int64_t r = padded_row(s, b, t, u);
        std::fill(p.logits.begin() + r * s.vocab, p.logits.begin() + (r + 1) * s.vocab, NAN);
      }
    }
  }
  std::mt19937 gen(seed + 1000);
  p.labels.assign(static_cast<size_t>(s.batch * s.max_labels), 0);
  if (s.vocab > 1) {
    std::uniform_int_distribution<int32_t> symbol(0, static_cast<int32_t>(s.vocab - 2));
    for (int32_t& y : p.labels) y = symbol(gen);
  }
  return p;
}

struct Reference {
  std::vector<double> costs;
  double loss = 0;
  std::vector<float> grad;  // padded
};

Reference reference(const Problem& p, RnntReduction reduction) {
  Reference r;
  r.costs.resize(static_cast<size_t>(p.shape.batch));
  r.grad.resize(p.logits.size());
  std::vector<double> ws(
      static_cast<size_t>(cpu::rnnt_workspace_elements(cpu::rnnt_padded_rows(p.shape))));
  r.loss = cpu::rnnt_loss<float, double>(p.shape, {-1, reduction}, p.logits.data(), p.labels.data(),
                                         p.frames.data(), p.lengths.data(), r.costs.data(),
                                         r.grad.data(), ws.data());
  return r;
}

/// One configuration of a device run.
struct Config {
  Variant variant = Variant::kFused;
  TransducerLayout layout = TransducerLayout::kPadded;
  RnntDType dtype = RnntDType::kFloat32;
  RnntReduction reduction = RnntReduction::kMean;
  bool with_grad = true;
};

std::string describe(const Problem& p, const Config& c) {
  static const char* reductions[] = {"none", "sum", "mean"};
  return describe(p.shape) + " " + rnnt_variant_name(c.variant) + " " +
         (c.layout == TransducerLayout::kPacked ? "packed" : "padded") + " " +
         rnnt_dtype_name(c.dtype) + " reduction=" + reductions[static_cast<int>(c.reduction)];
}

struct DeviceResult {
  std::vector<float> costs;
  float loss = 0;
  std::vector<float> grad;       // in the run's layout (empty without a gradient)
  std::vector<int64_t> offsets;  // packed row offsets (host copy)
};

/// Uploads the problem, runs the operator once on `stream` and downloads.
DeviceResult run_device(const Problem& p, const Config& c, cudaStream_t stream = nullptr) {
  const RnntShape& s = p.shape;
  const bool packed = c.layout == TransducerLayout::kPacked;
  DeviceResult out;
  out.offsets.resize(static_cast<size_t>(s.batch + 1));
  const int64_t packed_rows =
      cpu::rnnt_packed_offsets(s.batch, p.frames.data(), p.lengths.data(), out.offsets.data());
  std::vector<float> logits = p.logits;
  if (packed) {  // gather the valid rows in packed order
    logits.clear();
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t t = 0; t < p.frames[b]; ++t) {
        for (int64_t u = 0; u <= p.lengths[b]; ++u) {
          const auto first = p.logits.begin() + padded_row(s, b, t, u) * s.vocab;
          logits.insert(logits.end(), first, first + s.vocab);
        }
      }
    }
  }
  DeviceBuffer<uint8_t> d_logits(encode(logits, c.dtype));
  DeviceBuffer<uint8_t> d_grad(c.with_grad ? d_logits.size() : 0);
  if (d_grad.size() > 0) PERFLAB_CUDA_CHECK(cudaMemset(d_grad.data(), 0xFF, d_grad.bytes()));
  DeviceBuffer<int32_t> d_labels(p.labels), d_frames(p.frames), d_lengths(p.lengths);
  DeviceBuffer<int64_t> d_offsets(out.offsets);
  DeviceBuffer<float> d_costs(static_cast<size_t>(s.batch)), d_loss(1);
  PERFLAB_CUDA_CHECK(cudaMemset(d_loss.data(), 0xFF, d_loss.bytes()));

  RnntLossArguments args;
  args.shape = s;
  args.options = {-1, c.reduction};
  args.layout = c.layout;
  args.dtype = c.dtype;
  args.logits = d_logits.data();
  args.labels = d_labels.data();
  args.logit_lengths = d_frames.data();
  args.label_lengths = d_lengths.data();
  args.packed_offsets = packed ? d_offsets.data() : nullptr;
  args.packed_rows = packed ? packed_rows : 0;
  args.costs = d_costs.data();
  args.grad = c.with_grad ? d_grad.data() : nullptr;
  args.loss = d_loss.data();
  const Status ok = RnntLoss::can_implement(args, c.variant);
  EXPECT_TRUE(ok.ok()) << ok.reason();
  DeviceBuffer<uint8_t> workspace(RnntLoss::workspace_bytes(args, c.variant));
  const Status ran = RnntLoss().run(args, c.variant, workspace.data(), stream);
  EXPECT_TRUE(ran.ok()) << ran.reason();
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // test only: run() itself never syncs
  out.costs = d_costs.download();
  out.loss = d_loss.download()[0];
  if (c.with_grad) out.grad = decode(d_grad.download(), c.dtype);
  return out;
}

bool close(double actual, double expected, double atol, double rtol) {
  return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);  // false for NaN
}

/// Compares a device run with the reference; describes the first mismatch.
::testing::AssertionResult matches(const Problem& p, const Config& c, const Reference& ref,
                                   const DeviceResult& dev) {
  const RnntShape& s = p.shape;
  double max_cost = 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    max_cost = std::max(max_cost, std::fabs(ref.costs[b]));
    if (!close(dev.costs[b], ref.costs[b], 1e-5, 1e-4)) {
      return ::testing::AssertionFailure() << describe(p, c) << ": costs[" << b << "] expected "
                                           << ref.costs[b] << " actual " << dev.costs[b];
    }
  }
  if (!close(dev.loss, ref.loss, 1e-5, 1e-4)) {
    return ::testing::AssertionFailure() << describe(p, c) << ": loss expected " << ref.loss
                                         << " actual " << dev.loss;
  }
  if (!c.with_grad) return ::testing::AssertionSuccess();
  const double atol = 1e-5 + 2 * FLT_EPSILON * max_cost *
                                 std::sqrt(static_cast<double>(s.max_time + s.max_labels));
  const double rtol = c.dtype == RnntDType::kBFloat16  ? std::ldexp(1.0, -8)
                      : c.dtype == RnntDType::kFloat16 ? std::ldexp(1.0, -10)
                                                       : 0.0;
  const bool packed = c.layout == TransducerLayout::kPacked;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.max_time; ++t) {
      for (int64_t u = 0; u <= s.max_labels; ++u) {
        const bool valid = valid_row(p, b, t, u);
        if (packed && !valid) continue;
        const int64_t ref_row = padded_row(s, b, t, u);
        const int64_t row = packed ? dev.offsets[b] + t * (p.lengths[b] + 1) + u : ref_row;
        for (int64_t v = 0; v < s.vocab; ++v) {
          const float actual = dev.grad[row * s.vocab + v];
          const float expected = valid ? ref.grad[ref_row * s.vocab + v] : 0.0f;
          const bool ok = valid ? close(actual, expected, atol, rtol) : actual == 0.0f;
          if (!ok) {
            return ::testing::AssertionFailure()
                   << describe(p, c) << ": grad(b=" << b << ", t=" << t << ", u=" << u
                   << ", v=" << v << ")" << (valid ? "" : " [padding]") << " expected " << expected
                   << " actual " << actual << " (atol " << atol << ", rtol " << rtol << ")";
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

/// Every variant x layout x reduction (x dtype in `dtypes`) against the reference.
void check_all(const Problem& p, const std::vector<RnntDType>& dtypes,
               const std::vector<RnntReduction>& reductions) {
  for (RnntReduction reduction : reductions) {
    const Reference ref = reference(p, reduction);
    for (RnntDType dtype : dtypes) {
      for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
        for (TransducerLayout layout : {TransducerLayout::kPadded, TransducerLayout::kPacked}) {
          const Config c{variant, layout, dtype, reduction, true};
          EXPECT_TRUE(matches(p, c, ref, run_device(p, c)));
        }
      }
    }
  }
}

const std::vector<RnntDType> kAllDtypes = {RnntDType::kFloat32, RnntDType::kBFloat16,
                                           RnntDType::kFloat16};
const std::vector<RnntReduction> kAllReductions = {RnntReduction::kNone, RnntReduction::kSum,
                                                   RnntReduction::kMean};

// ---- device ----

TEST(RnntLossCuda, MatchesCpuReferenceAtOddSizes) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  check_all(random_problem({3, 7, 4, 5}, {7, 7, 7}, {4, 4, 4}, 11), kAllDtypes, kAllReductions);
  check_all(random_problem({3, 7, 4, 5}, {7, 5, 1}, {4, 0, 2}, 12), kAllDtypes, kAllReductions);
  check_all(random_problem({2, 37, 13, 29}, {37, 20}, {13, 7}, 13), kAllDtypes, kAllReductions);
  check_all(random_problem({1, 1, 0, 3}, {1}, {0}, 14), kAllDtypes, kAllReductions);
  check_all(random_problem({1, 1, 0, 1}, {1}, {0}, 15), kAllDtypes, kAllReductions);  // V = 1
  check_all(random_problem({5, 9, 6, 33}, {9, 1, 4, 8, 2}, {6, 6, 0, 3, 1}, 16), kAllDtypes,
            kAllReductions);
}

// V a multiple of 4: rows read and written four elements at a time
// (RnntProblem::vector4), the blank and the labels inside a group of four,
// at its first and its last element; every dtype, reduction and layout; the
// log-sum-exp's row in registers (V <= 1024) and read twice (V > 1024).
TEST(RnntLossCuda, FourAtATimeRowsMatchCpuReference) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  check_all(random_problem({3, 7, 4, 12}, {7, 5, 1}, {4, 0, 2}, 17), kAllDtypes, kAllReductions);
  check_all(random_problem({2, 19, 9, 4}, {19, 11}, {9, 3}, 18), kAllDtypes, kAllReductions);  // V = 4: one group
  check_all(random_problem({4, 13, 6, 36}, {13, 13, 2, 9}, {6, 1, 0, 5}, 19), kAllDtypes, kAllReductions);
  // A row held in registers whole (V = 1024, the most), and one past it,
  // read twice from memory (V = 1028).
  check_all(random_problem({2, 4, 3, 1024}, {4, 2}, {3, 1}, 20), kAllDtypes, kAllReductions);
  check_all(random_problem({2, 4, 3, 1028}, {4, 3}, {3, 2}, 22), kAllDtypes, kAllReductions);
}

TEST(RnntLossCuda, MatchesCpuReferenceAtMlperfSmallVocab) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem p = random_problem({4, 150, 40, 28}, {150, 97, 120, 64}, {40, 12, 33, 1}, 21);
  check_all(p, {RnntDType::kFloat32, RnntDType::kBFloat16}, {RnntReduction::kMean});
  check_all(p, {RnntDType::kFloat32}, {RnntReduction::kSum});
}

// Long label sequences: past 255 labels a diagonal has more nodes than the
// recursion's 256 threads (a thread takes several, and its log-probs loaded
// ahead are for its first only); past 6,143 two diagonals no longer fit in
// 48 KiB of shared memory and the previous one is read from global memory.
TEST(RnntLossCuda, MatchesCpuReferenceWithMoreLabelsThanThreads) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  check_all(random_problem({2, 6, 300, 5}, {6, 3}, {300, 257}, 23), {RnntDType::kFloat32, RnntDType::kBFloat16},
            {RnntReduction::kNone});
  check_all(random_problem({1, 3, 6200, 3}, {3}, {6200}, 24), {RnntDType::kFloat32}, {RnntReduction::kNone});
}

TEST(RnntLossCuda, CostsOnlyWithoutGradient) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem p = random_problem({3, 11, 5, 7}, {11, 3, 8}, {5, 2, 0}, 31);
  for (RnntReduction reduction : kAllReductions) {
    const Reference ref = reference(p, reduction);
    for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
      for (TransducerLayout layout : {TransducerLayout::kPadded, TransducerLayout::kPacked}) {
        const Config c{variant, layout, RnntDType::kFloat32, reduction, false};
        EXPECT_TRUE(matches(p, c, ref, run_device(p, c)));
      }
    }
  }
}

TEST(RnntLossCuda, PaddingRowsOfTheGradientAreExactlyZero) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  // The device gradient starts as all-ones bytes (NaN), padding logits are NaN.
  const Problem p = random_problem({3, 9, 4, 6}, {9, 2, 5}, {4, 0, 3}, 41);
  for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
    for (RnntDType dtype : kAllDtypes) {
      const DeviceResult dev =
          run_device(p, {variant, TransducerLayout::kPadded, dtype, RnntReduction::kMean, true});
      int64_t padding_values = 0;
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t t = 0; t < 9; ++t) {
          for (int64_t u = 0; u <= 4; ++u) {
            if (valid_row(p, b, t, u)) continue;
            for (int64_t v = 0; v < 6; ++v) {
              const float g = dev.grad[padded_row(p.shape, b, t, u) * 6 + v];
              ASSERT_EQ(g, 0.0f) << rnnt_variant_name(variant) << " " << rnnt_dtype_name(dtype)
                                 << " b=" << b << " t=" << t << " u=" << u << " v=" << v;
              ++padding_values;
            }
          }
        }
      }
      EXPECT_EQ(padding_values, (0 + (45 - 2 * 1) + (45 - 5 * 4)) * 6);  // 45 rows per sequence
    }
  }
}

// With equal logits every emission has probability 1/V and there are
// C(T+U-1, U) paths of T+U emissions: cost = (T+U)·log V - log C(T+U-1, U).
// T=1000, U=200 would underflow anywhere but in log space.
TEST(RnntLossCuda, LongSequenceMatchesClosedFormWithoutUnderflow) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const int64_t t = 1000, u = 200, v = 8;
  Problem p = random_problem({1, t, u, v}, {static_cast<int32_t>(t)}, {static_cast<int32_t>(u)}, 51);
  std::fill(p.logits.begin(), p.logits.end(), 0.25f);
  const double log_paths = std::lgamma(double(t + u)) - std::lgamma(double(u + 1)) - std::lgamma(double(t));
  const double expected = double(t + u) * std::log(double(v)) - log_paths;
  const Reference ref = reference(p, RnntReduction::kSum);
  for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
    const Config c{variant, TransducerLayout::kPadded, RnntDType::kFloat32, RnntReduction::kSum, true};
    const DeviceResult dev = run_device(p, c);
    EXPECT_NEAR(dev.costs[0], expected, 1e-4 * expected) << rnnt_variant_name(variant);
    // Against the reference too (its gradient tolerance grows with the cost).
    EXPECT_TRUE(matches(p, c, ref, dev));
    // Rows sum to zero up to fp32 rounding of log-space values of magnitude
    // ~2000 (ulp 1.2e-4), which sets the relative error of gamma.
    for (int64_t r = 0; r < t * (u + 1); ++r) {
      double sum = 0;
      for (int64_t k = 0; k < v; ++k) {
        const float g = dev.grad[r * v + k];
        ASSERT_TRUE(std::isfinite(g)) << rnnt_variant_name(variant) << " row " << r << " v " << k;
        sum += g;
      }
      ASSERT_NEAR(sum, 0.0, 2e-3) << rnnt_variant_name(variant) << " gradient row " << r
                                  << " (t=" << r / (u + 1) << ", u=" << r % (u + 1) << ")";
    }
  }
}

TEST(RnntLossCuda, RunMakesNoHostSyncAndCanBeCapturedInAGraph) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem p = random_problem({3, 8, 3, 9}, {8, 6, 2}, {3, 1, 2}, 61);
  for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
    const Config c{variant, TransducerLayout::kPacked, RnntDType::kFloat32, RnntReduction::kMean, true};
    const DeviceResult direct = run_device(p, c);

    // The same run, captured: any synchronisation inside run() breaks capture.
    std::vector<int64_t> offsets(4);
    const int64_t rows = cpu::rnnt_packed_offsets(3, p.frames.data(), p.lengths.data(), offsets.data());
    std::vector<float> logits;
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t t = 0; t < p.frames[b]; ++t) {
        for (int64_t u = 0; u <= p.lengths[b]; ++u) {
          const auto first = p.logits.begin() + padded_row(p.shape, b, t, u) * 9;
          logits.insert(logits.end(), first, first + 9);
        }
      }
    }
    DeviceBuffer<float> d_logits(logits), d_grad(logits.size()), d_costs(3), d_loss(1);
    DeviceBuffer<int32_t> d_labels(p.labels), d_frames(p.frames), d_lengths(p.lengths);
    DeviceBuffer<int64_t> d_offsets(offsets);
    RnntLossArguments args;
    args.shape = p.shape;
    args.layout = TransducerLayout::kPacked;
    args.logits = d_logits.data();
    args.labels = d_labels.data();
    args.logit_lengths = d_frames.data();
    args.label_lengths = d_lengths.data();
    args.packed_offsets = d_offsets.data();
    args.packed_rows = rows;
    args.costs = d_costs.data();
    args.grad = d_grad.data();
    args.loss = d_loss.data();
    DeviceBuffer<uint8_t> workspace(RnntLoss::workspace_bytes(args, variant));
    cudaStream_t stream = nullptr;
    PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const int64_t syncs_before = host_sync_count();
    cudaGraph_t graph = nullptr;
    kernels::cuda::begin_capture(stream);
    const Status ran = RnntLoss().run(args, variant, workspace.data(), stream);
    PERFLAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    EXPECT_TRUE(ran.ok()) << ran.reason();
    EXPECT_EQ(host_sync_count(), syncs_before) << rnnt_variant_name(variant);
    cudaGraphExec_t exec = nullptr;
    PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // replays give the same answer
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_EQ(d_costs.download(), direct.costs) << rnnt_variant_name(variant);
    EXPECT_EQ(d_loss.download()[0], direct.loss) << rnnt_variant_name(variant);
    EXPECT_EQ(d_grad.download(), direct.grad) << rnnt_variant_name(variant);
    PERFLAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
    PERFLAB_CUDA_CHECK(cudaGraphDestroy(graph));
    PERFLAB_CUDA_CHECK(cudaStreamDestroy(stream));
  }
}

// The device cannot throw: a sequence with a bad length or label gets cost
// NaN (and NaN gradient rows, padded), and the other sequences are unharmed.
TEST(RnntLossCuda, InvalidSequencesGiveNanCostsWithoutHarmingOthers) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const Problem good = random_problem({1, 6, 3, 5}, {6}, {2}, 71);
  const Reference ref = reference(good, RnntReduction::kSum);
  struct Bad {
    const char* what;
    int32_t frames, length, label;
  };
  // Every row of the bad sequence is in its grid (or the grid itself is
  // invalid), so every one of its padded gradient rows must be NaN.
  for (const Bad bad : {Bad{"label length > U", 6, 4, 0}, Bad{"no frames", 0, 1, 0},
                        Bad{"frames > T", 7, 1, 0}, Bad{"blank label", 6, 3, 4},
                        Bad{"label out of range", 6, 3, 9}, Bad{"negative label", 6, 3, -1}}) {
    // Sequence 0 is the good one; sequence 1 is bad (its logits are all valid numbers).
    Problem p = random_problem({2, 6, 3, 5}, {6, 6}, {2, 3}, 72);
    std::copy(good.logits.begin(), good.logits.end(), p.logits.begin());
    for (size_t i = good.logits.size(); i < p.logits.size(); ++i) p.logits[i] = 0.5f;
    p.labels = {good.labels[0], good.labels[1], good.labels[2], bad.label, bad.label, bad.label};
    p.frames[1] = bad.frames;
    p.lengths[1] = bad.length;
    for (Variant variant : {Variant::kUnfused, Variant::kFused}) {
      const DeviceResult dev =
          run_device(p, {variant, TransducerLayout::kPadded, RnntDType::kFloat32, RnntReduction::kSum, true});
      EXPECT_TRUE(std::isnan(dev.costs[1])) << bad.what;
      EXPECT_TRUE(std::isnan(dev.loss)) << bad.what;
      EXPECT_NEAR(dev.costs[0], ref.costs[0], 1e-4 * ref.costs[0]) << bad.what;
      for (int64_t i = 0; i < 6 * 4 * 5; ++i) {
        ASSERT_NEAR(dev.grad[i], ref.grad[i], 1e-4) << bad.what << " grad of the good sequence at " << i;
        ASSERT_TRUE(std::isnan(dev.grad[6 * 4 * 5 + i])) << bad.what << " grad of the bad sequence at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
