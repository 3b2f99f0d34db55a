// 3D convolution on the CPU as im2col per input plane plus OpenBLAS GEMMs.
//
// Input plane p of a view feeds output plane o through kernel plane kd when
// o = p - d_offset + r - kd. So each call walks the input planes once, builds
// the plane's columns col[C_in*k*k][H*W] (same padding in H and W), and for
// every kd whose output plane lies in the output view does one GEMM against
// the weights of that kd, gathered once per call as wr[kd][C_out][C_in*k*k]:
//   forward          y[o]    += wr[kd] · col(x[p])
//   backward data    col     += wr[kd]ᵀ · dy[o], then x[p] += col2im(col)
//   backward filter  dwr[kd] += dy[o] · col(x[p])ᵀ
// Each output element receives its terms in the same order whatever the
// thread count (planes in order; our loops split only over rows or channels
// that no two threads share), so only the GEMMs' own rounding can vary.
#include "kernels/cpu/conv3d.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cpu/blas_int.h"

namespace perflab::kernels::cpu {
namespace {

/// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kConvMinParallelElements = 1 << 14;

/// The sizes every loop below needs, derived once from a checked geometry.
struct Dims {
  int64_t k, r, h, w, hw, c_in, c_out;
  int64_t rows;  ///< C_in*k*k: rows of a plane's columns.
  explicit Dims(const Conv3dGeometry& g)
      : k(g.k), r(g.k / 2), h(g.height), w(g.width), hw(g.height * g.width), c_in(g.c_in),
        c_out(g.c_out), rows(g.c_in * g.k * g.k) {}
  /// [first, last] kernel planes through which input plane p reaches an
  /// output plane of [0, out_planes); empty when first > last.
  int64_t first_kd(int64_t p, int64_t d_offset, int64_t out_planes) const {
    return std::max<int64_t>(0, p - d_offset + r - (out_planes - 1));
  }
  int64_t last_kd(int64_t p, int64_t d_offset) const { return std::min<int64_t>(k - 1, p - d_offset + r); }
  int64_t out_plane(int64_t p, int64_t d_offset, int64_t kd) const { return p - d_offset + r - kd; }
  /// Output columns [lo, hi) whose source column xx + kw - r lies in [0, W).
  int64_t col_lo(int64_t kw) const { return std::min(std::max<int64_t>(0, r - kw), w); }
  int64_t col_hi(int64_t kw) const { return std::max(col_lo(kw), std::min(w, w + r - kw)); }
};

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument("conv3d: " + what); }

void check_view(const std::string& name, const ConstPlaneView& v, int64_t channels, const Dims& d) {
  if (v.planes < 0) invalid(name + ".planes = " + std::to_string(v.planes) + " is negative");
  if (v.channel_stride < v.planes * d.hw) {
    invalid(name + ".channel_stride = " + std::to_string(v.channel_stride) + " is below planes*H*W = " +
            std::to_string(v.planes * d.hw));
  }
  if (v.batch_stride < channels * v.channel_stride) {
    invalid(name + ".batch_stride = " + std::to_string(v.batch_stride) +
            " is below channels*channel_stride = " + std::to_string(channels * v.channel_stride));
  }
  if (v.channel_stride > INT_MAX) {
    invalid(name + ".channel_stride = " + std::to_string(v.channel_stride) + " exceeds the BLAS index range");
  }
}

/// The checked sizes of a call whose input-side view (x or dx, C_in
/// channels) and output-side view (y or dy, C_out channels) are given.
Dims checked(const Conv3dGeometry& g, const char* in_name, const ConstPlaneView& in, const char* out_name,
             const ConstPlaneView& out) {
  conv3d_check_geometry(g);
  const Dims d(g);
  check_view(in_name, in, d.c_in, d);
  check_view(out_name, out, d.c_out, d);
  return d;
}

/// Calls visit(n, p, kd_first, kd_last) for every batch entry n and input
/// plane p in [0, in_planes) that reaches an output plane of [0, out_planes),
/// in order, with the kernel planes [kd_first, kd_last] through which it does.
template <typename Visit>
void for_each_feeding_plane(const Dims& d, int64_t batch, int64_t in_planes, int64_t out_planes, int64_t d_offset,
                            Visit visit) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < in_planes; ++p) {
      const int64_t kd_first = d.first_kd(p, d_offset, out_planes);
      const int64_t kd_last = d.last_kd(p, d_offset);
      if (kd_first <= kd_last) visit(n, p, kd_first, kd_last);
    }
  }
}

/// Zeroes every plane of `v` (all batches and `channels` channels).
void zero_view(const PlaneView& v, int64_t batch, int64_t channels, const Dims& d) {
  const int64_t n_rows = batch * channels;
  const int64_t span = v.planes * d.hw;
#pragma omp parallel for schedule(static) if (n_rows * span >= kConvMinParallelElements)
  for (int64_t i = 0; i < n_rows; ++i) {
    float* row = v.data + (i / channels) * v.batch_stride + (i % channels) * v.channel_stride;
    std::fill(row, row + span, 0.0f);
  }
}

/// col[(ci*k + kh)*k + kw][yy*W + xx] = plane[ci][yy + kh - r][xx + kw - r],
/// zero outside H x W. `plane` points at channel 0 of one input plane.
void im2col(const Dims& d, const float* plane, int64_t channel_stride, float* col) {
#pragma omp parallel for schedule(static) if (d.rows * d.hw >= kConvMinParallelElements)
  for (int64_t row = 0; row < d.rows; ++row) {
    const int64_t ci = row / (d.k * d.k);
    const int64_t kh = (row / d.k) % d.k;
    const int64_t kw = row % d.k;
    const int64_t lo = d.col_lo(kw);
    const int64_t hi = d.col_hi(kw);
    const float* src = plane + ci * channel_stride;
    float* dst = col + row * d.hw;
    for (int64_t yy = 0; yy < d.h; ++yy, dst += d.w) {
      const int64_t sy = yy + kh - d.r;
      if (sy < 0 || sy >= d.h) {
        std::fill(dst, dst + d.w, 0.0f);
        continue;
      }
      std::fill(dst, dst + lo, 0.0f);
      std::copy(src + sy * d.w + lo + kw - d.r, src + sy * d.w + hi + kw - d.r, dst + lo);
      std::fill(dst + hi, dst + d.w, 0.0f);
    }
  }
}

/// The adjoint of im2col, added to `plane`: every column entry goes back to
/// the pixel it was read from. Threads own whole channels, so no two write
/// one pixel and each pixel sums its terms in a fixed order.
void col2im_add(const Dims& d, const float* col, float* plane, int64_t channel_stride) {
#pragma omp parallel for schedule(static) if (d.rows * d.hw >= kConvMinParallelElements)
  for (int64_t ci = 0; ci < d.c_in; ++ci) {
    float* dst_channel = plane + ci * channel_stride;
    for (int64_t kh = 0; kh < d.k; ++kh) {
      for (int64_t kw = 0; kw < d.k; ++kw) {
        const int64_t lo = d.col_lo(kw);
        const int64_t hi = d.col_hi(kw);
        const float* src = col + ((ci * d.k + kh) * d.k + kw) * d.hw;
        for (int64_t yy = 0; yy < d.h; ++yy) {
          const int64_t sy = yy + kh - d.r;
          if (sy < 0 || sy >= d.h) continue;
          float* dst = dst_channel + sy * d.w;
          const float* s = src + yy * d.w;
          for (int64_t xx = lo; xx < hi; ++xx) dst[xx + kw - d.r] += s[xx];
        }
      }
    }
  }
}

/// wr[kd][co][(ci*k + kh)*k + kw] = w[co][ci][kd][kh][kw].
void gather_weights(const Dims& d, const float* w, float* wr) {
  const int64_t kk = d.k * d.k;
  for (int64_t co = 0; co < d.c_out; ++co) {
    for (int64_t ci = 0; ci < d.c_in; ++ci) {
      for (int64_t kd = 0; kd < d.k; ++kd) {
        const float* src = w + ((co * d.c_in + ci) * d.k + kd) * kk;
        std::copy(src, src + kk, wr + (kd * d.c_out + co) * d.rows + ci * kk);
      }
    }
  }
}

/// dw[co][ci][kd][kh][kw] = (accumulate ? dw : 0) + dwr[kd][co][(ci*k + kh)*k + kw].
void scatter_weights(const Dims& d, const float* dwr, float* dw, bool accumulate) {
  const int64_t kk = d.k * d.k;
  for (int64_t co = 0; co < d.c_out; ++co) {
    for (int64_t ci = 0; ci < d.c_in; ++ci) {
      for (int64_t kd = 0; kd < d.k; ++kd) {
        const float* src = dwr + (kd * d.c_out + co) * d.rows + ci * kk;
        float* dst = dw + ((co * d.c_in + ci) * d.k + kd) * kk;
        for (int64_t i = 0; i < kk; ++i) dst[i] = (accumulate ? dst[i] : 0.0f) + src[i];
      }
    }
  }
}

}  // namespace

size_t conv3d_workspace_floats(const Conv3dGeometry& g) {
  conv3d_check_geometry(g);
  const Dims d(g);
  // One plane's columns, then the weights (or their gradient) by kernel plane.
  return static_cast<size_t>(d.rows * d.hw + d.k * d.c_out * d.rows);
}

void conv3d_check_geometry(const Conv3dGeometry& g) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"batch", g.batch}, {"c_in", g.c_in}, {"c_out", g.c_out}, {"height", g.height}, {"width", g.width}};
  for (const auto& [name, value] : sizes) {
    if (value < 1) invalid(std::string(name) + " = " + std::to_string(value) + " must be at least 1");
  }
  if (g.k < 1 || g.k > 7 || g.k % 2 == 0) {
    invalid("k = " + std::to_string(g.k) + " must be odd and in 1..7");
  }
  if (g.c_in * g.k * g.k > INT_MAX || g.height * g.width > INT_MAX) {
    invalid("c_in*k*k or height*width exceeds the BLAS index range");
  }
}

void conv3d_forward(const Conv3dGeometry& g, ConstPlaneView x, const float* w, PlaneView y,
                    int64_t d_offset, bool accumulate, float* workspace) {
  const Dims d = checked(g, "x", x, "y", as_const(y));
  if (!accumulate) zero_view(y, g.batch, d.c_out, d);
  float* col = workspace;
  float* wr = workspace + d.rows * d.hw;
  gather_weights(d, w, wr);
  for_each_feeding_plane(d, g.batch, x.planes, y.planes, d_offset, [&](int64_t n, int64_t p, int64_t kd_first,
                                                                      int64_t kd_last) {
    im2col(d, x.data + n * x.batch_stride + p * d.hw, x.channel_stride, col);
    for (int64_t kd = kd_first; kd <= kd_last; ++kd) {
      float* out = y.data + n * y.batch_stride + d.out_plane(p, d_offset, kd) * d.hw;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(d.c_out), blas_int(d.hw),
                  blas_int(d.rows), 1.0f, wr + kd * d.c_out * d.rows, blas_int(d.rows), col, blas_int(d.hw),
                  1.0f, out, blas_int(y.channel_stride));
    }
  });
}

void conv3d_backward_data(const Conv3dGeometry& g, ConstPlaneView dy, const float* w, PlaneView dx,
                          int64_t d_offset, bool accumulate, float* workspace) {
  const Dims d = checked(g, "dx", as_const(dx), "dy", dy);
  if (!accumulate) zero_view(dx, g.batch, d.c_in, d);
  float* col = workspace;
  float* wr = workspace + d.rows * d.hw;
  gather_weights(d, w, wr);
  for_each_feeding_plane(d, g.batch, dx.planes, dy.planes, d_offset, [&](int64_t n, int64_t p, int64_t kd_first,
                                                                        int64_t kd_last) {
    for (int64_t kd = kd_first; kd <= kd_last; ++kd) {
      const float* grad = dy.data + n * dy.batch_stride + d.out_plane(p, d_offset, kd) * d.hw;
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(d.rows), blas_int(d.hw), blas_int(d.c_out),
                  1.0f, wr + kd * d.c_out * d.rows, blas_int(d.rows), grad, blas_int(dy.channel_stride),
                  kd == kd_first ? 0.0f : 1.0f, col, blas_int(d.hw));
    }
    col2im_add(d, col, dx.data + n * dx.batch_stride + p * d.hw, dx.channel_stride);
  });
}

void conv3d_backward_filter(const Conv3dGeometry& g, ConstPlaneView x, ConstPlaneView dy, float* dw,
                            int64_t d_offset, bool accumulate, float* workspace) {
  const Dims d = checked(g, "x", x, "dy", dy);
  float* col = workspace;
  float* dwr = workspace + d.rows * d.hw;
  std::fill(dwr, dwr + d.k * d.c_out * d.rows, 0.0f);
  for_each_feeding_plane(d, g.batch, x.planes, dy.planes, d_offset, [&](int64_t n, int64_t p, int64_t kd_first,
                                                                       int64_t kd_last) {
    im2col(d, x.data + n * x.batch_stride + p * d.hw, x.channel_stride, col);
    for (int64_t kd = kd_first; kd <= kd_last; ++kd) {
      const float* grad = dy.data + n * dy.batch_stride + d.out_plane(p, d_offset, kd) * d.hw;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(d.c_out), blas_int(d.rows), blas_int(d.hw),
                  1.0f, grad, blas_int(dy.channel_stride), col, blas_int(d.hw), 1.0f, dwr + kd * d.c_out * d.rows,
                  blas_int(d.rows));
    }
  });
  scatter_weights(d, dwr, dw, accumulate);
}

void conv3d_adjoint_weights(const Conv3dGeometry& g, const float* w, float* out) {
  const int64_t n = g.c_in * g.c_out * int64_t{g.k} * g.k * g.k;
  for (int64_t i = 0; i < n; ++i) out[i] = w[conv3d_adjoint_source(i, g.c_in, g.c_out, g.k)];
}

double conv3d_macs(const Conv3dGeometry& g, int64_t planes) {
  return static_cast<double>(g.batch) * static_cast<double>(g.c_out) * static_cast<double>(g.c_in) *
         static_cast<double>(g.k) * static_cast<double>(g.k) * static_cast<double>(g.k) *
         static_cast<double>(planes) * static_cast<double>(g.height) * static_cast<double>(g.width);
}

}  // namespace perflab::kernels::cpu
