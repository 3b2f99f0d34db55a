#include "workloads/halo_conv/cpu_layer.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/bf16.h"

namespace perflab::halo_conv {

namespace kc = kernels::cpu;

namespace {

/// Copies `planes` planes of every (n, c) of `from` into `to` at plane
/// `at` (both views of the same batch and channel count).
void copy_planes(kc::ConstPlaneView from, kc::PlaneView to, int64_t batch, int64_t channels, int64_t hw) {
  const auto bytes = static_cast<size_t>(from.planes * hw) * sizeof(float);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      std::memcpy(to.data + n * to.batch_stride + c * to.channel_stride,
                  from.data + n * from.batch_stride + c * from.channel_stride, bytes);
    }
  }
}

/// Waits for the background task even when the calling thread's part
/// throws, so the task never outlives the buffers it works on.
class JoinOnExit {
 public:
  explicit JoinOnExit(BackgroundTask& task) : task_(task) {}
  ~JoinOnExit() {
    if (!joined_) {
      try {
        task_.wait();
      } catch (...) {  // the calling thread's error is the one reported
      }
    }
  }
  void join() {
    joined_ = true;
    task_.wait();
  }

 private:
  BackgroundTask& task_;
  bool joined_ = false;
};

}  // namespace

HaloField::HaloField(const kc::Conv3dGeometry& g, int64_t channels, const std::vector<Slab>& slabs,
                     int first_global, int total_slabs)
    : channels_(channels),
      hw_(g.height * g.width),
      r_(g.k / 2),
      batch_(g.batch),
      slabs_(slabs),
      first_global_(first_global),
      total_(total_slabs) {
  const auto halo = static_cast<size_t>(batch_ * channels_ * r_ * hw_);
  for (const Slab& s : slabs_) {
    padded_.emplace_back(static_cast<size_t>(batch_ * channels_ * (s.planes + 2 * r_) * hw_), 0.0f);
    top_.emplace_back(halo, 0.0f);
    bottom_.emplace_back(halo, 0.0f);
  }
  send_top_.assign(halo, 0.0f);
  send_bottom_.assign(halo, 0.0f);
}

kc::PlaneView HaloField::interior(size_t j) {
  const int64_t planes = slabs_[j].planes + 2 * r_;
  return {padded_[j].data() + r_ * hw_, slabs_[j].planes, planes * hw_, channels_ * planes * hw_};
}

kc::ConstPlaneView HaloField::padded(size_t j) const {
  return kc::dense_view(padded_[j].data(), slabs_[j].planes + 2 * r_, channels_, 1, hw_);
}

kc::ConstPlaneView HaloField::top(size_t j) const { return kc::dense_view(top_[j].data(), r_, channels_, 1, hw_); }

kc::ConstPlaneView HaloField::bottom(size_t j) const {
  return kc::dense_view(bottom_[j].data(), r_, channels_, 1, hw_);
}

void HaloField::pack(kc::ConstPlaneView from, std::vector<float>& to) const {
  copy_planes(from, kc::dense_view(to.data(), r_, channels_, 1, hw_), batch_, channels_, hw_);
}

void HaloField::exchange(collectives::Communicator& comm) {
  if (r_ == 0) return;
  const size_t last = slabs_.size() - 1;
  auto own = [&](size_t j, int64_t first) {
    return kc::plane_range(kc::as_const(interior(j)), first, r_, 1, hw_);
  };
  collectives::PeerTransfer transfers[2];
  size_t n = 0;
  if (has_top(0)) {
    pack(own(0, 0), send_top_);
    transfers[n++] = {comm.rank() - 1, send_top_.data(), top_[0].data(), top_[0].size()};
  }
  if (has_bottom(last)) {
    pack(own(last, slabs_[last].planes - r_), send_bottom_);
    transfers[n++] = {comm.rank() + 1, send_bottom_.data(), bottom_[last].data(), bottom_[last].size()};
  }
  for (size_t j = 0; j < slabs_.size(); ++j) {
    if (j > 0) pack(own(j - 1, slabs_[j - 1].planes - r_), top_[j]);
    if (j < last) pack(own(j + 1, 0), bottom_[j]);
  }
  if (n > 0) comm.send_recv(transfers, n, collectives::DataType::kFloat32);
}

void HaloField::unpack() {
  for (size_t j = 0; j < slabs_.size(); ++j) {
    const int64_t planes = slabs_[j].planes + 2 * r_;
    kc::PlaneView whole = kc::dense_view(padded_[j].data(), planes, channels_, 1, hw_);
    if (has_top(j)) copy_planes(top(j), kc::plane_range(whole, 0, r_, 1, hw_), batch_, channels_, hw_);
    if (has_bottom(j)) {
      copy_planes(bottom(j), kc::plane_range(whole, r_ + slabs_[j].planes, r_, 1, hw_), batch_, channels_, hw_);
    }
  }
}

double HaloField::halo_bytes() const {
  const int halos = halos_received(first_global_, static_cast<int>(slabs_.size()), total_);
  return halos * static_cast<double>(batch_ * channels_ * r_ * hw_) * sizeof(float);
}

VolumeShape input_shape(const LayerConfig& c) {
  return {c.geometry.batch, c.geometry.c_in, c.depth, c.geometry.height, c.geometry.width};
}
VolumeShape output_shape(const LayerConfig& c) {
  return {c.geometry.batch, c.geometry.c_out, c.depth, c.geometry.height, c.geometry.width};
}

namespace {

std::vector<Slab> slabs_of_rank(const LayerConfig& c, const collectives::Communicator& comm) {
  Partitioning p{c.depth, comm.size(), c.per_rank, c.geometry.k / 2};
  check_partitioning(p);
  const std::vector<Slab> all = p.slabs();
  const auto first = static_cast<size_t>(comm.rank() * c.per_rank);
  return {all.begin() + static_cast<std::ptrdiff_t>(first),
          all.begin() + static_cast<std::ptrdiff_t>(first) + c.per_rank};
}

}  // namespace

CpuHaloLayer::CpuHaloLayer(const LayerConfig& config, collectives::Communicator& comm)
    : config_(config),
      comm_(comm),
      r_(config.geometry.k / 2),
      hw_(config.geometry.height * config.geometry.width),
      mine_(slabs_of_rank(config, comm)),
      x_(config.geometry, config.geometry.c_in, mine_, comm.rank() * config.per_rank, comm.size() * config.per_rank),
      dy_(config.geometry, config.geometry.c_out, mine_, comm.rank() * config.per_rank,
          comm.size() * config.per_rank) {
  const kc::Conv3dGeometry& g = config_.geometry;
  kc::conv3d_check_geometry(g);
  for (const Slab& s : mine_) {
    y_.emplace_back(static_cast<size_t>(g.batch * g.c_out * s.planes * hw_), 0.0f);
    dx_.emplace_back(static_cast<size_t>(g.batch * g.c_in * s.planes * hw_), 0.0f);
  }
  const auto weights = static_cast<size_t>(g.c_out * g.c_in * g.k * g.k * g.k);
  w_.assign(weights, 0.0f);
  dw_.assign(weights, 0.0f);
  if (config_.bf16) slab_dw_.assign(weights, 0.0f);
  workspace_.assign(kc::conv3d_workspace_floats(g), 0.0f);
  if (config_.overlap) {
    worker_workspace_.assign(workspace_.size(), 0.0f);
    worker_ = std::make_unique<BackgroundTask>();
  }
}

void CpuHaloLayer::fill(uint64_t seed) {
  const kc::Conv3dGeometry& g = config_.geometry;
  for (size_t j = 0; j < mine_.size(); ++j) {
    fill_planes(x_.interior(j), input_shape(config_), mine_[j].first, seed, TensorTag::kInput, 1.0f);
    fill_planes(dy_.interior(j), output_shape(config_), mine_[j].first, seed, TensorTag::kOutputGrad, 1.0f);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.c_in * g.k * g.k * g.k));
  fill_dense(w_.data(), static_cast<int64_t>(w_.size()), seed, TensorTag::kWeight, scale);
  if (config_.bf16) {
    for (size_t j = 0; j < mine_.size(); ++j) {
      stored(x_.interior(j), g.c_in);
      stored(dy_.interior(j), g.c_out);
    }
    kc::round_to_bf16(static_cast<int64_t>(w_.size()), w_.data(), w_.data());
  }
}

void CpuHaloLayer::stored(kc::PlaneView v, int64_t channels) const {
  if (!config_.bf16) return;
  const int64_t run = v.planes * hw_;
  for (int64_t n = 0; n < config_.geometry.batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      float* row = v.data + n * v.batch_stride + c * v.channel_stride;
      kc::round_to_bf16(run, row, row);
    }
  }
}

float* CpuHaloLayer::slab_dw() { return config_.bf16 ? slab_dw_.data() : dw_.data(); }

bool CpuHaloLayer::slab_dw_accumulates(size_t j) const { return !config_.bf16 && j > 0; }

void CpuHaloLayer::slab_dw_stored() {
  if (config_.bf16) kc::round_to_bf16(static_cast<int64_t>(slab_dw_.size()), slab_dw_.data(), slab_dw_.data());
}

void CpuHaloLayer::slab_dw_done(size_t j) {
  if (!config_.bf16) return;
  for (size_t i = 0; i < dw_.size(); ++i) dw_[i] = (j > 0 ? dw_[i] : 0.0f) + slab_dw_[i];
}

kc::ConstPlaneView CpuHaloLayer::output(size_t j) const {
  return kc::dense_view(y_[j].data(), mine_[j].planes, config_.geometry.c_out, 1, hw_);
}

kc::ConstPlaneView CpuHaloLayer::input_grad(size_t j) const {
  return kc::dense_view(dx_[j].data(), mine_[j].planes, config_.geometry.c_in, 1, hw_);
}

double CpuHaloLayer::halo_bytes_per_step() const {
  return x_.halo_bytes() + (config_.backward ? dy_.halo_bytes() : 0.0);
}

void CpuHaloLayer::step() {
  forward();
  if (config_.backward) backward();
}

void CpuHaloLayer::forward() {
  if (config_.overlap) {
    forward_overlap();
  } else {
    forward_naive();
  }
}

void CpuHaloLayer::backward() {
  if (config_.overlap) {
    backward_overlap();
  } else {
    backward_naive();
  }
}

kc::PlaneView CpuHaloLayer::output_view(size_t j) {
  return kc::dense_view(y_[j].data(), mine_[j].planes, config_.geometry.c_out, 1, hw_);
}

kc::PlaneView CpuHaloLayer::input_grad_view(size_t j) {
  return kc::dense_view(dx_[j].data(), mine_[j].planes, config_.geometry.c_in, 1, hw_);
}

void CpuHaloLayer::forward_padded(float* ws) {
  for (size_t j = 0; j < mine_.size(); ++j) {
    kc::conv3d_forward(config_.geometry, x_.padded(j), w_.data(), output_view(j), r_, false, ws);
    stored(output_view(j), config_.geometry.c_out);
  }
}

void CpuHaloLayer::forward_interior(float* ws) {
  for (size_t j = 0; j < mine_.size(); ++j) {
    kc::conv3d_forward(config_.geometry, kc::as_const(x_.interior(j)), w_.data(), output_view(j), 0, false, ws);
    stored(output_view(j), config_.geometry.c_out);
  }
}

void CpuHaloLayer::forward_corrections(float* ws) {
  const kc::Conv3dGeometry& g = config_.geometry;
  for (size_t j = 0; j < mine_.size(); ++j) {
    const kc::PlaneView y = output_view(j);
    if (x_.has_top(j)) {
      const kc::PlaneView top = kc::plane_range(y, 0, r_, 1, hw_);
      kc::conv3d_forward(g, x_.top(j), w_.data(), top, r_, true, ws);
      stored(top, g.c_out);
    }
    if (x_.has_bottom(j)) {
      const kc::PlaneView bottom = kc::plane_range(y, mine_[j].planes - r_, r_, 1, hw_);
      kc::conv3d_forward(g, x_.bottom(j), w_.data(), bottom, -r_, true, ws);
      stored(bottom, g.c_out);
    }
  }
}

void CpuHaloLayer::backward_padded(float* ws) {
  const kc::Conv3dGeometry& g = config_.geometry;
  for (size_t j = 0; j < mine_.size(); ++j) {
    kc::conv3d_backward_data(g, dy_.padded(j), w_.data(), input_grad_view(j), -r_, false, ws);
    stored(input_grad_view(j), g.c_in);
    kc::conv3d_backward_filter(g, x_.padded(j), kc::as_const(dy_.interior(j)), slab_dw(), r_,
                               slab_dw_accumulates(j), ws);
    slab_dw_stored();
    slab_dw_done(j);
  }
}

void CpuHaloLayer::backward_interior(float* ws) {
  const kc::Conv3dGeometry& g = config_.geometry;
  for (size_t j = 0; j < mine_.size(); ++j) {
    const kc::ConstPlaneView dy = kc::as_const(dy_.interior(j));
    kc::conv3d_backward_data(g, dy, w_.data(), input_grad_view(j), 0, false, ws);
    stored(input_grad_view(j), g.c_in);
    kc::conv3d_backward_filter(g, kc::as_const(x_.interior(j)), dy, slab_dw(), 0, slab_dw_accumulates(j), ws);
    slab_dw_stored();
    // The input's halo arrived in the forward pass: its share of the weight gradient now.
    if (x_.has_top(j)) {
      kc::conv3d_backward_filter(g, x_.top(j), kc::plane_range(dy, 0, r_, 1, hw_), slab_dw(), r_, true, ws);
      slab_dw_stored();
    }
    if (x_.has_bottom(j)) {
      kc::conv3d_backward_filter(g, x_.bottom(j), kc::plane_range(dy, mine_[j].planes - r_, r_, 1, hw_), slab_dw(),
                                 -r_, true, ws);
      slab_dw_stored();
    }
    slab_dw_done(j);
  }
}

void CpuHaloLayer::backward_corrections(float* ws) {
  const kc::Conv3dGeometry& g = config_.geometry;
  for (size_t j = 0; j < mine_.size(); ++j) {
    const kc::PlaneView dx = input_grad_view(j);
    if (dy_.has_top(j)) {
      const kc::PlaneView top = kc::plane_range(dx, 0, r_, 1, hw_);
      kc::conv3d_backward_data(g, dy_.top(j), w_.data(), top, -r_, true, ws);
      stored(top, g.c_in);
    }
    if (dy_.has_bottom(j)) {
      const kc::PlaneView bottom = kc::plane_range(dx, mine_[j].planes - r_, r_, 1, hw_);
      kc::conv3d_backward_data(g, dy_.bottom(j), w_.data(), bottom, r_, true, ws);
      stored(bottom, g.c_in);
    }
  }
}

void CpuHaloLayer::forward_naive() {
  x_.exchange(comm_);
  x_.unpack();
  forward_padded(workspace_.data());
}

void CpuHaloLayer::forward_overlap() {
  worker_->start([this] { forward_interior(worker_workspace_.data()); });
  JoinOnExit join(*worker_);
  x_.exchange(comm_);
  join.join();
  forward_corrections(workspace_.data());
}

void CpuHaloLayer::backward_naive() {
  dy_.exchange(comm_);
  dy_.unpack();
  backward_padded(workspace_.data());
  all_reduce_alone();
}

void CpuHaloLayer::backward_overlap() {
  worker_->start([this] { backward_interior(worker_workspace_.data()); });
  JoinOnExit join(*worker_);
  dy_.exchange(comm_);
  join.join();
  backward_corrections(workspace_.data());
  all_reduce_alone();
}

void CpuHaloLayer::exchange_alone() {
  x_.exchange(comm_);
  if (config_.backward) dy_.exchange(comm_);
}

void CpuHaloLayer::compute_alone() {
  float* ws = workspace_.data();
  if (config_.overlap) {
    forward_interior(ws);
    forward_corrections(ws);
    if (config_.backward) {
      backward_interior(ws);
      backward_corrections(ws);
    }
  } else {
    forward_padded(ws);
    if (config_.backward) backward_padded(ws);
  }
}

void CpuHaloLayer::all_reduce_alone() {
  if (comm_.size() > 1) {
    comm_.all_reduce(dw_.data(), dw_.data(), dw_.size(), collectives::DataType::kFloat32,
                     collectives::ReduceOp::kSum);
  }
}

}  // namespace perflab::halo_conv
