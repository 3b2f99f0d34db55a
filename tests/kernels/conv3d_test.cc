// Tests for the CPU 3D convolution (kernels/cpu/conv3d.h): each pass against
// naive loops in double on views embedded in larger tensors (strides honoured,
// neighbouring planes and the workspace's end untouched), the adjoint
// identities, thread-count independence, and the halo decompositions the
// halo_conv workload is built on.
#include "kernels/cpu/conv3d.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/kernels/conv3d_support.h"
#include "base/random.h"

namespace perflab::kernels::cpu {
namespace {

using test_support::random_vector;

/// Odd sizes everywhere: N=2, C_in=3, C_out=5, H=7, W=9.
Conv3dGeometry geometry(int k) { return {2, 3, 5, 7, 9, k}; }

int64_t weight_count(const Conv3dGeometry& g) { return g.c_out * g.c_in * g.k * g.k * g.k; }
int64_t plane_size(const Conv3dGeometry& g) { return g.height * g.width; }

std::string describe(const Conv3dGeometry& g, int64_t x_planes, int64_t y_planes, int64_t d_offset,
                     bool accumulate) {
  return "N=" + std::to_string(g.batch) + " C_in=" + std::to_string(g.c_in) +
         " C_out=" + std::to_string(g.c_out) + " H=" + std::to_string(g.height) +
         " W=" + std::to_string(g.width) + " k=" + std::to_string(g.k) +
         " x.planes=" + std::to_string(x_planes) + " y.planes=" + std::to_string(y_planes) +
         " d_offset=" + std::to_string(d_offset) + " accumulate=" + std::to_string(accumulate);
}

/// Calls term(y_index, x_index, w_index) for every product of the forward
/// sum in conv3d.h, with indices into dense y[N][C_out][y_planes][H][W],
/// x[N][C_in][x_planes][H][W] and w[C_out][C_in][k][k][k].
template <typename Term>
void for_each_term(const Conv3dGeometry& g, int64_t x_planes, int64_t y_planes, int64_t d_offset,
                   Term term) {
  const int64_t k = g.k, r = g.k / 2, h = g.height, w = g.width;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.c_out; ++co) {
      for (int64_t o = 0; o < y_planes; ++o) {
        for (int64_t ci = 0; ci < g.c_in; ++ci) {
          for (int64_t kd = 0; kd < k; ++kd) {
            const int64_t p = o + d_offset + kd - r;
            if (p < 0 || p >= x_planes) continue;
            for (int64_t kh = 0; kh < k; ++kh) {
              for (int64_t kw = 0; kw < k; ++kw) {
                for (int64_t yy = 0; yy < h; ++yy) {
                  const int64_t sy = yy + kh - r;
                  if (sy < 0 || sy >= h) continue;
                  for (int64_t xx = 0; xx < w; ++xx) {
                    const int64_t sx = xx + kw - r;
                    if (sx < 0 || sx >= w) continue;
                    term((((n * g.c_out + co) * y_planes + o) * h + yy) * w + xx,
                         (((n * g.c_in + ci) * x_planes + p) * h + sy) * w + sx,
                         (((co * g.c_in + ci) * k + kd) * k + kh) * k + kw);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

/// A workspace of exactly conv3d_workspace_floats(g) floats followed by a
/// guard of NaNs that no call may touch.
class Workspace {
 public:
  explicit Workspace(const Conv3dGeometry& g)
      : size_(conv3d_workspace_floats(g)), data_(size_ + kGuard, std::numeric_limits<float>::quiet_NaN()) {}
  float* data() { return data_.data(); }
  bool guard_intact() const {
    return std::all_of(data_.begin() + static_cast<std::ptrdiff_t>(size_), data_.end(),
                       [](float v) { return std::isnan(v); });
  }

 private:
  static constexpr size_t kGuard = 64;
  size_t size_;
  std::vector<float> data_;
};

enum class Pass { kForward, kBackwardData, kBackwardFilter };

/// Runs `pass` on embedded views with random contents (the output prefilled
/// with random values) and checks it against for_each_term: the result, that
/// nothing outside the output view and nothing of the inputs changed, and
/// that the workspace was not overrun.
void check_pass(Pass pass, const Conv3dGeometry& g, int64_t x_planes, int64_t y_planes, int64_t d_offset,
                bool accumulate, uint32_t seed) {
  const std::string what = describe(g, x_planes, y_planes, d_offset, accumulate);
  const int64_t hw = plane_size(g);
  Embedded x(g.batch, g.c_in, x_planes, hw, seed), y(g.batch, g.c_out, y_planes, hw, seed + 1);
  std::vector<float> w = random_vector(static_cast<size_t>(weight_count(g)), seed + 2);
  const std::vector<float> x_before = x.buffer(), y_before = y.buffer(), w_before = w;
  const std::vector<float> xd = x.dense(), yd = y.dense();
  const std::vector<float>& out_before = pass == Pass::kForward ? yd : pass == Pass::kBackwardData ? xd : w;
  std::vector<double> expected(out_before.size(), 0.0), scale(out_before.size(), 0.0);
  if (accumulate) {
    for (size_t i = 0; i < expected.size(); ++i) {
      expected[i] = out_before[i];
      scale[i] = std::fabs(expected[i]);
    }
  }
  auto add = [&](int64_t at, double term) {
    expected[static_cast<size_t>(at)] += term;
    scale[static_cast<size_t>(at)] += std::fabs(term);
  };
  for_each_term(g, x_planes, y_planes, d_offset, [&](int64_t yi, int64_t xi, int64_t wi) {
    const double wv = w[static_cast<size_t>(wi)], xv = xd[static_cast<size_t>(xi)],
                 yv = yd[static_cast<size_t>(yi)];
    if (pass == Pass::kForward) add(yi, wv * xv);
    if (pass == Pass::kBackwardData) add(xi, wv * yv);
    if (pass == Pass::kBackwardFilter) add(wi, yv * xv);
  });

  Workspace ws(g);
  switch (pass) {
    case Pass::kForward:
      conv3d_forward(g, x.const_view(), w.data(), y.view(), d_offset, accumulate, ws.data());
      expect_close(y.dense(), expected, scale, {g.batch, g.c_out, y_planes, g.height, g.width},
                   "forward " + what);
      EXPECT_EQ(y.changed_outside(y.buffer(), y_before), 0) << "forward wrote outside y's view; " << what;
      EXPECT_EQ(x.buffer(), x_before) << what;
      break;
    case Pass::kBackwardData:
      conv3d_backward_data(g, y.const_view(), w.data(), x.view(), d_offset, accumulate, ws.data());
      expect_close(x.dense(), expected, scale, {g.batch, g.c_in, x_planes, g.height, g.width},
                   "backward_data " + what);
      EXPECT_EQ(x.changed_outside(x.buffer(), x_before), 0) << "backward_data wrote outside dx's view; " << what;
      EXPECT_EQ(y.buffer(), y_before) << what;
      break;
    case Pass::kBackwardFilter:
      conv3d_backward_filter(g, x.const_view(), y.const_view(), w.data(), d_offset, accumulate, ws.data());
      expect_close(w, expected, scale, {g.c_out, g.c_in, g.k, g.k, g.k}, "backward_filter " + what);
      EXPECT_EQ(x.buffer(), x_before) << what;
      EXPECT_EQ(y.buffer(), y_before) << what;
      break;
  }
  if (pass != Pass::kBackwardFilter) {
    EXPECT_EQ(w, w_before) << what;
  }
  EXPECT_TRUE(ws.guard_intact()) << "workspace overrun; " << what;
}

/// Offsets worth trying for these plane counts: the halo ones (±r), ±1, 0,
/// and offsets past either end, where no output plane sees an input plane.
std::vector<int64_t> offsets(int r, int64_t x_planes, int64_t y_planes) {
  return {-r, -1, 0, 1, r, x_planes + r + 1, -(y_planes + r + 1)};
}

void sweep(Pass pass) {
  uint32_t seed = 100;
  for (int k : {1, 3, 5, 7}) {
    for (int64_t x_planes : {1, 2, 5, 6}) {
      for (int64_t y_planes : {1, 3, 6}) {
        for (int64_t d_offset : offsets(k / 2, x_planes, y_planes)) {
          for (bool accumulate : {false, true}) {
            check_pass(pass, geometry(k), x_planes, y_planes, d_offset, accumulate, seed += 3);
          }
        }
      }
    }
  }
}

TEST(Conv3dTest, ForwardMatchesLoopsOnStridedViews) { sweep(Pass::kForward); }
TEST(Conv3dTest, BackwardDataMatchesLoopsOnStridedViews) { sweep(Pass::kBackwardData); }
TEST(Conv3dTest, BackwardFilterMatchesLoopsOnStridedViews) { sweep(Pass::kBackwardFilter); }

TEST(Conv3dTest, OneByOneGeometry) {
  // H = W = 1 with a 7-wide kernel: every in-plane tap but the centre is padding.
  for (Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardFilter}) {
    check_pass(pass, {1, 1, 1, 1, 1, 7}, 3, 4, -1, true, 7);
    check_pass(pass, {3, 2, 1, 1, 2, 5}, 4, 2, 2, false, 8);
  }
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}
double norm(const std::vector<float>& a) { return std::sqrt(dot(a, a)); }

TEST(Conv3dTest, BackwardPassesAreAdjoints) {
  // <conv(x), dy> = <x, convᵀ(dy)> = <w, dW(x, dy)>: all three are the sum
  // over the forward's terms of w·x·dy.
  for (int k : {1, 3, 5, 7}) {
    const Conv3dGeometry g = geometry(k);
    Workspace ws(g);
    for (int64_t x_planes : {1, 4, 6}) {
      for (int64_t y_planes : {2, 6}) {
        for (int64_t d_offset : offsets(k / 2, x_planes, y_planes)) {
          const std::string what = describe(g, x_planes, y_planes, d_offset, false);
          const auto xs = static_cast<size_t>(g.batch * g.c_in * x_planes * plane_size(g));
          const auto ys = static_cast<size_t>(g.batch * g.c_out * y_planes * plane_size(g));
          const std::vector<float> x = random_vector(xs, 1), dy = random_vector(ys, 2),
                                   w = random_vector(static_cast<size_t>(weight_count(g)), 3);
          std::vector<float> y(ys), dx(xs), dw(w.size());
          auto xv = dense_view(x.data(), x_planes, g.c_in, g.height, g.width);
          auto dyv = dense_view(dy.data(), y_planes, g.c_out, g.height, g.width);
          conv3d_forward(g, xv, w.data(), dense_view(y.data(), y_planes, g.c_out, g.height, g.width),
                         d_offset, false, ws.data());
          conv3d_backward_data(g, dyv, w.data(), dense_view(dx.data(), x_planes, g.c_in, g.height, g.width),
                               d_offset, false, ws.data());
          conv3d_backward_filter(g, xv, dyv, dw.data(), d_offset, false, ws.data());
          const double tol = 1e-5 * (norm(y) * norm(dy) + norm(x) * norm(dx) + norm(w) * norm(dw)) + 1e-9;
          EXPECT_NEAR(dot(y, dy), dot(x, dx), tol) << what;
          EXPECT_NEAR(dot(y, dy), dot(w, dw), tol) << what;
        }
      }
    }
  }
}

// The data gradient as a forward convolution (conv3d_adjoint_source, what
// the CUDA convolution falls back to when cuDNN has no backward-data
// algorithm): dy convolved forward with -d_offset, C_in and C_out swapped
// and the weights flipped and transposed, equals convᵀ(dy) with d_offset,
// accumulating too, at every offset the halo layer uses and others.
TEST(Conv3dTest, TheDataGradientIsAForwardConvolutionWithFlippedWeights) {
  for (int k : {1, 3, 5}) {
    const Conv3dGeometry g = geometry(k);
    Conv3dGeometry swapped = g;
    std::swap(swapped.c_in, swapped.c_out);
    Workspace ws(g), ws_swapped(swapped);
    const std::vector<float> w = random_vector(static_cast<size_t>(weight_count(g)), 5);
    std::vector<float> flipped(w.size());
    conv3d_adjoint_weights(g, w.data(), flipped.data());
    for (int64_t x_planes : {1, 4, 6}) {
      for (int64_t y_planes : {2, 6}) {
        for (int64_t d_offset : offsets(k / 2, x_planes, y_planes)) {
          for (bool accumulate : {false, true}) {
            const std::string what = describe(g, x_planes, y_planes, d_offset, accumulate);
            const auto xs = static_cast<size_t>(g.batch * g.c_in * x_planes * plane_size(g));
            const auto ys = static_cast<size_t>(g.batch * g.c_out * y_planes * plane_size(g));
            const std::vector<float> dy = random_vector(ys, 6), start = random_vector(xs, 7);
            std::vector<float> expected = start, actual = start;
            const auto dyv = dense_view(dy.data(), y_planes, g.c_out, g.height, g.width);
            conv3d_backward_data(g, dyv, w.data(), dense_view(expected.data(), x_planes, g.c_in, g.height, g.width),
                                 d_offset, accumulate, ws.data());
            conv3d_forward(swapped, dyv, flipped.data(),
                           dense_view(actual.data(), x_planes, g.c_in, g.height, g.width), -d_offset, accumulate,
                           ws_swapped.data());
            expect_close(actual, expected, {g.batch, g.c_in, x_planes, g.height, g.width}, "via forward " + what);
          }
        }
      }
    }
  }
  // The mapping itself: a 1 x 2 -> 3 x 2 x 2 x 2 case by hand.
  Conv3dGeometry g = geometry(3);
  g.c_in = 2;
  g.c_out = 3;
  EXPECT_EQ(conv3d_adjoint_source(0, g.c_in, g.c_out, g.k), 26);          // w'[0][0][0][0][0] = w[0][0][2][2][2]
  EXPECT_EQ(conv3d_adjoint_source(27, g.c_in, g.c_out, g.k), 2 * 27 + 26);  // w'[0][1] = w[1][0], flipped
  EXPECT_EQ(conv3d_adjoint_source(3 * 27 + 1, g.c_in, g.c_out, g.k), 27 + 25);  // w'[1][0][0][0][1] = w[0][1][2][2][1]
}

TEST(Conv3dTest, ThreadCountChangesNothingButGemmRounding) {
  // Large enough that every parallel loop of the kernel runs in parallel.
  const Conv3dGeometry g{2, 8, 6, 23, 25, 3};
  const int64_t planes = 5;
  const auto xs = static_cast<size_t>(g.batch * g.c_in * planes * plane_size(g));
  const auto ys = static_cast<size_t>(g.batch * g.c_out * planes * plane_size(g));
  const std::vector<float> x = random_vector(xs, 4), dy = random_vector(ys, 5),
                           w = random_vector(static_cast<size_t>(weight_count(g)), 6);
  auto run = [&](int threads, std::vector<float>& y, std::vector<float>& dx, std::vector<float>& dw) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    Workspace ws(g);
    auto xv = dense_view(x.data(), planes, g.c_in, g.height, g.width);
    auto dyv = dense_view(dy.data(), planes, g.c_out, g.height, g.width);
    y.assign(ys, 0.0f);
    dx.assign(xs, 0.0f);
    dw.assign(w.size(), 0.0f);
    conv3d_forward(g, xv, w.data(), dense_view(y.data(), planes, g.c_out, g.height, g.width), 1, false,
                   ws.data());
    conv3d_backward_data(g, dyv, w.data(), dense_view(dx.data(), planes, g.c_in, g.height, g.width), 1,
                         false, ws.data());
    conv3d_backward_filter(g, xv, dyv, dw.data(), 1, false, ws.data());
    omp_set_num_threads(saved);
  };
  std::vector<float> y1, dx1, dw1, y4, dx4, dw4;
  run(1, y1, dx1, dw1);
  run(4, y4, dx4, dw4);
  const std::array<int64_t, 5> ydims{g.batch, g.c_out, planes, g.height, g.width};
  const std::array<int64_t, 5> xdims{g.batch, g.c_in, planes, g.height, g.width};
  expect_close(y4, y1, ydims, "forward, 4 threads vs 1");
  expect_close(dx4, dx1, xdims, "backward_data, 4 threads vs 1");
  expect_close(dw4, dw1, {g.c_out, g.c_in, g.k, g.k, g.k}, "backward_filter, 4 threads vs 1");
}

TEST(Conv3dTest, GeometryCheckNamesTheField) {
  struct Case {
    Conv3dGeometry g;
    const char* field;
  };
  const Case cases[] = {{{0, 3, 5, 7, 9, 3}, "batch = 0"},  {{2, 0, 5, 7, 9, 3}, "c_in = 0"},
                        {{2, 3, -1, 7, 9, 3}, "c_out = -1"}, {{2, 3, 5, 0, 9, 3}, "height = 0"},
                        {{2, 3, 5, 7, 0, 3}, "width = 0"},  {{2, 3, 5, 7, 9, 0}, "k = 0"},
                        {{2, 3, 5, 7, 9, 4}, "k = 4"},      {{2, 3, 5, 7, 9, 9}, "k = 9"},
                        {{2, 3, 5, 7, 9, -3}, "k = -3"}};
  for (const Case& c : cases) {
    try {
      conv3d_check_geometry(c.g);
      ADD_FAILURE() << "no exception for " << c.field;
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(c.field), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
  for (int k : {1, 3, 5, 7}) EXPECT_NO_THROW(conv3d_check_geometry(geometry(k)));
}

TEST(Conv3dTest, CallsRejectViewsWhoseStridesCannotHoldThem) {
  const Conv3dGeometry g = geometry(3);
  Workspace ws(g);
  std::vector<float> x(4096), y(4096), w(static_cast<size_t>(weight_count(g)));
  const int64_t hw = plane_size(g);
  const ConstPlaneView xv{x.data(), 2, 2 * hw, 3 * 2 * hw};
  try {
    conv3d_forward(g, xv, w.data(), {y.data(), 3, 2 * hw, 5 * 3 * hw}, 0, false, ws.data());
    ADD_FAILURE() << "no exception for a channel stride shorter than the planes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("y.channel_stride"), std::string::npos) << e.what();
  }
  EXPECT_THROW(conv3d_backward_filter(g, {x.data(), 2, 2 * hw, 2 * hw}, as_const(dense_view(y.data(), 1, 5, 7, 9)),
                                      w.data(), 0, false, ws.data()),
               std::invalid_argument);
}

TEST(Conv3dTest, CountsWorkedByHand) {
  // C_in*k*k = 27 rows of H*W = 63 columns, plus k*C_out*27 = 405 weights.
  EXPECT_EQ(conv3d_workspace_floats(geometry(3)), 27u * 63u + 405u);
  // 2 * 5 * 3 * 27 * 4 * 7 * 9
  EXPECT_DOUBLE_EQ(conv3d_macs(geometry(3), 4), 204120.0);
}

}  // namespace
}  // namespace perflab::kernels::cpu
