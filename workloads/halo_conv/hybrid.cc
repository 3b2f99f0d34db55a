#include "workloads/halo_conv/hybrid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "base/error.h"
#include "workloads/halo_conv/gate.h"

namespace perflab::halo_conv {

namespace kc = kernels::cpu;

namespace {

/// `level` at 1/`factor` of the resolution, `channels` in and out.
LayerConfig scaled(const LayerConfig& first, int64_t factor, int64_t channels) {
  LayerConfig c = first;
  c.depth = std::max<int64_t>(1, first.depth / factor);
  c.geometry.height = std::max<int64_t>(1, first.geometry.height / factor);
  c.geometry.width = std::max<int64_t>(1, first.geometry.width / factor);
  c.geometry.c_in = channels;
  c.geometry.c_out = channels;
  return c;
}

/// check_partitioning of one level, its message naming the level.
void check_level(const char* name, const LayerConfig& c, int ranks, int halo) {
  try {
    check_partitioning({c.depth, ranks, c.per_rank, halo});
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("scheme=hybrid, {}: {}", name, e.what()));
  }
}

int64_t whole_size(const LayerConfig& c, int64_t channels, int64_t planes) {
  return c.geometry.batch * channels * planes * c.geometry.height * c.geometry.width;
}

}  // namespace

HybridLevels hybrid_levels(const LayerConfig& first, int ranks) {
  HybridLevels out;
  out.level1 = first;
  out.level2 = scaled(first, 2, 2 * first.geometry.c_out);
  out.bottleneck = scaled(first, 4, 4 * first.geometry.c_out);
  check_level("level 2 (half resolution)", out.level2, ranks, first.geometry.k / 2);
  check_level("the bottleneck (quarter resolution)", out.bottleneck, ranks, 0);
  // Level 2's slabs are half as thick: overlap only where it can pay there too.
  if (out.level2.overlap) {
    out.level2.overlap = overlap_not_in_effect_reason({out.level2.depth, ranks, first.per_rank, first.geometry.k / 2},
                                                      first.geometry.k)
                             .empty();
  }
  return out;
}

double hybrid_macs(const HybridLevels& levels) {
  double macs = 0;
  for (const LayerConfig* c : {&levels.level1, &levels.level2, &levels.bottleneck}) {
    macs += kc::conv3d_macs(c->geometry, c->depth) * (c->backward ? 3 : 1);
  }
  return macs;
}

CpuHybridStep::CpuHybridStep(const HybridLevels& levels, collectives::Communicator& comm)
    : levels_(levels), comm_(comm), level1_(levels.level1, comm), level2_(levels.level2, comm) {
  const LayerConfig& b = levels_.bottleneck;
  const Partitioning p{b.depth, comm.size(), b.per_rank, 0};
  all_ = p.slabs();
  const auto first = static_cast<size_t>(comm.rank() * b.per_rank);
  mine_.assign(all_.begin() + static_cast<std::ptrdiff_t>(first),
               all_.begin() + static_cast<std::ptrdiff_t>(first) + b.per_rank);
  mine_first_ = mine_.front().first;
  for (const Slab& s : mine_) mine_planes_ += s.planes;
  for (int j = 0; j < b.per_rank; ++j) block_planes_ += all_[static_cast<size_t>(j)].planes;  // rank 0's: the most
  const int64_t c = b.geometry.c_in;
  x_local_.resize(static_cast<size_t>(whole_size(b, c, mine_planes_)));
  dy_local_.resize(x_local_.size());
  y_local_.resize(x_local_.size());
  dx_local_.resize(x_local_.size());
  for (auto* v : {&x_whole_, &y_whole_, &dy_whole_, &dx_whole_}) v->resize(static_cast<size_t>(whole_size(b, c, b.depth)));
  w_.resize(static_cast<size_t>(c * c * b.geometry.k * b.geometry.k * b.geometry.k));
  dw_.resize(w_.size());
  send_.resize(static_cast<size_t>(whole_size(b, c, block_planes_)));
  recv_.resize(send_.size() * static_cast<size_t>(comm.size()));
  workspace_.resize(kc::conv3d_workspace_floats(b.geometry));
}

void CpuHybridStep::fill(uint64_t seed) {
  level1_.fill(seed);
  level2_.fill(seed + 1);
  const LayerConfig& b = levels_.bottleneck;
  const kc::Conv3dGeometry& g = b.geometry;
  fill_planes(kc::dense_view(x_local_.data(), mine_planes_, g.c_in, g.height, g.width), input_shape(b), mine_first_,
              seed + 2, TensorTag::kInput, 1.0f);
  fill_planes(kc::dense_view(dy_local_.data(), mine_planes_, g.c_out, g.height, g.width), output_shape(b),
              mine_first_, seed + 2, TensorTag::kOutputGrad, 1.0f);
  fill_dense(w_.data(), static_cast<int64_t>(w_.size()), seed + 2, TensorTag::kWeight,
             1.0f / std::sqrt(static_cast<float>(g.c_in * g.k * g.k * g.k)));
}

void CpuHybridStep::step() {
  level1_.step();
  level2_.step();
  gather();
  bottleneck();
  split();
}

void CpuHybridStep::gather_tensor(const std::vector<float>& local, std::vector<float>& whole) {
  const LayerConfig& b = levels_.bottleneck;
  const int64_t rows = b.geometry.batch * b.geometry.c_in, hw = b.geometry.height * b.geometry.width;
  for (int64_t row = 0; row < rows; ++row) {
    std::memcpy(send_.data() + row * block_planes_ * hw, local.data() + row * mine_planes_ * hw,
                static_cast<size_t>(mine_planes_ * hw) * sizeof(float));
  }
  comm_.all_gather(send_.data(), recv_.data(), send_.size(), collectives::DataType::kFloat32);
  for (int q = 0; q < comm_.size(); ++q) {
    const Slab& first = all_[static_cast<size_t>(q * b.per_rank)];
    int64_t planes = 0;
    for (int j = 0; j < b.per_rank; ++j) planes += all_[static_cast<size_t>(q * b.per_rank + j)].planes;
    const float* block = recv_.data() + static_cast<size_t>(q) * send_.size();
    for (int64_t row = 0; row < rows; ++row) {
      std::memcpy(whole.data() + (row * b.depth + first.first) * hw, block + row * block_planes_ * hw,
                  static_cast<size_t>(planes * hw) * sizeof(float));
    }
  }
}

void CpuHybridStep::gather() {
  gather_tensor(x_local_, x_whole_);
  if (levels_.bottleneck.backward) gather_tensor(dy_local_, dy_whole_);
}

void CpuHybridStep::bottleneck() {
  const LayerConfig& b = levels_.bottleneck;
  const kc::Conv3dGeometry& g = b.geometry;
  const auto x = kc::dense_view(std::as_const(x_whole_).data(), b.depth, g.c_in, g.height, g.width);
  const auto dy = kc::dense_view(std::as_const(dy_whole_).data(), b.depth, g.c_out, g.height, g.width);
  kc::conv3d_forward(g, x, w_.data(), kc::dense_view(y_whole_.data(), b.depth, g.c_out, g.height, g.width), 0, false,
                     workspace_.data());
  if (!b.backward) return;
  kc::conv3d_backward_data(g, dy, w_.data(), kc::dense_view(dx_whole_.data(), b.depth, g.c_in, g.height, g.width), 0,
                           false, workspace_.data());
  kc::conv3d_backward_filter(g, x, dy, dw_.data(), 0, false, workspace_.data());
}

void CpuHybridStep::split() {
  const LayerConfig& b = levels_.bottleneck;
  const int64_t rows = b.geometry.batch * b.geometry.c_in, hw = b.geometry.height * b.geometry.width;
  const auto bytes = static_cast<size_t>(mine_planes_ * hw) * sizeof(float);
  for (int64_t row = 0; row < rows; ++row) {
    std::memcpy(y_local_.data() + row * mine_planes_ * hw, y_whole_.data() + (row * b.depth + mine_first_) * hw, bytes);
    if (b.backward) {
      std::memcpy(dx_local_.data() + row * mine_planes_ * hw, dx_whole_.data() + (row * b.depth + mine_first_) * hw,
                  bytes);
    }
  }
}

double CpuHybridStep::gather_bytes() const {
  const LayerConfig& b = levels_.bottleneck;
  const double received = static_cast<double>(whole_size(b, b.geometry.c_in, b.depth - mine_planes_)) * sizeof(float);
  return received * (b.backward ? 2 : 1);
}

CorrectnessReport CpuHybridStep::check(uint64_t seed) {
  const CorrectnessReport one = check_against_whole(slab_results(level1_), comm_, seed, kFp32Tolerance);
  const CorrectnessReport two = check_against_whole(slab_results(level2_), comm_, seed + 1, kFp32Tolerance);
  // The bottleneck: what every partition gathered is the whole volume, its
  // convolution is the whole one, and each partition kept its own planes.
  const LayerConfig& b = levels_.bottleneck;
  const kc::Conv3dGeometry& g = b.geometry;
  std::vector<float> x(x_whole_.size()), dy(dy_whole_.size()), y(y_whole_.size());
  fill_planes(kc::dense_view(x.data(), b.depth, g.c_in, g.height, g.width), input_shape(b), 0, seed + 2,
              TensorTag::kInput, 1.0f);
  fill_planes(kc::dense_view(dy.data(), b.depth, g.c_out, g.height, g.width), output_shape(b), 0, seed + 2,
              TensorTag::kOutputGrad, 1.0f);
  kc::conv3d_forward(g, kc::dense_view(std::as_const(x).data(), b.depth, g.c_in, g.height, g.width), w_.data(),
                     kc::dense_view(y.data(), b.depth, g.c_out, g.height, g.width), 0, false, workspace_.data());
  double wrong[3] = {0, 0, 0};
  wrong[0] = static_cast<double>(x != x_whole_) + static_cast<double>(b.backward && dy != dy_whole_);
  double scale = 0, diff = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(y[i])));
    diff = std::max(diff, static_cast<double>(std::abs(y[i] - y_whole_[i])));
  }
  wrong[1] = diff > kFp32Tolerance * scale ? 1 : 0;
  const int64_t hw = g.height * g.width;
  for (int64_t row = 0; row < g.batch * g.c_out; ++row) {
    wrong[2] += std::memcmp(y_local_.data() + row * mine_planes_ * hw, y_whole_.data() + (row * b.depth + mine_first_) * hw,
                            static_cast<size_t>(mine_planes_ * hw) * sizeof(float)) != 0;
  }
  comm_.all_reduce_host(wrong, 3, collectives::ReduceOp::kSum);
  std::string detail = fmt::format("level 1: {}; level 2: {}; bottleneck ({} planes, {} channels) gathered whole on "
                                   "every partition: ",
                                   one.detail, two.detail, b.depth, g.c_in);
  if (wrong[0] + wrong[1] + wrong[2] == 0) {
    detail += fmt::format("input and output gradient equal the whole volume's, output equals the whole "
                          "convolution (max |diff| {:.3g} of {:.3g}), each partition kept its planes",
                          diff, scale);
  } else {
    detail += fmt::format("{} rank(s) gathered a wrong volume, {} computed a wrong output, {} rows kept wrong "
                          "planes after the split",
                          wrong[0], wrong[1], wrong[2]);
  }
  return {one.passed && two.passed && wrong[0] + wrong[1] + wrong[2] == 0, detail};
}

}  // namespace perflab::halo_conv
