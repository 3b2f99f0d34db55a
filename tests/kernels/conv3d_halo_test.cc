// The halo decompositions of workloads/halo_conv, proven on the CPU kernels
// (kernels/cpu/conv3d.h). A volume of D planes split along D into slabs
// [s, s+L) gives, slab by slab, the forward, data gradient and weight
// gradient of the whole volume, both from the slab padded with its
// neighbours' halo planes (naive variant) and from the slab alone (halo taken
// as zero) plus thin corrections computed from the halo planes only (overlap
// variant). Global plane ranges below; slab-local output ranges in brackets;
// r = k/2 and m = min(r, L):
//   forward  y[0,L)  = conv(x[s-r,s+L+r), d=+r)
//                    = conv(x[s,s+L), d=0) + conv(x[s-r,s) -> y[0,m), d=+r)
//                                          + conv(x[s+L,s+L+r) -> y[L-m,L), d=-m)
//   data     dx[0,L) = convT(dy[s-r,s+L+r), d=-r)
//                    = convT(dy[s,s+L), d=0) + convT(dy[s-r,s) -> dx[0,m), d=-r)
//                                            + convT(dy[s+L,s+L+r) -> dx[L-m,L), d=+m)
//   filter   dw = sum over slabs of dW(x[s-r,s+L+r), dy[s,s+L), d=+r)
//               = sum over slabs of dW(x[s,s+L), dy[s,s+L), d=0)
//                   + dW(x[s-r,s), dy[s,s+m), d=+r) + dW(x[s+L,s+L+r), dy[s+L-m,s+L), d=-m)
// For L >= r, m = r: the workload's offsets ±r on the slab's first and last
// r planes. For L < r (L = 1 included) the halo still needs r planes on each
// side, the corrections' output ranges clip to the whole slab [0, L), and the
// bottom correction's offset is then -L (forward, filter) or +L (data), not
// ∓r; whenever L < 2r the top and bottom corrections write overlapping planes,
// which accumulation makes right. Planes outside [0, D) are zero (the
// volume's ends): the global tensors hold r zero planes at each end, so
// every view below is a plane range of them, read in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "kernels/cpu/conv3d.h"
#include "tests/kernels/conv3d_support.h"
#include "base/random.h"

namespace perflab::kernels::cpu {
namespace {

constexpr int64_t kPlanes = 9;  ///< D: enough for slabs with halos on both sides at k = 7.

/// x and dy of a whole volume (zero-padded by r planes at each end), the
/// weights, and the full-volume results every decomposition must reproduce.
class Volume {
 public:
  explicit Volume(int k)
      : g_{2, 3, 5, 7, 9, k},
        r_(k / 2),
        x_(padded(g_.c_in, 1)),
        dy_(padded(g_.c_out, 2)),
        w_(test_support::random_vector(static_cast<size_t>(g_.c_out * g_.c_in * k * k * k), 3)),
        workspace_(conv3d_workspace_floats(g_)),
        y_full_(dense_size(g_.c_out, kPlanes)),
        dx_full_(dense_size(g_.c_in, kPlanes)),
        dw_full_(w_.size()) {
    conv3d_forward(g_, x(0, kPlanes), w(), out(y_full_, g_.c_out, kPlanes), 0, false, ws());
    conv3d_backward_data(g_, dy(0, kPlanes), w(), out(dx_full_, g_.c_in, kPlanes), 0, false, ws());
    conv3d_backward_filter(g_, x(0, kPlanes), dy(0, kPlanes), dw_full_.data(), 0, false, ws());
  }

  const Conv3dGeometry& g() const { return g_; }
  int64_t r() const { return r_; }
  const float* w() const { return w_.data(); }
  float* ws() { return workspace_.data(); }
  const std::vector<float>& dw_full() const { return dw_full_; }

  /// Global planes [first, first+count) of x or dy; first may be as low as -r.
  ConstPlaneView x(int64_t first, int64_t count) const { return global(x_, g_.c_in, first, count); }
  ConstPlaneView dy(int64_t first, int64_t count) const { return global(dy_, g_.c_out, first, count); }

  size_t dense_size(int64_t channels, int64_t planes) const {
    return static_cast<size_t>(g_.batch * channels * planes * g_.height * g_.width);
  }
  PlaneView out(std::vector<float>& v, int64_t channels, int64_t planes) const {
    return dense_view(v.data(), planes, channels, g_.height, g_.width);
  }
  /// Planes [s, s+L) of the full forward or data gradient, dense.
  std::vector<float> y_full(int64_t s, int64_t l) const { return slab(y_full_, g_.c_out, s, l); }
  std::vector<float> dx_full(int64_t s, int64_t l) const { return slab(dx_full_, g_.c_in, s, l); }

 private:
  /// Random [N][C][D+2r][H][W] with the r planes at each end zero.
  std::vector<float> padded(int64_t channels, uint32_t seed) const {
    std::vector<float> v = test_support::random_vector(dense_size(channels, kPlanes + 2 * r_), seed);
    const int64_t hw = g_.height * g_.width, stride = (kPlanes + 2 * r_) * hw;
    for (int64_t row = 0; row < g_.batch * channels; ++row) {
      std::fill_n(v.begin() + row * stride, r_ * hw, 0.0f);
      std::fill_n(v.begin() + row * stride + (r_ + kPlanes) * hw, r_ * hw, 0.0f);
    }
    return v;
  }
  ConstPlaneView global(const std::vector<float>& v, int64_t channels, int64_t first, int64_t count) const {
    const ConstPlaneView whole = dense_view(v.data(), kPlanes + 2 * r_, channels, g_.height, g_.width);
    return plane_range(whole, first + r_, count, g_.height, g_.width);
  }
  std::vector<float> slab(const std::vector<float>& full, int64_t channels, int64_t s, int64_t l) const {
    const int64_t hw = g_.height * g_.width;
    std::vector<float> out;
    for (int64_t row = 0; row < g_.batch * channels; ++row) {
      const auto begin = full.begin() + (row * kPlanes + s) * hw;
      out.insert(out.end(), begin, begin + l * hw);
    }
    return out;
  }

  Conv3dGeometry g_;
  int64_t r_;
  std::vector<float> x_, dy_, w_, workspace_, y_full_, dx_full_, dw_full_;
};

std::string slab_name(const Volume& v, int64_t s, int64_t l) {
  return "k=" + std::to_string(v.g().k) + " D=" + std::to_string(kPlanes) + " slab [" + std::to_string(s) +
         ", " + std::to_string(s + l) + ")";
}

std::array<int64_t, 5> dims(const Volume& v, int64_t channels, int64_t planes) {
  return {v.g().batch, channels, planes, v.g().height, v.g().width};
}

/// For every k and every slab [s, s+L) of the volume: the slab's planes of
/// the whole volume's result, `full(v, s, l)`, against `naive(v, s, l, m,
/// out)` and `overlap(v, s, l, m, out)`, each writing the slab's result into
/// `out` (dense, `channels(g)` channels, L planes).
template <typename Channels, typename Full, typename Slab>
void check_every_slab(const std::string& pass, Channels channels, Full full, Slab naive, Slab overlap) {
  for (int k : {1, 3, 5, 7}) {
    Volume v(k);
    const int64_t c = channels(v.g());
    for (int64_t l = 1; l <= kPlanes; ++l) {
      for (int64_t s = 0; s + l <= kPlanes; ++s) {
        const int64_t m = std::min(v.r(), l);
        const std::vector<float> expected = full(v, s, l);
        std::vector<float> padded(expected.size()), split(expected.size());
        naive(v, s, l, m, v.out(padded, c, l));
        overlap(v, s, l, m, v.out(split, c, l));
        expect_close(padded, expected, dims(v, c, l), "halo-padded " + pass + " " + slab_name(v, s, l));
        expect_close(split, expected, dims(v, c, l), "interior + corrections " + pass + " " + slab_name(v, s, l));
      }
    }
  }
}

TEST(Conv3dHaloTest, ForwardOfEverySlabMatchesTheWholeVolume) {
  using Slab = void (*)(Volume&, int64_t, int64_t, int64_t, PlaneView);
  const Slab naive = [](Volume& v, int64_t s, int64_t l, int64_t, PlaneView y) {
    conv3d_forward(v.g(), v.x(s - v.r(), l + 2 * v.r()), v.w(), y, v.r(), false, v.ws());
  };
  const Slab overlap = [](Volume& v, int64_t s, int64_t l, int64_t m, PlaneView y) {
    const Conv3dGeometry& g = v.g();
    conv3d_forward(g, v.x(s, l), v.w(), y, 0, false, v.ws());
    conv3d_forward(g, v.x(s - v.r(), v.r()), v.w(), plane_range(y, 0, m, g.height, g.width), v.r(), true, v.ws());
    conv3d_forward(g, v.x(s + l, v.r()), v.w(), plane_range(y, l - m, m, g.height, g.width), -m, true, v.ws());
  };
  check_every_slab(
      "forward", [](const Conv3dGeometry& g) { return g.c_out; },
      [](const Volume& v, int64_t s, int64_t l) { return v.y_full(s, l); }, naive, overlap);
}

TEST(Conv3dHaloTest, DataGradientOfEverySlabMatchesTheWholeVolume) {
  using Slab = void (*)(Volume&, int64_t, int64_t, int64_t, PlaneView);
  const Slab naive = [](Volume& v, int64_t s, int64_t l, int64_t, PlaneView dx) {
    conv3d_backward_data(v.g(), v.dy(s - v.r(), l + 2 * v.r()), v.w(), dx, -v.r(), false, v.ws());
  };
  const Slab overlap = [](Volume& v, int64_t s, int64_t l, int64_t m, PlaneView dx) {
    const Conv3dGeometry& g = v.g();
    conv3d_backward_data(g, v.dy(s, l), v.w(), dx, 0, false, v.ws());
    conv3d_backward_data(g, v.dy(s - v.r(), v.r()), v.w(), plane_range(dx, 0, m, g.height, g.width), -v.r(),
                         true, v.ws());
    conv3d_backward_data(g, v.dy(s + l, v.r()), v.w(), plane_range(dx, l - m, m, g.height, g.width), m, true,
                         v.ws());
  };
  check_every_slab(
      "data gradient", [](const Conv3dGeometry& g) { return g.c_in; },
      [](const Volume& v, int64_t s, int64_t l) { return v.dx_full(s, l); }, naive, overlap);
}

TEST(Conv3dHaloTest, WeightGradientSummedOverSlabsMatchesTheWholeVolume) {
  // Partitions of D = 9 planes: whole, single planes (L = 1 < r), thin and
  // thick slabs side by side.
  const std::vector<std::vector<int64_t>> partitions = {
      {9}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 3, 4}, {4, 1, 4}, {3, 3, 3}, {1, 2, 1, 5}};
  for (int k : {1, 3, 5, 7}) {
    Volume v(k);
    const Conv3dGeometry& g = v.g();
    const int64_t r = v.r();
    for (const auto& lengths : partitions) {
      std::vector<float> naive(v.dw_full().size(), 0.0f), overlap(naive.size(), 0.0f);
      std::string name = "k=" + std::to_string(k) + " slabs";
      int64_t s = 0;
      for (int64_t l : lengths) {
        const int64_t m = std::min(r, l);
        conv3d_backward_filter(g, v.x(s - r, l + 2 * r), v.dy(s, l), naive.data(), r, true, v.ws());
        conv3d_backward_filter(g, v.x(s, l), v.dy(s, l), overlap.data(), 0, true, v.ws());
        conv3d_backward_filter(g, v.x(s - r, r), v.dy(s, m), overlap.data(), r, true, v.ws());
        conv3d_backward_filter(g, v.x(s + l, r), v.dy(s + l - m, m), overlap.data(), -m, true, v.ws());
        name += " " + std::to_string(l);
        s += l;
      }
      const std::array<int64_t, 5> wdims{g.c_out, g.c_in, k, k, k};
      expect_close(naive, v.dw_full(), wdims, "halo-padded weight gradient " + name);
      expect_close(overlap, v.dw_full(), wdims, "interior + corrections weight gradient " + name);
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
