// 3D convolution on the CPU (stride 1, odd cube kernel, "same" zero padding
// in H and W), written so a volume split along D can be convolved slab by
// slab: every call names which input planes its output planes see through
// `d_offset`, and input planes outside the given view count as zero. That
// one rule covers the whole convolution, a slab padded with its neighbours'
// halo planes, a slab whose halo is taken as zero (the interior of the
// overlapped variant) and the thin boundary corrections computed from the
// halo planes alone (workloads/halo_conv).
//
// Layout: NCDHW, fp32. Weights w[C_out][C_in][k][k][k], dense. A tensor is
// seen through a view of some of its planes (PlaneView), so a call can read
// or write planes [p0, p0+planes) of a slab in place. The views are
// templates: the CUDA convolution (kernels/cuda/conv3d.h) sees bf16 tensors
// through them too.
//
// With r = k/2, for output plane o in [0, y.planes), pixel (yy, xx):
//   y[n][co][o][yy][xx] (+)= sum_{ci,kd,kh,kw} w[co][ci][kd][kh][kw]
//                              * x[n][ci][o + d_offset + kd - r][yy + kh - r][xx + kw - r]
// where an input plane outside [0, x.planes) or a pixel outside H x W is 0.
// The backward passes are the exact adjoints of that map for the same
// d_offset. The GEMMs go through OpenBLAS (cblas_sgemm) on columns built per
// input plane (im2col over H x W); nothing here allocates: the caller hands
// in a workspace of conv3d_workspace_floats() floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/host_device.h"

namespace perflab::kernels::cpu {

/// Sizes shared by input, output and weights of one layer.
struct Conv3dGeometry {
  int64_t batch = 1;   ///< N
  int64_t c_in = 1;    ///< Input channels.
  int64_t c_out = 1;   ///< Output channels.
  int64_t height = 1;  ///< H (same padding).
  int64_t width = 1;   ///< W (same padding).
  int k = 3;           ///< Kernel edge: odd, 1..7.
};

/// Planes [0, planes) of an NCDHW tensor: element (n, c, p, y, x) lives at
/// data[n*batch_stride + c*channel_stride + p*H*W + y*W + x].
/// channel_stride >= planes*H*W, batch_stride >= channels*channel_stride.
/// T is the element (float here; the CUDA convolution also takes bf16 views
/// as untyped ones, kernels/cuda/conv3d.h). A view converts implicitly to the
/// same view with any pointer its T* converts to: const, or untyped.
template <typename T>
struct BasicPlaneView {
  T* data = nullptr;
  int64_t planes = 0;
  int64_t channel_stride = 0;
  int64_t batch_stride = 0;

  template <typename U, typename = std::enable_if_t<!std::is_same_v<T, U> && std::is_convertible_v<T*, U*>>>
  operator BasicPlaneView<U>() const {  // NOLINT(google-explicit-constructor): a pointer's conversions
    return {data, planes, channel_stride, batch_stride};
  }
};

using PlaneView = BasicPlaneView<float>;
/// The read-only twin of PlaneView.
using ConstPlaneView = BasicPlaneView<const float>;

/// A dense [N][channels][planes][H][W] tensor seen whole.
template <typename T>
BasicPlaneView<T> dense_view(T* data, int64_t planes, int64_t channels, int64_t height, int64_t width) {
  return {data, planes, planes * height * width, channels * planes * height * width};
}
/// Planes [first, first+count) of `v`.
template <typename T>
BasicPlaneView<T> plane_range(BasicPlaneView<T> v, int64_t first, int64_t count, int64_t height, int64_t width) {
  return {v.data + first * height * width, count, v.channel_stride, v.batch_stride};
}
template <typename T>
BasicPlaneView<const T> as_const(BasicPlaneView<T> v) {
  return {v.data, v.planes, v.channel_stride, v.batch_stride};
}

/// Floats of workspace any of the three calls below needs for `g`
/// (independent of the plane counts).
size_t conv3d_workspace_floats(const Conv3dGeometry& g);

/// Throws std::invalid_argument naming the field when `g` is not a valid
/// geometry (k even or outside 1..7, a size < 1).
void conv3d_check_geometry(const Conv3dGeometry& g);

/// Forward, as in the header comment: y = (accumulate ? y : 0) + conv(x).
/// Output planes whose window misses every input plane are left as they are
/// when accumulating, zeroed otherwise. y must not overlap x.
void conv3d_forward(const Conv3dGeometry& g, ConstPlaneView x, const float* w, PlaneView y,
                    int64_t d_offset, bool accumulate, float* workspace);

/// Data gradient: the adjoint of conv3d_forward(x -> y) with the same
/// d_offset, applied to dy: dx = (accumulate ? dx : 0) + convᵀ(dy), for
/// dx's planes [0, dx.planes) (input planes of the forward).
void conv3d_backward_data(const Conv3dGeometry& g, ConstPlaneView dy, const float* w, PlaneView dx,
                          int64_t d_offset, bool accumulate, float* workspace);

/// Weight gradient of conv3d_forward(x -> y) with the same d_offset:
/// dw = (accumulate ? dw : 0) + sum over n, o in [0, dy.planes), pixels of
/// dy[n][co][o] * x[n][ci][o + d_offset + kd - r] (shifted by kh, kw; zero
/// outside). dw is [C_out][C_in][k][k][k].
void conv3d_backward_filter(const Conv3dGeometry& g, ConstPlaneView x, ConstPlaneView dy, float* dw,
                            int64_t d_offset, bool accumulate, float* workspace);

/// The data gradient as a forward convolution: convᵀ with d_offset, applied
/// to dy, equals conv with -d_offset applied to dy as the input, with
/// C_in and C_out swapped and the weights w'[ci][co][a][b][c] =
/// w[co][ci][k-1-a][k-1-b][k-1-c] (the adjoint of a cross-correlation is
/// the cross-correlation with the kernel flipped). Element `i` of w'
/// ([C_in][C_out][k][k][k], dense) is element conv3d_adjoint_source(...) of
/// w: one definition for the CPU and the CUDA flip.
PERFLAB_HOST_DEVICE inline int64_t conv3d_adjoint_source(int64_t i, int64_t c_in, int64_t c_out, int k) {
  const int64_t k3 = int64_t{k} * k * k;
  const int64_t spatial = i % k3, rest = i / k3;
  const int64_t co = rest % c_out, ci = rest / c_out;
  const int64_t a = spatial / (k * k), b = (spatial / k) % k, c = spatial % k;
  return (co * c_in + ci) * k3 + ((k - 1 - a) * k + (k - 1 - b)) * k + (k - 1 - c);
}

/// w' of conv3d_adjoint_source for all of `g`'s weights (out: C_in*C_out*k^3 floats).
void conv3d_adjoint_weights(const Conv3dGeometry& g, const float* w, float* out);

/// Multiply-adds of a full "same" convolution of D planes (2 FLOPs each):
/// N * C_out * C_in * k^3 * D * H * W.
double conv3d_macs(const Conv3dGeometry& g, int64_t planes);

}  // namespace perflab::kernels::cpu
