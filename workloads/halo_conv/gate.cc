#include "workloads/halo_conv/gate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "kernels/cpu/bf16.h"

namespace perflab::halo_conv {

namespace kc = kernels::cpu;

namespace {

/// Largest |a - b| and largest |b| of two tensors of `n` elements.
struct Deviation {
  double max_diff = 0;
  double max_ref = 0;
  void add(const float* got, const float* ref, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      max_diff = std::max(max_diff, static_cast<double>(std::abs(got[i] - ref[i])));
      max_ref = std::max(max_ref, static_cast<double>(std::abs(ref[i])));
    }
  }
  double relative() const { return max_ref > 0 ? max_diff / max_ref : max_diff; }
};

int64_t count_wrong(const float* got, const float* ref, size_t n, double limit) {
  int64_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += std::abs(got[i] - ref[i]) > limit ? 1 : 0;
  return wrong;
}

/// Planes [first, first + planes) of the whole tensor, as the layer drew
/// them (rounded to bf16 when it stores bf16).
std::vector<float> region(const VolumeShape& shape, int64_t first, int64_t planes, uint64_t seed, TensorTag tag,
                          bool bf16) {
  std::vector<float> out(static_cast<size_t>(shape.batch * shape.channels * planes * shape.height * shape.width));
  fill_planes(kc::dense_view(out.data(), planes, shape.channels, shape.height, shape.width), shape, first, seed, tag,
              1.0f);
  if (bf16) kc::round_to_bf16(static_cast<int64_t>(out.size()), out.data(), out.data());
  return out;
}

}  // namespace

SlabResults slab_results(const CpuHaloLayer& layer) {
  SlabResults out;
  out.config = &layer.config();
  out.slabs = layer.my_slabs();
  for (size_t j = 0; j < out.slabs.size(); ++j) {
    out.y.push_back(layer.output(j));
    if (layer.config().backward) out.dx.push_back(layer.input_grad(j));
  }
  out.w = layer.weights().data();
  out.dw = layer.config().backward ? layer.weight_grad().data() : nullptr;
  out.weights = layer.weights().size();
  return out;
}

CorrectnessReport check_against_whole(const SlabResults& got, collectives::Communicator& comm, uint64_t seed,
                                      double tolerance) {
  const LayerConfig& c = *got.config;
  const kc::Conv3dGeometry& g = c.geometry;
  const int64_t r = g.k / 2;
  const VolumeShape in = input_shape(c), out = output_shape(c);
  std::vector<float> workspace(kc::conv3d_workspace_floats(g));
  std::vector<std::vector<float>> y_ref, dx_ref;
  Deviation y_dev, dx_dev, dw_dev;
  for (size_t j = 0; j < got.slabs.size(); ++j) {
    const Slab s = got.slabs[j];
    const size_t ny = static_cast<size_t>(g.batch * g.c_out * s.planes * g.height * g.width);
    const size_t nx = static_cast<size_t>(g.batch * g.c_in * s.planes * g.height * g.width);
    // The whole volume's convolution at this slab's planes: its input
    // planes drawn straight from the seed (zero beyond the volume's ends).
    std::vector<float> x = region(in, s.first - r, s.planes + 2 * r, seed, TensorTag::kInput, c.bf16);
    y_ref.emplace_back(ny);
    kc::conv3d_forward(g, kc::dense_view(std::as_const(x).data(), s.planes + 2 * r, g.c_in, g.height, g.width),
                       got.w, kc::dense_view(y_ref.back().data(), s.planes, g.c_out, g.height, g.width),
                       r, false, workspace.data());
    y_dev.add(got.y[j].data, y_ref.back().data(), ny);
    if (!c.backward) continue;
    std::vector<float> dy = region(out, s.first - r, s.planes + 2 * r, seed, TensorTag::kOutputGrad, c.bf16);
    dx_ref.emplace_back(nx);
    kc::conv3d_backward_data(g, kc::dense_view(std::as_const(dy).data(), s.planes + 2 * r, g.c_out, g.height, g.width),
                             got.w,
                             kc::dense_view(dx_ref.back().data(), s.planes, g.c_in, g.height, g.width), -r, false,
                             workspace.data());
    dx_dev.add(got.dx[j].data, dx_ref.back().data(), nx);
  }
  std::vector<float> dw_ref;
  if (c.backward) {
    // The weight gradient of the whole volume at once.
    std::vector<float> x = region(in, 0, c.depth, seed, TensorTag::kInput, c.bf16);
    std::vector<float> dy = region(out, 0, c.depth, seed, TensorTag::kOutputGrad, c.bf16);
    dw_ref.resize(got.weights);
    kc::conv3d_backward_filter(g, kc::dense_view(std::as_const(x).data(), c.depth, g.c_in, g.height, g.width),
                               kc::dense_view(std::as_const(dy).data(), c.depth, g.c_out, g.height, g.width), dw_ref.data(), 0,
                               false, workspace.data());
    dw_dev.add(got.dw, dw_ref.data(), dw_ref.size());
  }
  double extremes[6] = {y_dev.max_diff, y_dev.max_ref, dx_dev.max_diff, dx_dev.max_ref, dw_dev.max_diff,
                        dw_dev.max_ref};
  comm.all_reduce_host(extremes, 6, collectives::ReduceOp::kMax);
  y_dev = {extremes[0], extremes[1]};
  dx_dev = {extremes[2], extremes[3]};
  dw_dev = {extremes[4], extremes[5]};
  double wrong[3] = {0, 0, 0};
  for (size_t j = 0; j < y_ref.size(); ++j) {
    wrong[0] += static_cast<double>(count_wrong(got.y[j].data, y_ref[j].data(), y_ref[j].size(),
                                                tolerance * y_dev.max_ref));
  }
  for (size_t j = 0; j < dx_ref.size(); ++j) {
    wrong[1] += static_cast<double>(count_wrong(got.dx[j].data, dx_ref[j].data(), dx_ref[j].size(),
                                                tolerance * dx_dev.max_ref));
  }
  if (comm.rank() == 0 && !dw_ref.empty()) {  // the same all-reduced dw on every rank
    wrong[2] = static_cast<double>(
        count_wrong(got.dw, dw_ref.data(), dw_ref.size(), tolerance * dw_dev.max_ref));
  }
  comm.all_reduce_host(wrong, 3, collectives::ReduceOp::kSum);
  const int partitions = comm.size() * c.per_rank;
  std::string detail = fmt::format("{} partition(s), halo={}: output max |diff| {:.3g} of max {:.3g}",
                                   partitions, c.overlap ? "overlap" : "naive", y_dev.max_diff, y_dev.max_ref);
  if (c.backward) {
    detail += fmt::format("; input gradient {:.3g} of {:.3g}; weight gradient {:.3g} of {:.3g}", dx_dev.max_diff,
                          dx_dev.max_ref, dw_dev.max_diff, dw_dev.max_ref);
  }
  const double total_wrong = wrong[0] + wrong[1] + wrong[2];
  if (total_wrong == 0) {
    return {true, detail + fmt::format(" (the unpartitioned convolution; tolerance {:g} x max)", tolerance)};
  }
  return {false, fmt::format("{} output, {} input-gradient and {} weight-gradient elements differ from the "
                             "unpartitioned convolution by more than {:g} x max: {}",
                             wrong[0], wrong[1], wrong[2], tolerance, detail)};
}

}  // namespace perflab::halo_conv
