// The cuDNN 3D convolution (kernels/cuda/conv3d.h) against the CPU kernel
// (kernels/cpu/conv3d.h, itself proven against loops and the halo
// decompositions in tests/kernels/conv3d*_test.cc): every pass, the offsets
// the halo workload uses (direct and staged), others, empty views, accumulate
// on and off, on views embedded in larger buffers; a CUDA-graph replay; and
// can_implement / direct, which need no device.
//
// Tolerance per element: c * m + 1e-5, where m is the same call on the
// absolute values of every buffer (a bound on the magnitude of the terms
// summed), c = 2e-4 for fp32 FMA math (cuDNN's algorithms, FFT included,
// reorder the sums) and 4e-3 for TF32 (each operand rounded to 10 mantissa
// bits, about 2^-11 relative each). bf16 storage: every buffer is rounded to
// bf16 on the host first and the CPU computes on those values, so the
// products are exact and the error is the result's rounding to bf16, at
// most 2^-8 of its magnitude (<= m; bf16's 8-bit significand), twice on the
// staged data gradient (the block, then the sum into dx): c = 2^-7 + fp32's
// 2e-4 < 8e-3. Elements
// outside the output view and all inputs must be bit-identical to what they
// were.
#include "kernels/cuda/conv3d.h"
#include "kernels/cuda/conv3d_planes.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/conv3d.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "kernels/half_precision.h"
#include "tests/kernels/conv3d_support.h"
#include "tests/support/cuda_device.h"
#include "base/random.h"

namespace perflab::kernels::cuda {
namespace {

using cpu::Embedded;

/// One call of the sweep.
struct Case {
  Conv3dPass pass;
  Conv3dMath math;
  int k;
  int64_t x_planes, y_planes, d_offset;
  bool accumulate;
  /// 4x8 planes in whole-plane strides (the staged path's 16-byte plane
  /// copies, conv3d_detail::plane_pack) instead of 7x9 with odd gaps.
  bool aligned = false;
  std::string describe() const {
    return std::string(conv3d_pass_name(pass)) + " " + conv3d_math_name(math) + " N=2 C_in=3 C_out=5 " +
           (aligned ? "H=4 W=8 (aligned)" : "H=7 W=9") + " k=" + std::to_string(k) + " X=" + std::to_string(x_planes) +
           " Y=" + std::to_string(y_planes) + " d_offset=" + std::to_string(d_offset) +
           " accumulate=" + std::to_string(accumulate);
  }
};

cpu::Conv3dGeometry geometry(int k) { return {2, 3, 5, 7, 9, k}; }
cpu::Conv3dGeometry geometry(const Case& c) { return c.aligned ? cpu::Conv3dGeometry{2, 3, 5, 4, 8, c.k} : geometry(c.k); }

/// Arguments of `c` over x-side and y-side buffers laid out as `x` and `y`,
/// and weights `w` (device or host pointers: can_implement reads none), of
/// the storage type T (float, or uint16_t bf16 bits).
template <typename T>
Conv3dArguments arguments(const Case& c, const Embedded& x, T* x_base, const Embedded& y, T* y_base, T* w) {
  Conv3dArguments a;
  a.pass = c.pass;
  a.math = c.math;
  a.geometry = geometry(c);
  a.d_offset = c.d_offset;
  a.accumulate = c.accumulate;
  const cpu::BasicPlaneView<T> xv = x.view_of(x_base), yv = y.view_of(y_base);
  switch (c.pass) {
    case Conv3dPass::kForward:
      a.x = cpu::as_const(xv);
      a.y = yv;
      a.w = w;
      break;
    case Conv3dPass::kBackwardData:
      a.dx = xv;
      a.dy = cpu::as_const(yv);
      a.w = w;
      break;
    case Conv3dPass::kBackwardFilter:
      a.x = cpu::as_const(xv);
      a.dy = cpu::as_const(yv);
      a.dw = w;
      break;
  }
  return a;
}

/// The CPU kernel's version of `c` on host buffers laid out as x and y.
void run_cpu(const Case& c, const Embedded& x, std::vector<float>& xb, const Embedded& y, std::vector<float>& yb,
             std::vector<float>& w) {
  const cpu::Conv3dGeometry g = geometry(c);
  std::vector<float> workspace(cpu::conv3d_workspace_floats(g));
  const cpu::PlaneView xv = x.view_of(xb.data()), yv = y.view_of(yb.data());
  switch (c.pass) {
    case Conv3dPass::kForward:
      cpu::conv3d_forward(g, cpu::as_const(xv), w.data(), yv, c.d_offset, c.accumulate, workspace.data());
      break;
    case Conv3dPass::kBackwardData:
      cpu::conv3d_backward_data(g, cpu::as_const(yv), w.data(), xv, c.d_offset, c.accumulate, workspace.data());
      break;
    case Conv3dPass::kBackwardFilter:
      cpu::conv3d_backward_filter(g, cpu::as_const(xv), cpu::as_const(yv), w.data(), c.d_offset, c.accumulate,
                                  workspace.data());
      break;
  }
}

std::vector<float> absolute(std::vector<float> v) {
  for (float& e : v) e = std::fabs(e);
  return v;
}

/// Expects `actual` within c*m + 1e-5 of `expected` element by element;
/// reports the first mismatch in full.
void expect_within(const std::vector<float>& actual, const std::vector<float>& expected,
                   const std::vector<float>& magnitude, double c, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(std::fabs(static_cast<double>(actual[i]) - expected[i]) <= c * magnitude[i] + 1e-5)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad > 0) {
    ADD_FAILURE() << what << ": " << bad << " of " << actual.size() << " buffer elements differ; first at "
                  << first << ": expected " << expected[first] << ", actual " << actual[first] << ", tolerance "
                  << c * magnitude[first] + 1e-5;
  }
}

/// Every buffer after a device run, as floats.
struct DeviceResult {
  std::vector<float> x, y, w;
};

/// Runs `c` on copies of x, y and w stored as T, eagerly or captured in a
/// CUDA graph and replayed.
template <typename T>
void run_on_device(const CudnnHandle& handle, const Case& c, const Embedded& x, const Embedded& y,
                   const std::vector<float>& w, bool graph, bool via_forward, const std::string& what,
                   DeviceResult* out) {
  DeviceBuffer<T> x_dev(stored_as<T>(x.buffer())), y_dev(stored_as<T>(y.buffer())), w_dev(stored_as<T>(w));
  const Conv3dArguments a = arguments(c, x, x_dev.data(), y, y_dev.data(), w_dev.data());
  const Status implementable = Conv3d::can_implement(a);
  ASSERT_TRUE(implementable.ok()) << implementable.reason() << "; " << what;
  Conv3dPlanOptions options;
  options.backward_data_via_forward = via_forward;
  Conv3d op(handle, a, options);
  ASSERT_TRUE(op.status().ok()) << op.status().reason() << "; " << what;
  // Forced, every data gradient with planes on both sides runs as a forward
  // convolution; otherwise one may too, when cuDNN has no algorithm for it.
  const bool nontrivial_data = c.pass == Conv3dPass::kBackwardData && c.x_planes > 0 && c.y_planes > 0;
  if (via_forward) {
    EXPECT_EQ(op.backward_data_via_forward(), nontrivial_data) << what;
  } else {
    EXPECT_TRUE(!op.backward_data_via_forward() || nontrivial_data) << what;
  }
  DeviceBuffer<float> workspace((op.workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  Stream stream;
  if (graph) {
    // As the harness does: eager runs first (cuDNN and CUDA load kernels
    // lazily), then the inputs restored, then one capture and its replay.
    op.run(a, workspace.data(), stream.get());
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    x_dev.upload(stored_as<T>(x.buffer()));
    y_dev.upload(stored_as<T>(y.buffer()));
    w_dev.upload(stored_as<T>(w));
    GraphExec exec;
    kernels::cuda::begin_capture(stream.get());
    op.run(a, workspace.data(), stream.get());
    exec.end_capture(stream.get());
    exec.launch(stream.get());
  } else {
    op.run(a, workspace.data(), stream.get());
  }
  PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  *out = {widened_from(x_dev.download()), widened_from(y_dev.download()), widened_from(w_dev.download())};
}

std::vector<float> rounded_to_bf16(std::vector<float> v) {
  cpu::round_to_bf16(static_cast<int64_t>(v.size()), v.data(), v.data());
  return v;
}

/// Runs `c` on the device (eagerly, or captured in a CUDA graph and
/// replayed; a data gradient as cuDNN's own pass or as a forward
/// convolution) and checks it against the CPU kernel.
void check_case(const CudnnHandle& handle, const Case& c, uint32_t seed, bool graph = false,
                bool via_forward = false) {
  const std::string what =
      c.describe() + (graph ? " (graph replay)" : "") + (via_forward ? " (as a forward convolution)" : "");
  const cpu::Conv3dGeometry g = geometry(c);
  const int64_t hw = g.height * g.width;
  Embedded x(g.batch, g.c_in, c.x_planes, hw, seed, c.aligned), y(g.batch, g.c_out, c.y_planes, hw, seed + 1, c.aligned);
  std::vector<float> w = test_support::random_vector(static_cast<size_t>(g.c_out * g.c_in * c.k * c.k * c.k),
                                                     seed + 2);
  const bool bf16 = c.math == Conv3dMath::kBf16;
  if (bf16) {  // the values bf16 storage holds, on both sides
    x.buffer() = rounded_to_bf16(x.buffer());
    y.buffer() = rounded_to_bf16(y.buffer());
    w = rounded_to_bf16(w);
  }
  DeviceResult device;
  if (bf16) {
    run_on_device<uint16_t>(handle, c, x, y, w, graph, via_forward, what, &device);
  } else {
    run_on_device<float>(handle, c, x, y, w, graph, via_forward, what, &device);
  }
  if (testing::Test::HasFatalFailure()) return;

  std::vector<float> x_cpu = x.buffer(), y_cpu = y.buffer(), w_cpu = w;
  run_cpu(c, x, x_cpu, y, y_cpu, w_cpu);
  std::vector<float> x_abs = absolute(x.buffer()), y_abs = absolute(y.buffer()), w_abs = absolute(w);
  run_cpu(c, x, x_abs, y, y_abs, w_abs);
  const double tolerance = c.math == Conv3dMath::kFp32 ? 2e-4 : bf16 ? 8e-3 : 4e-3;
  const std::vector<float>& x_gpu = device.x;
  const std::vector<float>& y_gpu = device.y;
  const std::vector<float>& w_gpu = device.w;
  switch (c.pass) {
    case Conv3dPass::kForward:
      expect_within(y_gpu, y_cpu, y_abs, tolerance, "y: " + what);
      EXPECT_EQ(y.changed_outside(y_gpu, y.buffer()), 0) << "wrote outside y's view; " << what;
      EXPECT_EQ(x_gpu, x.buffer()) << what;
      EXPECT_EQ(w_gpu, w) << what;
      break;
    case Conv3dPass::kBackwardData:
      expect_within(x_gpu, x_cpu, x_abs, tolerance, "dx: " + what);
      EXPECT_EQ(x.changed_outside(x_gpu, x.buffer()), 0) << "wrote outside dx's view; " << what;
      EXPECT_EQ(y_gpu, y.buffer()) << what;
      EXPECT_EQ(w_gpu, w) << what;
      break;
    case Conv3dPass::kBackwardFilter:
      expect_within(w_gpu, w_cpu, w_abs, tolerance, "dw: " + what);
      EXPECT_EQ(x_gpu, x.buffer()) << what;
      EXPECT_EQ(y_gpu, y.buffer()) << what;
      break;
  }
}

/// (X, Y, d_offset) for kernel radius r: the halo workload's calls (whole
/// slab, halo-padded slab, its data gradient, the corrections, a slab
/// thinner than r), other offsets, one past every plane, and empty views.
std::vector<std::array<int64_t, 3>> plane_cases(int64_t r) {
  return {{5, 5, 0},          {3 + 2 * r, 3, r}, {3, 3 + 2 * r, -r}, {r, r, r}, {r, r, -r}, {r, 1, -1},
          {r + 1, 1, r},      {5, 3, 1},         {2, 6, -2},         {3, 2, 7}, {0, 4, 0},  {4, 0, 1}};
}

TEST(Conv3dCudaTest, EveryPassMatchesTheCpuKernel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudnnHandle handle;
  uint32_t seed = 500;
  for (Conv3dPass pass : {Conv3dPass::kForward, Conv3dPass::kBackwardData, Conv3dPass::kBackwardFilter}) {
    for (Conv3dMath math : {Conv3dMath::kFp32, Conv3dMath::kTf32, Conv3dMath::kBf16}) {
      for (int k : {1, 3, 5}) {
        for (const auto& [x_planes, y_planes, d_offset] : plane_cases(k / 2)) {
          for (bool accumulate : {false, true}) {
            check_case(handle, {pass, math, k, x_planes, y_planes, d_offset, accumulate}, seed += 3);
          }
        }
      }
    }
  }
}

// 4x8 planes in whole-plane strides: every plane row starts on 16 bytes, so
// the staged calls (those Conv3d::direct turns down, half of plane_cases)
// gather and add 16 bytes a thread (conv3d_detail::plane_pack); the sweep
// above, at 7x9 with odd gaps, runs the one-element copies.
TEST(Conv3dCudaTest, AlignedPlanesEveryPassMatchesTheCpuKernel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudnnHandle handle;
  uint32_t seed = 700;
  int staged = 0;
  for (Conv3dPass pass : {Conv3dPass::kForward, Conv3dPass::kBackwardData, Conv3dPass::kBackwardFilter}) {
    for (Conv3dMath math : {Conv3dMath::kTf32, Conv3dMath::kBf16}) {
      for (const auto& [x_planes, y_planes, d_offset] : plane_cases(1)) {
        for (bool accumulate : {false, true}) {
          Case c{pass, math, 3, x_planes, y_planes, d_offset, accumulate};
          c.aligned = true;
          check_case(handle, c, seed += 3);
          // Host buffers laid out alike: direct() reads the shape only.
          Embedded x(2, 3, x_planes, 32, 0, true), y(2, 5, y_planes, 32, 0, true);
          std::vector<float> w(5 * 3 * 27);
          staged += x_planes > 0 && y_planes > 0 &&
                    !Conv3d::direct(arguments(c, x, x.buffer().data(), y, y.buffer().data(), w.data()));
        }
      }
    }
  }
  EXPECT_GT(staged, 0) << "no case reached the staged path's plane copies";
}

// The data gradient as a forward convolution of dy with the weights flipped
// and transposed (Conv3dPlanOptions; the fallback when cuDNN has no
// backward-data algorithm, as on the first H200 run): every offset, every
// math, accumulating or not, against the CPU kernel at the same tolerances
// (the flipped weights are copies: the arithmetic is a forward pass's).
TEST(Conv3dCudaTest, TheDataGradientAsAForwardConvolutionMatchesTheCpuKernel) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudnnHandle handle;
  uint32_t seed = 900;
  for (Conv3dMath math : {Conv3dMath::kFp32, Conv3dMath::kTf32, Conv3dMath::kBf16}) {
    for (int k : {1, 3, 5}) {
      for (const auto& [x_planes, y_planes, d_offset] : plane_cases(k / 2)) {
        for (bool accumulate : {false, true}) {
          check_case(handle, {Conv3dPass::kBackwardData, math, k, x_planes, y_planes, d_offset, accumulate},
                     seed += 3, false, true);
        }
      }
    }
  }
  check_case(handle, {Conv3dPass::kBackwardData, Conv3dMath::kTf32, 3, 3, 5, -1, true}, 15, true, true);
  check_case(handle, {Conv3dPass::kBackwardData, Conv3dMath::kBf16, 3, 1, 1, 1, true}, 16, true, true);
  // The option changes nothing for the other passes.
  check_case(handle, {Conv3dPass::kForward, Conv3dMath::kTf32, 3, 7, 5, 1, true}, 17, false, true);
  check_case(handle, {Conv3dPass::kBackwardFilter, Conv3dMath::kTf32, 3, 2, 2, 1, false}, 18, false, true);
}

TEST(Conv3dCudaTest, ReplaysFromACudaGraph) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudnnHandle handle;
  // Direct forward, staged data gradient (gather, cuDNN, plane add), staged
  // weight gradient: each captured once and replayed.
  check_case(handle, {Conv3dPass::kForward, Conv3dMath::kTf32, 3, 7, 5, 1, true}, 11, true);
  check_case(handle, {Conv3dPass::kBackwardData, Conv3dMath::kFp32, 3, 1, 1, -1, true}, 12, true);
  check_case(handle, {Conv3dPass::kBackwardFilter, Conv3dMath::kFp32, 5, 2, 2, 2, false}, 13, true);
  check_case(handle, {Conv3dPass::kBackwardData, Conv3dMath::kBf16, 3, 1, 1, -1, true}, 14, true);
}

TEST(Conv3dCudaTest, RunRefusesAnotherShapeOrAMissingWorkspace) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  CudnnHandle handle;
  const Case c{Conv3dPass::kForward, Conv3dMath::kFp32, 3, 2, 2, 1, false};  // staged: needs a workspace
  Embedded x(2, 3, 2, 63, 1), y(2, 5, 2, 63, 2);
  DeviceBuffer<float> x_dev(x.buffer()), y_dev(y.buffer()), w_dev(135);
  Conv3dArguments a = arguments(c, x, x_dev.data(), y, y_dev.data(), w_dev.data());
  Conv3d op(handle, a);
  ASSERT_TRUE(op.status().ok()) << op.status().reason();
  ASSERT_GT(op.workspace_bytes(), 0u);
  Stream stream;
  EXPECT_THROW(op.run(a, nullptr, stream.get()), UsageError);
  DeviceBuffer<float> workspace(op.workspace_bytes() / sizeof(float) + 1);
  a.d_offset = 0;
  EXPECT_THROW(op.run(a, workspace.data(), stream.get()), UsageError);
}

// Host side: no device needed.

/// A shape whose views sit in a host buffer (can_implement reads nothing).
struct HostShape {
  alignas(16) float storage[4] = {};
  Embedded x{2, 3, 5, 63, 1}, y{2, 5, 5, 63, 2};
  Conv3dArguments args(Conv3dPass pass, int64_t x_planes, int64_t y_planes, int64_t d_offset) {
    x = Embedded(2, 3, x_planes, 63, 1);
    y = Embedded(2, 5, y_planes, 63, 2);
    return arguments({pass, Conv3dMath::kTf32, 3, x_planes, y_planes, d_offset, false}, x, x.buffer().data(), y,
                     y.buffer().data(), storage);
  }
};

TEST(Conv3dCanImplement, AcceptsEveryPassAndOffset) {
  HostShape s;
  for (Conv3dPass pass : {Conv3dPass::kForward, Conv3dPass::kBackwardData, Conv3dPass::kBackwardFilter}) {
    for (const auto& [x_planes, y_planes, d_offset] : plane_cases(1)) {
      const Status st = Conv3d::can_implement(s.args(pass, x_planes, y_planes, d_offset));
      EXPECT_TRUE(st.ok()) << st.reason() << "; " << conv3d_pass_name(pass) << " X=" << x_planes
                           << " Y=" << y_planes << " d=" << d_offset;
    }
  }
}

TEST(Conv3dCanImplement, RefusesWithTheFieldNamed) {
  HostShape s;
  Conv3dArguments a = s.args(Conv3dPass::kForward, 5, 5, 0);
  a.geometry.k = 4;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("k = 4"), std::string::npos);
  a = s.args(Conv3dPass::kForward, 5, 5, 0);
  a.y.channel_stride = 4 * 63;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("y.channel_stride"), std::string::npos);
  a = s.args(Conv3dPass::kBackwardData, 5, 5, 0);
  a.dx.batch_stride = 1;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("dx.batch_stride"), std::string::npos);
  a = s.args(Conv3dPass::kBackwardFilter, 5, 5, 0);
  a.dy.planes = -1;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("dy.planes"), std::string::npos);
  a = s.args(Conv3dPass::kBackwardFilter, 5, 5, 0);
  a.dw = reinterpret_cast<float*>(reinterpret_cast<char*>(s.storage) + 2);
  EXPECT_NE(Conv3d::can_implement(a).reason().find("aligned"), std::string::npos);
  a = s.args(Conv3dPass::kForward, 5, 5, 0);
  a.geometry.c_in = 0;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("c_in = 0"), std::string::npos);
}

TEST(Conv3dCanImplement, AlignmentFollowsTheStoredElement) {
  HostShape s;
  Conv3dArguments a = s.args(Conv3dPass::kBackwardFilter, 5, 5, 0);
  a.dw = reinterpret_cast<char*>(s.storage) + 2;  // a bf16 element's alignment, not a float's
  EXPECT_FALSE(Conv3d::can_implement(a).ok());
  a.math = Conv3dMath::kBf16;
  EXPECT_TRUE(Conv3d::can_implement(a).ok()) << Conv3d::can_implement(a).reason();
  a.dw = reinterpret_cast<char*>(s.storage) + 1;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("2-byte elements"), std::string::npos);
  a = s.args(Conv3dPass::kForward, 5, 5, 0);
  a.math = Conv3dMath::kBf16;
  a.x.data = reinterpret_cast<const char*>(a.x.data) + 1;
  EXPECT_NE(Conv3d::can_implement(a).reason().find("x.data is not aligned"), std::string::npos);
  EXPECT_EQ(conv3d_element_bytes(Conv3dMath::kBf16), 2u);
  EXPECT_EQ(conv3d_element_bytes(Conv3dMath::kTf32), 4u);
  EXPECT_STREQ(conv3d_math_name(Conv3dMath::kBf16), "bf16");
}

TEST(Conv3dCanImplement, DirectOnlyWhereCudnnPadsSymmetrically) {
  HostShape s;  // k = 3, r = 1
  EXPECT_TRUE(Conv3d::direct(s.args(Conv3dPass::kForward, 5, 5, 0)));            // whole volume
  EXPECT_TRUE(Conv3d::direct(s.args(Conv3dPass::kForward, 7, 5, 1)));            // halo-padded slab
  EXPECT_TRUE(Conv3d::direct(s.args(Conv3dPass::kBackwardData, 5, 7, -1)));      // its data gradient
  EXPECT_TRUE(Conv3d::direct(s.args(Conv3dPass::kBackwardFilter, 7, 5, 1)));     // its weight gradient
  EXPECT_FALSE(Conv3d::direct(s.args(Conv3dPass::kForward, 1, 1, 1)));           // top correction
  EXPECT_FALSE(Conv3d::direct(s.args(Conv3dPass::kForward, 1, 1, -1)));          // bottom correction
  EXPECT_FALSE(Conv3d::direct(s.args(Conv3dPass::kForward, 5, 3, 0)));           // asymmetric window
  EXPECT_FALSE(Conv3d::direct(s.args(Conv3dPass::kForward, 9, 5, 2)));           // pad_d would be -1
  EXPECT_FALSE(Conv3d::direct(s.args(Conv3dPass::kForward, 0, 4, -2)));          // no input planes
}

// The staged path's plane copies move 16 bytes a thread only where every
// plane row starts on 16 bytes; anything else takes one element a thread.
// (This file's 7x9 device cases, with strides +5/+7, run the one-element
// kernels; AlignedPlanesEveryPassMatchesTheCpuKernel the 16-byte ones.)
TEST(Conv3dPlanePack, SixteenBytesOnlyWhereEveryPlaneRowIsAligned) {
  alignas(16) static char storage[256];
  const void* at = storage;
  const conv3d_detail::PlaneShape f32{2, 3, 32, false}, b16{2, 3, 32, true};
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 192, storage + 32, f32), 4);
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 192, storage + 32, b16), 8);
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 192, nullptr, b16), 8) << "an empty block";
  EXPECT_EQ(conv3d_detail::plane_pack(at, 68, 204, nullptr, f32), 4) << "strides of whole float packs";
  EXPECT_EQ(conv3d_detail::plane_pack(at, 68, 204, nullptr, b16), 1) << "68 bf16 is not whole 16-byte packs";
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 197, nullptr, f32), 1) << "batch stride";
  EXPECT_EQ(conv3d_detail::plane_pack(storage + 8, 64, 192, nullptr, f32), 1) << "view on 8 bytes";
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 192, storage + 4, f32), 1) << "block on 4 bytes";
  const conv3d_detail::PlaneShape odd{2, 3, 63, false};
  EXPECT_EQ(conv3d_detail::plane_pack(at, 64, 192, nullptr, odd), 1) << "H*W = 63";
}

}  // namespace
}  // namespace perflab::kernels::cuda
