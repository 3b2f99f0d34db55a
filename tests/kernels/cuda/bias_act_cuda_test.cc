// The unfused bias/activation kernels and our own fused epilogues against
// the CPU reference on odd shapes (rows 1, 3, 37, 2049 x cols 1, 3, 13, 127,
// 479; the fused ones also 20,001 rows and 8, 256, 1024 and 1032 columns,
// their 16-byte paths, relu_bias_grad's one-pass and two-pass kernels, and
// misaligned pointers), fp32 and bf16,
// and the ReLU-bitmask reader against cuBLASLt's own EPILOGUE_RELU_AUX_BIAS
// mask.
// Tolerances: elementwise results are exact in fp32 and within one bf16
// rounding (2^-8 relative) in bf16; the bias gradient within 1e-5 (fp32) or
// 2e-2 (bf16) of Σ|dy| per column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/relu.h"
#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/linear.h"
#include "tests/support/stored_values.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using test_support::random_vector;

/// Uploads `values` as `dtype` (rounding them in place for bf16).
DeviceBuffer<uint8_t> upload(DType dtype, std::vector<float>& values) {
  return test_support::upload_stored(values, dtype == DType::kBF16);
}

std::vector<float> download(DType dtype, const DeviceBuffer<uint8_t>& dev, size_t n) {
  return test_support::download_stored(dev, n, dtype == DType::kBF16);
}

/// Reports the first element off by more than tol * scale[i] (+ 0 for exact).
void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  const std::vector<double>& scale, double tol, int64_t cols,
                  const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double bound = tol * scale[i];
    if (!(std::fabs(double{actual[i]} - expected[i]) <= bound)) {
      ADD_FAILURE() << what << " mismatch at [" << i / cols << ", " << i % cols << "]: expected "
                    << expected[i] << ", actual " << actual[i] << ", bound " << bound;
      return;
    }
  }
}

const int64_t kRows[] = {1, 3, 37, 2049};
const int64_t kCols[] = {1, 3, 13, 127, 479};

/// Elementwise results: exact in fp32, one bf16 rounding (2^-8 relative) in bf16.
double elementwise_tolerance(DType dtype) { return dtype == DType::kBF16 ? 1.0 / 256 : 0.0; }
/// Column sums, relative to Σ|value| per column.
double sum_tolerance(DType dtype) { return dtype == DType::kBF16 ? 2e-2 : 1e-5; }

/// Per column of a [rows, cols] matrix: the sum (the reference db) and the
/// sum of magnitudes (its tolerance's scale, at least 1e-30).
struct ColumnSums {
  std::vector<float> sum;
  std::vector<double> magnitude;
};
ColumnSums column_sums(const std::vector<float>& values, int64_t cols) {
  std::vector<double> sums(static_cast<size_t>(cols), 0.0);
  ColumnSums out{std::vector<float>(static_cast<size_t>(cols)), std::vector<double>(static_cast<size_t>(cols), 0.0)};
  for (size_t i = 0; i < values.size(); ++i) {
    sums[i % static_cast<size_t>(cols)] += values[i];
    out.magnitude[i % static_cast<size_t>(cols)] += std::fabs(values[i]);
  }
  for (size_t c = 0; c < sums.size(); ++c) {
    out.sum[c] = static_cast<float>(sums[c]);
    out.magnitude[c] = std::max(out.magnitude[c], 1e-30);
  }
  return out;
}

class BiasActCudaTest : public ::testing::TestWithParam<DType> {};

TEST_P(BiasActCudaTest, ElementwiseKernelsAndBiasGradMatchCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const DType dtype = GetParam();
  const bool bf16 = dtype == DType::kBF16;
  const double elementwise_tol = elementwise_tolerance(dtype);
  const double sum_tol = sum_tolerance(dtype);
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreate(&stream));
  for (int64_t rows : kRows) {
    for (int64_t cols : kCols) {
      SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                   (bf16 ? " bf16" : " fp32"));
      const auto n = static_cast<size_t>(rows * cols);
      std::vector<float> x = random_vector(n, 1), b = random_vector(static_cast<size_t>(cols), 2);
      std::vector<float> dy = random_vector(n, 3);
      auto x_dev = upload(dtype, x), b_dev = upload(dtype, b), dy_dev = upload(dtype, dy);
      std::vector<float> zeros(n, 0.0f);
      auto y_dev = upload(dtype, zeros), r_dev = upload(dtype, zeros),
           dx_dev = upload(dtype, zeros);
      std::vector<float> db_zero(static_cast<size_t>(cols), 0.0f);
      auto db_dev = upload(dtype, db_zero);
      DeviceBuffer<uint8_t> workspace(std::max<size_t>(1, bias_grad_workspace_bytes(rows, cols)));

      const int64_t syncs = host_sync_count();
      // y = x + b; r = relu(y); dx = drelu(r) * dy; db = colsum(dy).
      PERFLAB_CUDA_CHECK(cudaMemcpyAsync(y_dev.data(), x_dev.data(), n * dtype_bytes(dtype),
                                         cudaMemcpyDeviceToDevice, stream));
      add_bias(dtype, rows, cols, y_dev.data(), b_dev.data(), stream);
      relu_forward(dtype, static_cast<int64_t>(n), y_dev.data(), r_dev.data(), stream);
      relu_backward(dtype, static_cast<int64_t>(n), r_dev.data(), dy_dev.data(), dx_dev.data(),
                    stream);
      bias_grad(dtype, rows, cols, dy_dev.data(), db_dev.data(), workspace.data(), stream);
      EXPECT_EQ(host_sync_count(), syncs);
      counted_stream_synchronize(stream);
      const std::vector<float> biased = download(dtype, y_dev, n);

      std::vector<float> biased_ref(n);
      std::vector<double> scale(n);
      for (size_t i = 0; i < n; ++i) {
        biased_ref[i] = x[i] + b[i % cols];
        scale[i] = std::fabs(biased_ref[i]);
      }
      expect_close(biased, biased_ref, scale, elementwise_tol, cols, "add_bias");
      // ReLU and its backward on the GPU's own biased values: exact.
      std::vector<float> y_ref(n), dx_ref(n);
      cpu::relu_forward(static_cast<int64_t>(n), biased.data(), y_ref.data());
      const std::vector<float> y = download(dtype, r_dev, n);
      std::vector<double> exact(n, 0.0);
      expect_close(y, y_ref, exact, 0.0, cols, "relu_forward");
      cpu::relu_backward(static_cast<int64_t>(n), y.data(), dy.data(), dx_ref.data());
      expect_close(download(dtype, dx_dev, n), dx_ref, exact, 0.0, cols, "relu_backward");

      const ColumnSums db_ref = column_sums(dy, cols);
      expect_close(download(dtype, db_dev, static_cast<size_t>(cols)), db_ref.sum, db_ref.magnitude, sum_tol,
                   cols, "bias_grad");
    }
  }
  cudaStreamDestroy(stream);
}

// Our own fused epilogues: bias_activation (bias + ReLU, or bias alone) in
// one pass and relu_bias_grad (dReLU + db in one pass over dy, or db alone),
// on the odd widths and on whole 16-byte rows (8 and 256 columns: the
// vector paths of both types). Tolerances: bias + ReLU exact in fp32 (the
// same single float addition as the reference) and within one bf16 rounding
// (2^-8 relative) in bf16; the dReLU exact; db within sum_tol of Σ|dz|.
TEST_P(BiasActCudaTest, OwnFusedEpiloguesMatchCpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const DType dtype = GetParam();
  const bool bf16 = dtype == DType::kBF16;
  const double elementwise_tol = elementwise_tolerance(dtype);
  const double sum_tol = sum_tolerance(dtype);
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreate(&stream));
  // 1024: bf16's 8-wide groups over four column tiles of 256, fp32's 4-wide
  // over eight of 128 (the last blocks read their partials 16 bytes at
  // once); 1032: the same with a partial last tile.
  const int64_t widths[] = {1, 3, 13, 127, 479, 8, 256, 1024, 1032};
  // 20,001 rows: 79 a slice at every width but 479 (290), so a lane of the
  // first pass runs three or more batches of four rows, the last one
  // partial, and the last blocks sum up to 256 slices (several batches a
  // lane). Up to 2,048 rows the one-pass kernel runs (1, 3, 37), beyond them
  // the two-pass one; at 37, 2,049 and 20,001 each kernel is also forced
  // (the one-pass kernel's lanes take 40 batches at 20,001), and the forced
  // kernel that the automatic choice names gives its bits.
  const int64_t row_counts[] = {1, 3, 37, 2049, 20001};
  const ReluBiasGradPasses all_passes[] = {ReluBiasGradPasses::kAuto, ReluBiasGradPasses::kOne,
                                           ReluBiasGradPasses::kTwo};
  const size_t element = bf16 ? 2 : 4;
  // One set of counters for every call below: each call must leave them 0.
  DeviceBuffer<unsigned> done(std::vector<unsigned>(static_cast<size_t>(relu_bias_grad_counters(1032)), 0u));
  for (int64_t rows : row_counts) {
    const bool forced_too = rows == 37 || rows == 2049 || rows == 20001;
    for (int64_t cols : widths) {
      for (bool relu : {true, false}) {
        std::vector<float> auto_db;
        for (ReluBiasGradPasses passes : all_passes) {
          if (passes != ReluBiasGradPasses::kAuto && !forced_too) continue;
          const bool one_pass = passes == ReluBiasGradPasses::kOne ||
                                (passes == ReluBiasGradPasses::kAuto && relu_bias_grad_one_pass(rows));
          // Misaligned, on the vector widths at 37 and 2,049 rows: the
          // workspace 4 bytes past 16-byte alignment (two passes) or y and dy
          // one element past it (one pass, which reads no workspace). The
          // whole launch takes the one-element path, and db the same
          // summation order: the same bits.
          std::vector<float> aligned_db;
          for (bool misaligned : {false, true}) {
            if (misaligned && ((rows != 37 && rows != 2049) || cols % 8 != 0)) continue;
            SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                         (bf16 ? " bf16" : " fp32") + (relu ? " relu" : " bias only") +
                         (one_pass ? " one pass" : " two passes") +
                         (passes == ReluBiasGradPasses::kAuto ? " (auto)" : " (forced)") +
                         (misaligned ? " misaligned" : ""));
            const auto n = static_cast<size_t>(rows * cols);
            std::vector<float> x = random_vector(n, 21), b = random_vector(static_cast<size_t>(cols), 22);
            std::vector<float> dy = random_vector(n, 23);
            auto y_dev = upload(dtype, x), b_dev = upload(dtype, b);
            std::vector<float> db_zero(static_cast<size_t>(cols), 0.0f);
            auto db_dev = upload(dtype, db_zero);
            DeviceBuffer<uint8_t> workspace(std::max<size_t>(1, relu_bias_grad_workspace_bytes(rows, cols)) + 4);
            uint8_t* partials = workspace.data() + (misaligned && !one_pass ? 4 : 0);

            const int64_t syncs = host_sync_count();
            bias_activation(dtype, rows, cols, y_dev.data(), b_dev.data(), relu, stream);
            EXPECT_EQ(host_sync_count(), syncs);
            counted_stream_synchronize(stream);
            const std::vector<float> y = download(dtype, y_dev, n);
            std::vector<float> y_ref(n);
            std::vector<double> scale(n);
            for (size_t i = 0; i < n; ++i) {
              const float sum = x[i] + b[i % static_cast<size_t>(cols)];
              y_ref[i] = relu && sum < 0.0f ? 0.0f : sum;
              scale[i] = std::fabs(y_ref[i]);
            }
            expect_close(y, y_ref, scale, elementwise_tol, cols, "bias_activation");

            // The backward on the GPU's own y: with the mask (a ReLU layer)
            // or the bias gradient alone (no ReLU, or dy already masked). y
            // and dy from `shift` elements into their buffers.
            const size_t shift = misaligned && one_pass ? 1 : 0;
            std::vector<float> y_shifted(shift + y.size(), 0.0f), dy_shifted(shift + dy.size(), 0.0f);
            std::copy(y.begin(), y.end(), y_shifted.begin() + static_cast<std::ptrdiff_t>(shift));
            std::copy(dy.begin(), dy.end(), dy_shifted.begin() + static_cast<std::ptrdiff_t>(shift));
            auto y_back = upload(dtype, y_shifted), dy_dev = upload(dtype, dy_shifted);  // y: already rounded
            dy.assign(dy_shifted.begin() + static_cast<std::ptrdiff_t>(shift), dy_shifted.end());
            const int64_t before = host_sync_count();
            relu_bias_grad(dtype, rows, cols, relu ? y_back.data() + shift * element : nullptr,
                           dy_dev.data() + shift * element, db_dev.data(), partials, done.data(), stream, passes);
            EXPECT_EQ(host_sync_count(), before);
            counted_stream_synchronize(stream);
            std::vector<float> dz = dy;
            if (relu) cpu::relu_backward(static_cast<int64_t>(n), y.data(), dy.data(), dz.data());
            std::vector<double> exact(n, 0.0);
            std::vector<float> dy_after = download(dtype, dy_dev, n + shift);
            dy_after.erase(dy_after.begin(), dy_after.begin() + static_cast<std::ptrdiff_t>(shift));
            expect_close(dy_after, dz, exact, 0.0, cols, relu ? "dReLU in place" : "dy untouched");
            const ColumnSums db_ref = column_sums(dz, cols);
            const std::vector<float> db = download(dtype, db_dev, static_cast<size_t>(cols));
            expect_close(db, db_ref.sum, db_ref.magnitude, sum_tol, cols, "relu_bias_grad db");
            if (misaligned) {
              EXPECT_EQ(db, aligned_db) << "db's bits depend on the pointers' alignment";
            } else {
              aligned_db = db;
            }
          }
          if (passes == ReluBiasGradPasses::kAuto) {
            auto_db = aligned_db;
          } else if (one_pass == relu_bias_grad_one_pass(rows)) {
            EXPECT_EQ(aligned_db, auto_db) << "rows=" << rows << " cols=" << cols
                                           << ": the forced kernel's bits differ from the automatic choice's";
          }
        }
      }
    }
  }
  EXPECT_EQ(done.download(), std::vector<unsigned>(done.size(), 0u)) << "the counters must be left 0";
  // No rows: db = 0, nothing else read or written.
  std::vector<float> ones(5, 1.0f);
  auto db_dev = upload(dtype, ones);
  relu_bias_grad(dtype, 0, 5, nullptr, nullptr, db_dev.data(), nullptr, nullptr, stream);
  counted_stream_synchronize(stream);
  EXPECT_EQ(download(dtype, db_dev, 5), std::vector<float>(5, 0.0f));
  cudaStreamDestroy(stream);
}

TEST_P(BiasActCudaTest, MaskReaderFollowsTheDocumentedBitLayout) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const DType dtype = GetParam();
  const int64_t rows = 37, cols = 130, ld = 256;  // ld crosses a 128-bit boundary
  std::vector<uint8_t> mask(static_cast<size_t>(rows * ld / 8));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<uint8_t>((i * 37 + 11) & 0xff);
  std::vector<float> dy = random_vector(static_cast<size_t>(rows * cols), 5);
  DeviceBuffer<uint8_t> mask_dev(mask);
  auto dy_dev = upload(dtype, dy);
  relu_backward_from_mask(dtype, rows, cols, mask_dev.data(), ld, dy_dev.data(), dy_dev.data(),
                          nullptr);
  const std::vector<float> dx = download(dtype, dy_dev, dy.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t bit = r * ld + c;
      const bool on = (mask[static_cast<size_t>(bit / 8)] >> (bit % 8)) & 1;
      const float expected = on ? dy[static_cast<size_t>(r * cols + c)] : 0.0f;
      ASSERT_EQ(dx[static_cast<size_t>(r * cols + c)], expected) << "at [" << r << ", " << c << "]";
    }
  }
}

std::string dtype_name(const ::testing::TestParamInfo<DType>& param) {
  return param.param == DType::kF32 ? "fp32" : "bf16";
}

INSTANTIATE_TEST_SUITE_P(Types, BiasActCudaTest, ::testing::Values(DType::kF32, DType::kBF16),
                         dtype_name);

// cuBLASLt's RELU_AUX_BIAS bitmask, read back through relu_backward_from_mask
// with dy = 1, must equal (y > 0): this pins the bit order the header assumes.
TEST(ReluMaskCuda, CublasLtBitmaskMatchesOutputSign) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  LinearArguments args;
  args.batch = 37;
  args.in_features = 13;
  args.out_features = 130;
  args.activation = Activation::kRelu;
  cublasLtHandle_t lt = nullptr;
  PERFLAB_CUBLAS_CHECK(cublasLtCreate(&lt));
  {
    Linear op(lt, args);
    ASSERT_TRUE(op.status().ok()) << op.status().reason();
    std::vector<float> x = random_vector(37 * 13, 7), w = random_vector(130 * 13, 8),
                       b = random_vector(130, 9), ones(37 * 130, 1.0f), y(37 * 130);
    DeviceBuffer<float> x_dev(x), w_dev(w), b_dev(b), y_dev(y), ones_dev(ones);
    DeviceBuffer<uint8_t> aux(Linear::aux_bytes(args)), workspace(Linear::workspace_bytes(args));
    args.x = x_dev.data();
    args.w = w_dev.data();
    args.b = b_dev.data();
    args.y = y_dev.data();
    args.aux = aux.data();
    op.forward(args, workspace.data(), nullptr);
    relu_backward_from_mask(DType::kF32, 37, 130, aux.data(), Linear::aux_ld_bits(130),
                            ones_dev.data(), ones_dev.data(), nullptr);
    const std::vector<float> y_gpu = y_dev.download(), bits = ones_dev.download();
    for (size_t i = 0; i < y_gpu.size(); ++i) {
      ASSERT_EQ(bits[i], y_gpu[i] > 0.0f ? 1.0f : 0.0f)
          << "cuBLASLt's ReLU bit at [" << i / 130 << ", " << i % 130
          << "] disagrees with y = " << y_gpu[i]
          << ": the mask's bit layout is not the one bias_act.h assumes";
    }
  }
  cublasLtDestroy(lt);
}

}  // namespace
}  // namespace perflab::kernels::cuda
