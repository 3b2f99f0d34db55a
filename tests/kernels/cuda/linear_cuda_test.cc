// The cuBLASLt linear layer against the CPU reference (kernels/cpu/linear.h,
// relu.h) on odd sizes (and two with whole 16-byte rows), both precisions,
// ReLU and none, unfused and fused with each Epilogues, forward and backward, and the fused chain of two layers (DRELU_BGRAD in the
// upper layer's dgrad), and the same layer with its data gradient from Wᵀ
// and its weight gradient from dzᵀ. Tolerances, relative to |expected| + rms(expected):
// TF32 1e-2, bf16 2e-2 (inputs are rounded to bf16 on the host first, so the
// reference sees the same inputs). The CPU backward masks by the GPU's own y,
// so a ReLU that flips on a near-zero pre-activation cannot fail the test.
// What Linear accepts and declares, with no device: linear_can_implement_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/relu.h"
#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/linear.h"
#include "kernels/cuda/linear_plan.h"
#include "kernels/cuda/raii.h"
#include "tests/support/stored_values.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using test_support::random_vector;

// ---- host helpers ------------------------------------------------------------

/// A device tensor of `dtype`; `host` holds the values as stored (rounded).
struct Tensor {
  DType dtype;
  std::vector<float> host;
  DeviceBuffer<uint8_t> dev;

  Tensor(DType type, std::vector<float> values)
      : dtype(type), host(std::move(values)), dev(test_support::upload_stored(host, type == DType::kBF16)) {}
  Tensor(DType type, size_t n) : Tensor(type, std::vector<float>(n, 0.0f)) {}

  void* data() { return dev.data(); }
  std::vector<float> download() const { return test_support::download_stored(dev, host.size(), dtype == DType::kBF16); }
};

struct LtHandle {
  cublasLtHandle_t handle = nullptr;
  LtHandle() { PERFLAB_CUBLAS_CHECK(cublasLtCreate(&handle)); }
  ~LtHandle() { cublasLtDestroy(handle); }
};

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { PERFLAB_CUDA_CHECK(cudaStreamCreate(&stream)); }
  ~Stream() { cudaStreamDestroy(stream); }
};

const char* name(Precision p) { return p == Precision::kTf32 ? "tf32" : "bf16"; }
double tolerance(Precision p) { return p == Precision::kTf32 ? 1e-2 : 2e-2; }
DType dtype_of(Precision p) { return p == Precision::kTf32 ? DType::kF32 : DType::kBF16; }

std::string describe(const LinearArguments& a) {
  return "batch=" + std::to_string(a.batch) + " in=" + std::to_string(a.in_features) +
         " out=" + std::to_string(a.out_features) + " " + name(a.precision) +
         (a.activation == Activation::kRelu ? " relu" : " none") +
         (a.fused ? std::string(" fused, epilogues ") + epilogues_name(a.epilogues) : std::string(" unfused"));
}

/// |actual - expected| <= tol * (|expected| + rms(expected)) + 1e-6 for every
/// element of a [rows, cols] tensor; reports the first mismatch in full.
void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  int64_t cols, double tol, const std::string& what, const std::string& problem) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double sum_sq = 0;
  for (float e : expected) sum_sq += double{e} * e;
  const double rms =
      expected.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(expected.size()));
  size_t bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double bound = tol * (std::fabs(double{expected[i]}) + rms) + 1e-6;
    if (!(std::fabs(double{actual[i]} - expected[i]) <= bound)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad > 0) {
    const double bound = tol * (std::fabs(double{expected[first]}) + rms) + 1e-6;
    ADD_FAILURE() << what << " mismatch at [" << first / cols << ", " << first % cols
                  << "]: expected " << expected[first] << ", actual " << actual[first]
                  << ", |diff| " << std::fabs(double{actual[first]} - expected[first])
                  << " > bound " << bound << " (tol " << tol << ", rms " << rms << "); " << bad
                  << " of " << actual.size() << " elements off; problem: " << problem;
  }
}

/// w [out, in] row-major as Wᵀ [in, out]: the copy a layer built with
/// dgrad_reads_w_t reads.
std::vector<float> transposed(const std::vector<float>& w, int64_t out, int64_t in) {
  std::vector<float> t(w.size());
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) t[static_cast<size_t>(i * out + o)] = w[static_cast<size_t>(o * in + i)];
  }
  return t;
}

// ---- GPU: one layer against the CPU reference ----------------------------------

struct Shape {
  int64_t batch, in, out;
};
// The last two have whole 16-byte rows (out a multiple of 8): the own
// epilogues' vector paths.
const Shape kShapes[] = {{1, 1, 1},      {3, 13, 3},       {1, 479, 13},    {37, 3, 1},
                         {37, 127, 479}, {2049, 479, 127}, {2049, 13, 479}, {3, 1, 127},
                         {67, 13, 256},  {2049, 127, 8}};

/// How a layer runs: unfused, or fused with each Epilogues.
enum Mode { kUnfused, kLtEpilogues, kOwnBackwardEpilogues, kOwnEpilogues };

void set_mode(LinearArguments& a, int mode) {
  a.fused = mode != kUnfused;
  a.epilogues = mode == kOwnEpilogues           ? Epilogues::kOwn
                : mode == kOwnBackwardEpilogues ? Epilogues::kOwnBackward
                                                : Epilogues::kCublasLt;
}

/// A layer's output and gradients on the device for `a`'s shape and modes,
/// dy starting at `dy_values`; point() sets `a`'s pointers to them.
struct LayerOutputs {
  Tensor y, dy, dx, dw, db;
  DeviceBuffer<uint8_t> aux;
  LayerOutputs(DType t, const LinearArguments& a, const std::vector<float>& dy_values)
      : y(t, static_cast<size_t>(a.batch * a.out_features)),
        dy(t, dy_values),
        dx(t, static_cast<size_t>(a.batch * a.in_features)),
        dw(t, static_cast<size_t>(a.out_features * a.in_features)),
        db(t, static_cast<size_t>(a.out_features)),
        aux(std::max<size_t>(1, Linear::aux_bytes(a))) {}
  void point(LinearArguments& a) {
    a.y = y.data(), a.aux = aux.data(), a.dy = dy.data(), a.dx = dx.data(), a.dw = dw.data(), a.db = db.data();
  }
};

using Param = std::tuple<int, Precision, Activation, int>;

class LinearCudaTest : public ::testing::TestWithParam<Param> {};

TEST_P(LinearCudaTest, ForwardAndBackwardMatchCpuReference) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const auto [shape_index, precision, activation, mode] = GetParam();
  const Shape s = kShapes[shape_index];
  const DType dtype = dtype_of(precision);
  LinearArguments args;
  args.batch = s.batch;
  args.in_features = s.in;
  args.out_features = s.out;
  args.precision = precision;
  args.activation = activation;
  set_mode(args, mode);
  const std::string problem = describe(args);
  ASSERT_TRUE(Linear::can_implement(args).ok()) << Linear::can_implement(args).reason();
  LtHandle lt;
  Stream stream;
  Linear op(lt.handle, args);
  ASSERT_TRUE(op.status().ok()) << op.status().reason() << "; problem: " << problem;

  const auto bn = static_cast<size_t>(s.batch);
  Tensor x(dtype, random_vector(bn * s.in, 11));
  Tensor w(dtype, random_vector(static_cast<size_t>(s.out * s.in), 12));
  Tensor b(dtype, random_vector(static_cast<size_t>(s.out), 13));
  const std::vector<float> dy_values = random_vector(bn * s.out, 14);
  LayerOutputs o(dtype, args, dy_values);
  DeviceBuffer<uint8_t> workspace(Linear::workspace_bytes(args));
  args.x = x.data();
  args.w = w.data();
  args.b = b.data();
  o.point(args);

  const int64_t syncs = host_sync_count();
  op.forward(args, workspace.data(), stream.stream);
  op.backward(args, workspace.data(), stream.stream);
  EXPECT_EQ(host_sync_count(), syncs) << "forward/backward synchronised with the host";
  counted_stream_synchronize(stream.stream);

  const cpu::LinearShape cs{s.batch, s.in, s.out};
  const bool relu = activation == Activation::kRelu;
  std::vector<float> y_ref(bn * s.out);
  cpu::linear_forward(cs, x.host.data(), w.host.data(), b.host.data(), y_ref.data());
  if (relu) cpu::relu_forward(static_cast<int64_t>(y_ref.size()), y_ref.data(), y_ref.data());
  const std::vector<float> y_gpu = o.y.download();
  const double tol = tolerance(precision);
  expect_close(y_gpu, y_ref, s.out, tol, "y", problem);

  std::vector<float> dz = o.dy.host;
  if (relu) cpu::relu_backward(static_cast<int64_t>(dz.size()), y_gpu.data(), dz.data(), dz.data());
  std::vector<float> dx_ref(bn * s.in), dw_ref(static_cast<size_t>(s.out * s.in)),
      db_ref(static_cast<size_t>(s.out));
  cpu::linear_backward(cs, x.host.data(), w.host.data(), dz.data(), dx_ref.data(), dw_ref.data(),
                       db_ref.data());
  const std::vector<float> dz_gpu = o.dy.download(), dx_gpu = o.dx.download(), dw_gpu = o.dw.download(),
                           db_gpu = o.db.download();
  expect_close(dz_gpu, dz, s.out, tol, "dy (overwritten with dz)", problem);
  expect_close(dx_gpu, dx_ref, s.in, tol, "dx", problem);
  expect_close(dw_gpu, dw_ref, s.in, tol, "dW", problem);
  expect_close(db_gpu, db_ref, s.out, tol, "db", problem);

  // The same layer with its data-gradient GEMM reading Wᵀ's copy
  // (dgrad_reads_w_t, "TN"): dx within the same tolerance (another GEMM
  // algorithm, another order of sums), y, dW and db the same bits (the same
  // GEMMs and passes as above). W itself is all NaN for the backward (no
  // backward GEMM or pass may read it), so dx comes from the copy or fails.
  LinearArguments t = args;
  t.dgrad_reads_w_t = true;
  Linear op_t(lt.handle, t);
  ASSERT_TRUE(op_t.status().ok()) << op_t.status().reason() << "; problem: " << problem << ", dgrad from Wᵀ";
  Tensor w_t(dtype, transposed(w.host, s.out, s.in));
  LayerOutputs ot(dtype, t, dy_values);
  t.w_t = w_t.data();
  ot.point(t);
  op_t.forward(t, workspace.data(), stream.stream);
  PERFLAB_CUDA_CHECK(cudaMemsetAsync(w.data(), 0xff, w.dev.bytes(), stream.stream));  // NaN, fp32 and bf16
  op_t.backward(t, workspace.data(), stream.stream);
  counted_stream_synchronize(stream.stream);
  EXPECT_EQ(ot.y.download(), y_gpu) << "y; " << problem << ", dgrad from Wᵀ";
  expect_close(ot.dx.download(), dx_ref, s.in, tol, "dx (dgrad from Wᵀ)", problem);
  EXPECT_EQ(ot.dw.download(), dw_gpu) << "dW; " << problem << ", dgrad from Wᵀ";
  EXPECT_EQ(ot.db.download(), db_gpu) << "db; " << problem << ", dgrad from Wᵀ";

  // The weight gradient from dz transposed (wgrad_reads_dy_t, the copy
  // written by backward() itself): dW within the tolerance (another GEMM),
  // db too (our passes'; cuBLASLt's BGRADB is refused with this mode); dx
  // the same bits (the same data-gradient GEMM on the same dz); dy_t holds
  // dzᵀ exactly.
  LinearArguments u = args;
  u.wgrad_reads_dy_t = true;
  if (mode == kLtEpilogues) {  // db from cuBLASLt's BGRADB on that GEMM: refused, with the reason
    EXPECT_NE(Linear::can_implement(u).reason().find("without cuBLASLt's BGRADB epilogue"), std::string::npos)
        << Linear::can_implement(u).reason();
    return;
  }
  Linear op_u(lt.handle, u);
  ASSERT_TRUE(op_u.status().ok()) << op_u.status().reason() << "; problem: " << problem << ", wgrad from dzᵀ";
  Tensor w_u(dtype, w.host);  // W again (the block above left it NaN)
  Tensor dy_t(dtype, std::vector<float>(bn * s.out, -3.0f));
  LayerOutputs ou(dtype, u, dy_values);
  u.w = w_u.data();
  u.dy_t = dy_t.data();
  ou.point(u);
  op_u.forward(u, workspace.data(), stream.stream);
  op_u.backward(u, workspace.data(), stream.stream);
  counted_stream_synchronize(stream.stream);
  EXPECT_EQ(ou.y.download(), y_gpu) << "y; " << problem << ", wgrad from dzᵀ";
  EXPECT_EQ(ou.dy.download(), dz_gpu) << "dz; " << problem << ", wgrad from dzᵀ";
  EXPECT_EQ(ou.dx.download(), dx_gpu) << "dx; " << problem << ", wgrad from dzᵀ";
  EXPECT_EQ(dy_t.download(), transposed(dz_gpu, s.batch, s.out)) << "dy_t is dzᵀ; " << problem;
  expect_close(ou.dw.download(), dw_ref, s.in, tol, "dW (wgrad from dzᵀ)", problem);
  expect_close(ou.db.download(), db_ref, s.out, tol, "db (wgrad from dzᵀ)", problem);
}

// A ReLU layer built with dy_relu_applied (each mode), given dy already masked by y > 0
// (what the interaction's backward hands DLRM's bottom MLP), launches no
// dReLU and gives the same dW, db and dx, bit for bit, as the layer that
// masks a raw dy itself: the same GEMMs on the same values.
TEST(LinearCuda, DyReluAppliedSkipsTheDReluAndKeepsTheResults) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  for (Precision precision : {Precision::kTf32, Precision::kBf16}) {
    for (int mode : {kLtEpilogues, kUnfused, kOwnBackwardEpilogues, kOwnEpilogues}) {
      const Shape s = kShapes[4];  // 37 x 127 -> 479
      const DType dtype = dtype_of(precision);
      LinearArguments args;
      args.batch = s.batch;
      args.in_features = s.in;
      args.out_features = s.out;
      args.precision = precision;
      args.activation = Activation::kRelu;
      set_mode(args, mode);
      LinearArguments applied = args;
      applied.dy_relu_applied = true;
      const std::string problem = describe(args);
      // Our own epilogues' pass sums db either way (the mask off): the same launches.
      const size_t fewer = mode == kOwnBackwardEpilogues || mode == kOwnEpilogues ? 0 : 1;
      EXPECT_EQ(Linear::backward_launches(applied, true).size() + fewer, Linear::backward_launches(args, true).size())
          << "the dReLU launch (or pass) skipped; " << problem;
      LtHandle lt;
      Stream stream;
      Linear raw_op(lt.handle, args), applied_op(lt.handle, applied);
      ASSERT_TRUE(raw_op.status().ok() && applied_op.status().ok()) << problem;
      const auto bn = static_cast<size_t>(s.batch);
      Tensor x(dtype, random_vector(bn * s.in, 31)), w(dtype, random_vector(static_cast<size_t>(s.out * s.in), 32));
      Tensor b(dtype, random_vector(static_cast<size_t>(s.out), 33)), y(dtype, bn * s.out);
      DeviceBuffer<uint8_t> aux(std::max<size_t>(1, Linear::aux_bytes(args)));
      DeviceBuffer<uint8_t> workspace(Linear::workspace_bytes(args));
      args.x = x.data();
      args.w = w.data();
      args.b = b.data();
      args.y = y.data();
      args.aux = aux.data();
      raw_op.forward(args, workspace.data(), stream.stream);
      counted_stream_synchronize(stream.stream);
      const std::vector<float> y_host = y.download();
      const std::vector<float> dy_values = random_vector(bn * s.out, 34);
      std::vector<float> masked = dy_values;
      for (size_t i = 0; i < masked.size(); ++i) {
        if (!(y_host[i] > 0.0f)) masked[i] = 0.0f;
      }
      Tensor dy_raw(dtype, dy_values), dy_masked(dtype, masked);
      Tensor dx_a(dtype, bn * s.in), dw_a(dtype, static_cast<size_t>(s.out * s.in)), db_a(dtype, static_cast<size_t>(s.out));
      Tensor dx_b(dtype, bn * s.in), dw_b(dtype, static_cast<size_t>(s.out * s.in)), db_b(dtype, static_cast<size_t>(s.out));
      LinearArguments a = args;
      a.dy = dy_raw.data();
      a.dx = dx_a.data();
      a.dw = dw_a.data();
      a.db = db_a.data();
      raw_op.backward(a, workspace.data(), stream.stream);
      LinearArguments c = applied;
      c.x = args.x;
      c.w = args.w;
      c.b = args.b;
      c.y = nullptr;  // not read: no dReLU here
      c.aux = args.aux;
      c.dy = dy_masked.data();
      c.dx = dx_b.data();
      c.dw = dw_b.data();
      c.db = db_b.data();
      applied_op.backward(c, workspace.data(), stream.stream);
      counted_stream_synchronize(stream.stream);
      EXPECT_EQ(dy_raw.download(), dy_masked.download()) << "the raw layer's in-place dReLU; " << problem;
      EXPECT_EQ(dx_a.download(), dx_b.download()) << "dx; " << problem;
      EXPECT_EQ(dw_a.download(), dw_b.download()) << "dW; " << problem;
      EXPECT_EQ(db_a.download(), db_b.download()) << "db; " << problem;
      // Again with a side stream: the weight gradient there and, with our
      // own epilogues, db's pass (nothing to mask) before it; the same bits.
      // dy arrives on the step's stream only after a host function's 50 ms
      // sleep: side-stream work that did not wait for the fork reads zeros.
      Stream side;
      Event fork;
      DeviceBuffer<uint8_t> side_workspace(kLinearCublasWorkspaceBytes);
      const SideStream wgrad{side.stream, side_workspace.data(), fork.get()};
      Tensor dx_c(dtype, bn * s.in), dw_c(dtype, static_cast<size_t>(s.out * s.in)), db_c(dtype, static_cast<size_t>(s.out));
      Tensor dy_late(dtype, bn * s.out);
      PERFLAB_CUDA_CHECK(cudaLaunchHostFunc(
          stream.stream, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, nullptr));
      PERFLAB_CUDA_CHECK(cudaMemcpyAsync(dy_late.data(), dy_masked.data(), dy_masked.dev.size(),
                                         cudaMemcpyDeviceToDevice, stream.stream));
      c.dy = dy_late.data();
      c.dx = dx_c.data();
      c.dw = dw_c.data();
      c.db = db_c.data();
      applied_op.backward(c, workspace.data(), stream.stream, &wgrad);
      counted_stream_synchronize(side.stream);
      counted_stream_synchronize(stream.stream);
      EXPECT_EQ(dx_b.download(), dx_c.download()) << "dx with a side stream; " << problem;
      EXPECT_EQ(dw_b.download(), dw_c.download()) << "dW with a side stream; " << problem;
      EXPECT_EQ(db_b.download(), db_c.download()) << "db with a side stream; " << problem;
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& param) {
  const auto [shape_index, precision, activation, mode] = param.param;
  const Shape s = kShapes[shape_index];
  const char* modes[] = {"_unfused", "_fused", "_fused_own_backward", "_fused_own"};
  return "b" + std::to_string(s.batch) + "_in" + std::to_string(s.in) + "_out" +
         std::to_string(s.out) + "_" + name(precision) +
         (activation == Activation::kRelu ? "_relu" : "_none") + modes[mode];
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, LinearCudaTest,
    ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kShapes))),
                       ::testing::Values(Precision::kTf32, Precision::kBf16),
                       ::testing::Values(Activation::kNone, Activation::kRelu),
                       ::testing::Values(kUnfused, kLtEpilogues, kOwnBackwardEpilogues, kOwnEpilogues)),
    param_name);

// ---- GPU: the fused chain of two layers -------------------------------------------

// L0: in -> hidden (ReLU, dy_is_pre_activation), L1: hidden -> out
// (dx_applies_input_relu): L1's dgrad applies L0's dReLU from aux0 and writes
// db0; L0's wgrad then runs without an epilogue.
using ChainParam = std::tuple<Precision, Activation, bool>;  // bool: both dgrads from Wᵀ's copies
class LinearChainCudaTest : public ::testing::TestWithParam<ChainParam> {};

TEST_P(LinearChainCudaTest, FusedBackwardChainMatchesCpuReference) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const auto [precision, top_activation, from_w_t] = GetParam();
  const DType dtype = dtype_of(precision);
  const int64_t batch = 37, in = 13, hidden = 129, out = 3;
  LinearArguments a0, a1;
  a0.batch = a1.batch = batch;
  a0.precision = a1.precision = precision;
  a0.in_features = in;
  a0.out_features = a1.in_features = hidden;
  a1.out_features = out;
  a0.activation = Activation::kRelu;
  a0.dy_is_pre_activation = true;
  a1.activation = top_activation;
  a1.dx_applies_input_relu = true;
  a0.dgrad_reads_w_t = a1.dgrad_reads_w_t = from_w_t;
  const std::string problem =
      "chain " + describe(a0) + " -> " + describe(a1) + (from_w_t ? ", dgrads from Wᵀ" : "");
  LtHandle lt;
  Stream stream;
  Linear l0(lt.handle, a0), l1(lt.handle, a1);
  ASSERT_TRUE(l0.status().ok()) << l0.status().reason();
  ASSERT_TRUE(l1.status().ok()) << l1.status().reason();

  Tensor x0(dtype, random_vector(batch * in, 21));
  Tensor w0(dtype, random_vector(hidden * in, 22)), b0(dtype, random_vector(hidden, 23));
  Tensor w1(dtype, random_vector(out * hidden, 24)), b1(dtype, random_vector(out, 25));
  Tensor y0(dtype, batch * hidden), y1(dtype, batch * out);
  Tensor dy1(dtype, random_vector(batch * out, 26)), dy0(dtype, batch * hidden);
  Tensor dx0(dtype, batch * in), dw0(dtype, hidden * in), db0(dtype, hidden);
  Tensor dw1(dtype, out * hidden), db1(dtype, out);
  DeviceBuffer<uint8_t> aux0(Linear::aux_bytes(a0)),
      aux1(std::max<size_t>(1, Linear::aux_bytes(a1)));
  DeviceBuffer<uint8_t> workspace(
      std::max(Linear::workspace_bytes(a0), Linear::workspace_bytes(a1)));

  a0.x = x0.data(), a0.w = w0.data(), a0.b = b0.data(), a0.y = y0.data(), a0.aux = aux0.data();
  a0.dy = dy0.data(), a0.dx = dx0.data(), a0.dw = dw0.data(), a0.db = db0.data();
  a1.x = y0.data(), a1.w = w1.data(), a1.b = b1.data(), a1.y = y1.data(), a1.aux = aux1.data();
  a1.dy = dy1.data(), a1.dx = dy0.data(), a1.dw = dw1.data(), a1.db = db1.data();
  a1.input_aux = aux0.data(), a1.input_db = db0.data();
  Tensor w0t(dtype, transposed(w0.host, hidden, in)), w1t(dtype, transposed(w1.host, out, hidden));
  if (from_w_t) a0.w_t = w0t.data(), a1.w_t = w1t.data();

  const int64_t syncs = host_sync_count();
  l0.forward(a0, workspace.data(), stream.stream);
  l1.forward(a1, workspace.data(), stream.stream);
  if (from_w_t) {  // the backward reads the copies only: W itself NaN from here (the host keeps its values)
    PERFLAB_CUDA_CHECK(cudaMemsetAsync(w0.data(), 0xff, w0.dev.bytes(), stream.stream));
    PERFLAB_CUDA_CHECK(cudaMemsetAsync(w1.data(), 0xff, w1.dev.bytes(), stream.stream));
  }
  l1.backward(a1, workspace.data(), stream.stream);
  l0.backward(a0, workspace.data(), stream.stream);
  EXPECT_EQ(host_sync_count(), syncs);
  counted_stream_synchronize(stream.stream);

  const double tol = tolerance(precision);
  const std::vector<float> y0_gpu = y0.download(), y1_gpu = y1.download();
  std::vector<float> y0_ref(batch * hidden), y1_ref(batch * out);
  cpu::linear_forward({batch, in, hidden}, x0.host.data(), w0.host.data(), b0.host.data(),
                      y0_ref.data());
  cpu::relu_forward(batch * hidden, y0_ref.data(), y0_ref.data());
  expect_close(y0_gpu, y0_ref, hidden, tol, "y0", problem);
  // Layer 1 from the GPU's y0, so both sides see the same input.
  cpu::linear_forward({batch, hidden, out}, y0_gpu.data(), w1.host.data(), b1.host.data(),
                      y1_ref.data());
  if (top_activation == Activation::kRelu)
    cpu::relu_forward(batch * out, y1_ref.data(), y1_ref.data());
  expect_close(y1_gpu, y1_ref, out, tol, "y1", problem);

  std::vector<float> dz1 = dy1.host;
  if (top_activation == Activation::kRelu)
    cpu::relu_backward(batch * out, y1_gpu.data(), dz1.data(), dz1.data());
  std::vector<float> dh(batch * hidden), dw1_ref(out * hidden), db1_ref(out);
  cpu::linear_backward({batch, hidden, out}, y0_gpu.data(), w1.host.data(), dz1.data(), dh.data(),
                       dw1_ref.data(), db1_ref.data());
  std::vector<float> dz0(batch * hidden), dx0_ref(batch * in), dw0_ref(hidden * in),
      db0_ref(hidden);
  cpu::relu_backward(batch * hidden, y0_gpu.data(), dh.data(), dz0.data());
  // Layer 0's mask (aux) and its stored y0 are both the GPU's, and on the
  // H100 in bf16 they disagree where the pre-activation is within rounding
  // of zero (seen: y0 = 0 with the aux bit set, z = -1e-4 .. 2e-3). There
  // the derivative is undefined at the working precision: take the GPU's
  // choice. Anywhere else a disagreement is a wrong mask, reported in full.
  const std::vector<float> dz0_gpu = dy0.download();
  const std::vector<uint8_t> aux0_bytes = aux0.download();
  const int64_t aux_ld = Linear::aux_ld_bits(hidden);
  const double near_zero = precision == Precision::kBf16 ? 1.0 / 128 : 1.0 / 512;
  int64_t ambiguous = 0;
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t o = 0; o < hidden; ++o) {
      const auto k = static_cast<size_t>(i * hidden + o);
      const bool gpu_passed = dz0_gpu[k] != 0.0f;
      if (gpu_passed == (dz0[k] != 0.0f)) continue;
      double z = b0.host[static_cast<size_t>(o)], scale = std::fabs(z);
      for (int64_t j = 0; j < in; ++j) {
        const double term = double{x0.host[static_cast<size_t>(i * in + j)]} *
                            w0.host[static_cast<size_t>(o * in + j)];
        z += term;
        scale += std::fabs(term);
      }
      if (std::fabs(z) <= near_zero * scale) {
        dz0[k] = gpu_passed ? dh[k] : 0.0f;
        ++ambiguous;
        continue;
      }
      const int64_t bit = i * aux_ld + o;
      ADD_FAILURE() << "ReLU mask disagreement at [" << i << ", " << o << "]: z (double) " << z
                    << " of magnitude " << scale << ", y0 on the GPU " << y0_gpu[k]
                    << ", aux bit " << ((aux0_bytes[static_cast<size_t>(bit / 8)] >> (bit % 8)) & 1)
                    << ", dh " << dh[k] << ", GPU dz0 " << dz0_gpu[k] << "; " << problem;
    }
  }
  EXPECT_LE(ambiguous, batch * hidden / 100) << "near-zero mask choices taken from the GPU";
  cpu::linear_backward({batch, in, hidden}, x0.host.data(), w0.host.data(), dz0.data(),
                       dx0_ref.data(), dw0_ref.data(), db0_ref.data());
  expect_close(dw1.download(), dw1_ref, hidden, tol, "dW1", problem);
  expect_close(db1.download(), db1_ref, out, tol, "db1", problem);
  expect_close(dz0_gpu, dz0, hidden, tol, "dz0 (L1's dgrad with DRELU)", problem);
  expect_close(db0.download(), db0_ref, hidden, tol, "db0 (DRELU_BGRAD)", problem);
  expect_close(dw0.download(), dw0_ref, in, tol, "dW0", problem);
  expect_close(dx0.download(), dx0_ref, in, tol, "dx0", problem);
}

std::string chain_name(const ::testing::TestParamInfo<ChainParam>& param) {
  return std::string(name(std::get<0>(param.param))) +
         (std::get<1>(param.param) == Activation::kRelu ? "_relu" : "_none") +
         (std::get<2>(param.param) ? "_dgrad_from_w_t" : "");
}

INSTANTIATE_TEST_SUITE_P(Fused, LinearChainCudaTest,
                         ::testing::Combine(::testing::Values(Precision::kTf32, Precision::kBf16),
                                            ::testing::Values(Activation::kNone,
                                                              Activation::kRelu),
                                            ::testing::Bool()),
                         chain_name);

}  // namespace
}  // namespace perflab::kernels::cuda
