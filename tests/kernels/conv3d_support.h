// Shared by the conv3d tests (CPU and CUDA): views embedded in larger random
// buffers, and element-wise comparison with a tolerance per element that
// reports the count and the first mismatch in full (where, expected, actual,
// and the caller's problem description).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/conv3d.h"
#include "base/random.h"

namespace perflab::kernels::cpu {

/// "(a,b,c,d,e)" for a flat index into a dense 5-D array of extents `dims`.
inline std::string where(size_t index, const std::array<int64_t, 5>& dims) {
  std::array<int64_t, 5> at{};
  auto rest = static_cast<int64_t>(index);
  for (int i = 4; i >= 0; --i) {
    at[i] = rest % dims[i];
    rest /= dims[i];
  }
  return "(" + std::to_string(at[0]) + "," + std::to_string(at[1]) + "," + std::to_string(at[2]) + "," +
         std::to_string(at[3]) + "," + std::to_string(at[4]) + ")";
}

/// Expects |actual - expected| <= 1e-5 * (1 + scale) element by element,
/// where scale bounds the magnitude of the terms summed (so the tolerance is
/// fp32 rounding of that sum); reports the first mismatch in full.
inline void expect_close(const std::vector<float>& actual, const std::vector<double>& expected,
                  const std::vector<double>& scale, const std::array<int64_t, 5>& dims,
                  const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(std::fabs(actual[i] - expected[i]) <= 1e-5 * (1.0 + scale[i]))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad > 0) {
    ADD_FAILURE() << what << ": " << bad << " of " << actual.size() << " elements differ; first at "
                  << where(first, dims) << ": expected " << expected[first] << ", actual "
                  << actual[first];
  }
}

/// The same for two fp32 results of one sum in different orders: within
/// 1e-3 + 1e-4 * |expected|, far below any missing or extra term.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  const std::array<int64_t, 5>& dims, const std::string& what) {
  std::vector<double> e(expected.begin(), expected.end()), scale(expected.size());
  for (size_t i = 0; i < e.size(); ++i) scale[i] = 10.0 * std::fabs(e[i]) + 100.0;
  expect_close(actual, e, scale, dims, what);
}

/// A [N][C][planes][H][W] tensor seen through a view of a larger random
/// buffer: two planes before and one after the view in every channel, and
/// padding between channels and between batches, so a kernel that ignores a
/// stride or touches a neighbouring plane is caught. The same view can be
/// laid over another copy of the buffer (a device copy, or absolute values).
class Embedded {
 public:
  static constexpr int64_t kBefore = 2, kAfter = 1;
  /// `aligned`: strides of whole planes (no odd gap after each channel and
  /// batch), so with H*W a multiple of 8 every plane row starts on 16 bytes.
  Embedded(int64_t batch, int64_t channels, int64_t planes, int64_t hw, uint32_t seed, bool aligned = false)
      : channels_(channels),
        planes_(planes),
        hw_(hw),
        channel_stride_((planes + kBefore + kAfter) * hw + (aligned ? 0 : 5)),
        batch_stride_(channels * channel_stride_ + (aligned ? 0 : 7)),
        dense_size_(batch * channels * planes * hw),
        buffer_(test_support::random_vector(static_cast<size_t>(batch * batch_stride_), seed)) {}

  /// The view over `base`, a buffer laid out as buffer().
  /// (Any element type: the CUDA tests lay it over bf16 copies too.)
  template <typename T>
  BasicPlaneView<T> view_of(T* base) const {
    return {base + kBefore * hw_, planes_, channel_stride_, batch_stride_};
  }
  PlaneView view() { return view_of(buffer_.data()); }
  ConstPlaneView const_view() { return as_const(view()); }
  std::vector<float>& buffer() { return buffer_; }
  const std::vector<float>& buffer() const { return buffer_; }

  /// The view's elements of `buffer` (laid out as buffer()) as a dense
  /// [N][C][planes][H][W] array.
  std::vector<float> dense(const std::vector<float>& buffer) const {
    std::vector<float> out(static_cast<size_t>(dense_size_));
    for (int64_t i = 0; i < dense_size_; ++i) out[static_cast<size_t>(i)] = buffer[offset(i)];
    return out;
  }
  std::vector<float> dense() const { return dense(buffer_); }
  /// Elements outside the view that differ between `after` and `before`.
  int64_t changed_outside(const std::vector<float>& after, const std::vector<float>& before) const {
    std::vector<char> inside(after.size(), 0);
    for (int64_t i = 0; i < dense_size_; ++i) inside[offset(i)] = 1;
    int64_t changed = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      if (!inside[i] && after[i] != before[i]) ++changed;
    }
    return changed;
  }

 private:
  size_t offset(int64_t dense_index) const {
    const int64_t within = dense_index % (planes_ * hw_);
    const int64_t channel = dense_index / (planes_ * hw_);
    return static_cast<size_t>((channel / channels_) * batch_stride_ + (channel % channels_) * channel_stride_ +
                               kBefore * hw_ + within);
  }
  int64_t channels_, planes_, hw_, channel_stride_, batch_stride_, dense_size_;
  std::vector<float> buffer_;
};

}  // namespace perflab::kernels::cpu
